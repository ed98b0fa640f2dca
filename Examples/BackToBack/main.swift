// Two files back to back, gaplessly, with completion handlers: "consumed" for the first, "played back" for the second.
import AudioGraphKit

let arguments = CommandLine.arguments
let engine = AudioEngine()
let player = AudioPlayerNode()
let first = try AudioFile(forReading: URL(fileURLWithPath: arguments[1]))
let second = try AudioFile(forReading: URL(fileURLWithPath: arguments[2]))
engine.attach(player)
engine.connect(player, to: engine.mainMixerNode, format: first.processingFormat)
let done = DispatchSemaphore(value: 0)
player.scheduleFile(first, at: nil) {
    print("first consumed")
}
player.scheduleFile(second, at: nil, completionCallbackType: .dataPlayedBack) { _ in
    print("second played back")
    done.signal()
}
try engine.start()
player.play()
done.wait()
engine.stop()
