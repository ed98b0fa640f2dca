// A sound meter: the input node's tap prints RMS and peak of every 100 ms (as on Apple's platforms).
import AudioGraphKit

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 5 : 5
let engine = AudioEngine()
let input = engine.inputNode
let format = input.outputFormat(forBus: 0)
// The tap runs on another thread: in the Swift 6 language mode a block written in main-actor code
// (top-level code here) says so with @Sendable, or the runtime's isolation check stops the program.
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
