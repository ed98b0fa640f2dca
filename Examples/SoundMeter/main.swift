// A sound meter: the input node's tap prints RMS and peak of every 100 ms (as on Apple's platforms).
// The tap block runs on another thread: in the Swift 6 language mode it is marked @Sendable, or the
// main actor's isolation check stops the program at its first call (on Apple's platforms too).
import AudioGraphKit

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 5 : 5
let engine = AudioEngine()
let input = engine.inputNode
let format = input.outputFormat(forBus: 0)
input.installTap(onBus: 0, bufferSize: AudioFrameCount(format.sampleRate / 10), format: format) { @Sendable buffer, _ in
    let samples = UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
    let rms = sqrt(samples.reduce(0) { $0 + $1 * $1 } / Float(max(1, samples.count)))
    let peak = samples.reduce(0) { max($0, abs($1)) }
    print(String(format: "rms %6.1f dBFS  peak %6.1f dBFS", 20 * log10(max(rms, 1e-9)), 20 * log10(max(peak, 1e-9))))
}
try engine.start()
Thread.sleep(forTimeInterval: seconds)
input.removeTap(onBus: 0)
engine.stop()
