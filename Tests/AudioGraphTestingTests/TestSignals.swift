// Deterministic synthetic signals shared by the AudioGraphTesting helper tests.
import Foundation

enum TestSignals {
    /// offset + amplitude·sin(2π·f·n/sr + phase) for n in 0..<count.
    static func sine(frequency: Double, amplitude: Double, sampleRate: Double, count: Int,
                     phase: Double = 0, offset: Double = 0) -> [Double] {
        (0..<count).map { offset + amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate + phase) }
    }

    /// Uniform noise in −1...1 from the LCG state = (1103515245·state + 12345) mod 2^31, exactly as
    /// scripts/reference/tone_fit_reference.py computes it.
    static func lcgNoise(count: Int, seed: Int = 12345) -> [Double] {
        var state = seed
        return (0..<count).map { _ in
            state = (1_103_515_245 * state + 12345) % 2_147_483_648
            return Double(state) / 2_147_483_648 * 2 - 1
        }
    }
}
