// Testing a graph: render a low-pass EQ offline at two frequencies and check its response (exit 1 if off).
import AudioGraphKit

/// The RMS level in dB of `frequency` Hz through a 1 kHz low-pass EQ, rendered offline.
func levelThroughLowPass(frequency: Double) throws -> Double {
    let engine = AudioEngine()
    let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
    try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4800)
    final class Phase: @unchecked Sendable { var n = 0.0 }
    let phase = Phase()
    let tone = AudioSourceNode(format: format) { _, _, frameCount, data in
        let out = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
        for i in 0..<Int(frameCount) {
            out[i] = Float(0.5 * sin(2 * Double.pi * frequency * phase.n / 48000))
            phase.n += 1
        }
        return noErr
    }
    let eq = AudioUnitEQ(numberOfBands: 1)
    eq.bands[0].filterType = .lowPass
    eq.bands[0].frequency = 1000
    eq.bands[0].bypass = false
    engine.attach(tone)
    engine.attach(eq)
    engine.connect(tone, to: eq, format: format)
    engine.connect(eq, to: engine.mainMixerNode, format: format)
    try engine.start()
    let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: 4800)!
    var sum = 0.0, count = 0
    for block in 0..<10 {
        _ = try engine.renderOffline(4800, to: buffer)
        guard block >= 2 else { continue }  // past the filter's settling
        for i in 0..<Int(buffer.frameLength) { sum += Double(buffer.floatChannelData![0][i] * buffer.floatChannelData![0][i]) }
        count += Int(buffer.frameLength)
    }
    return 10 * log10(sum / Double(count)) - 10 * log10(0.125)
}

let pass = try levelThroughLowPass(frequency: 100), stop = try levelThroughLowPass(frequency: 8000)
print(String(format: "100 Hz: %.2f dB, 8 kHz: %.2f dB", pass, stop))
let ok = abs(pass) < 0.1 && stop < -30
print(ok ? "PASS" : "FAIL")
exit(ok ? 0 : 1)
