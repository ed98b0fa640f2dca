// The EBU loudness test signals (sine segments at stated peak levels) the meter and CLI tests both use.
import Foundation

/// Test signals from EBU Tech 3341/3342: a sine continuous in phase across segments of stated
/// peak level and length.
///
/// Thread safety: stateless; call from any thread.
public enum EBUTestSignals {
    /// A sine of `frequency` on every channel, continuous in phase across segments of (peak dBFS,
    /// seconds): the EBU test signals ("-23 dBFS" is the sine's peak amplitude).
    public static func sineSegments(_ segments: [(dbfs: Double, seconds: Double)], channels: Int = 2,
                                    frequency: Double = 1000, phase: Double = 0, rate: Double = 48000) -> [[Float]] {
        var x: [Float] = []
        var n = 0
        for s in segments {
            let amplitude = pow(10, s.dbfs / 20)
            for _ in 0..<Int((s.seconds * rate).rounded()) {
                x.append(Float(amplitude * sin(2 * .pi * frequency * Double(n) / rate + phase)))
                n += 1
            }
        }
        return Array(repeating: x, count: channels)
    }
}
