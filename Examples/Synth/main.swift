// A synth voice in a source node, rendered offline to a file (manual rendering) and then played live.
import AudioGraphKit

let arguments = CommandLine.arguments
let seconds = Double(arguments[2]) ?? 1

/// The voice's state: touched only by the render block (render thread).
final class Voice: @unchecked Sendable {
    var phase = 0.0
}

func makeSynth(sampleRate: Double) -> AudioSourceNode {
    let voice = Voice()
    let format = AudioFormat(standardFormatWithSampleRate: sampleRate, channels: 1)!
    return AudioSourceNode(format: format) { _, _, frameCount, data in
        let out = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
        for i in 0..<Int(frameCount) {
            out[i] = Float(0.25 * sin(voice.phase))
            voice.phase += 2 * Double.pi * 440 / sampleRate
        }
        return noErr
    }
}

// Offline: as fast as possible, into a file.
let offline = AudioEngine()
let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
try offline.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4096)
let synth = makeSynth(sampleRate: 48000)
offline.attach(synth)
offline.connect(synth, to: offline.mainMixerNode, format: nil)
try offline.start()
let file = try AudioFile(forWriting: URL(fileURLWithPath: arguments[1]), settings: format.settings)
let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: 4096)!
let total = AudioFramePosition(seconds * 48000)
while offline.manualRenderingSampleTime < total {
    let frames = AudioFrameCount(min(4096, total - offline.manualRenderingSampleTime))
    guard try offline.renderOffline(frames, to: buffer) == .success else { break }
    try file.write(from: buffer)
}
offline.stop()
print("rendered \(total) frames")

// Live: the same voice at the output's rate.
let live = AudioEngine()
let liveSynth = makeSynth(sampleRate: live.outputNode.outputFormat(forBus: 0).sampleRate)
live.attach(liveSynth)
live.connect(liveSynth, to: live.mainMixerNode, format: nil)
try live.start()
Thread.sleep(forTimeInterval: seconds)
live.stop()
print("played \(seconds) s")
