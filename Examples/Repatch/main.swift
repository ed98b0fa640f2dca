// Live re-patching: a synth plays through a delay, then is moved onto a low-pass EQ while the engine runs.
import AudioGraphKit

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 1 : 1

final class Voice: @unchecked Sendable {
    var phase = 0.0
}

let engine = AudioEngine()
let voice = Voice()
let rate = engine.outputNode.outputFormat(forBus: 0).sampleRate
let synth = AudioSourceNode(format: AudioFormat(standardFormatWithSampleRate: rate, channels: 1)!) { _, _, frameCount, data in
    let out = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
    for i in 0..<Int(frameCount) {
        out[i] = voice.phase < Double.pi ? 0.2 : -0.2
        voice.phase = (voice.phase + 2 * Double.pi * 220 / rate).truncatingRemainder(dividingBy: 2 * Double.pi)
    }
    return noErr
}
let delay = AudioUnitDelay()
delay.delayTime = 0.25
delay.wetDryMix = 50
let eq = AudioUnitEQ(numberOfBands: 1)
eq.bands[0].filterType = .lowPass
eq.bands[0].frequency = 500
eq.bands[0].bypass = false
[synth, delay, eq].forEach(engine.attach)
engine.connect(synth, to: delay, format: nil)
engine.connect(delay, to: engine.mainMixerNode, format: nil)
try engine.start()
Thread.sleep(forTimeInterval: seconds)
// One change list: the synth leaves the delay and reaches the mixer through the EQ at one slice boundary.
try engine.performChanges {
    engine.disconnectNodeOutput(delay)
    engine.connect(synth, to: eq, format: nil)
    engine.connect(eq, to: engine.mainMixerNode, format: nil)
}
print("re-patched at frame \(engine.mainMixerNode.lastRenderTime?.sampleTime ?? 0)")
Thread.sleep(forTimeInterval: seconds)
engine.stop()
