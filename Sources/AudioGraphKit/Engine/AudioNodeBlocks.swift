// The block types of AVFAudio's engine, declared as Apple's SDK declares them (no @Sendable), and their threading contract.
import Foundation

// Apple's AVFAudio Swift interface declares these block types without `@Sendable` (the
// parameters that take them are `@escaping`): a program may capture non-Sendable state in them
// and compiles in the Swift 6 language mode without diagnostics that Apple's SDK would not also
// give. The engine does not enforce a threading contract that Apple does not; it documents it:
//
// | block | called on | may |
// | --- | --- | --- |
// | ``AudioNodeTapBlock`` | the engine's tap thread (never the render thread), one call at a time per tap | anything, including calling the engine |
// | ``AudioSourceNodeRenderBlock`` | the render thread, once per slice | no allocation, lock, wait or I/O |
// | ``AudioSinkNodeReceiverBlock`` | the render thread, once per slice | no allocation, lock, wait or I/O |
// | ``AudioIONodeInputBlock`` | the thread that renders manually, once per slice | no allocation, lock, wait or I/O (on `.realtime`) |
// | ``AudioNodeCompletionHandler`` / ``AudioPlayerNodeCompletionHandler`` | the engine's notifier thread, one at a time, in scheduling order | anything, including scheduling more |
// | ``AudioConverterInputBlock`` | the thread that called `convert`, before it returns | anything but calling the same converter |
//
// State a block shares with other threads (the UI's, say) needs the program's own
// synchronization — an atomic, a lock, a queue — as on Apple's platforms, where these blocks
// also run on threads other than the main thread.
//
// In the Swift 6 language mode a block written in main-actor code inherits the main actor, and
// the runtime's isolation check stops the program when the engine calls it on its thread — as
// it does with AVFAudio. Such code writes `{ @Sendable buffer, when in ... }`.

/// Receives copies of a node's output, as `AVAudioNodeTapBlock`: the buffer and the time of its
/// first frame. Runs on the engine's tap thread, one call at a time per tap.
public typealias AudioNodeTapBlock = (AudioPCMBuffer, AudioTime) -> Void

/// Supplies a source node's audio, as `AVAudioSourceNodeRenderBlock`: fill `outputData` with
/// `frameCount` frames, optionally set `isSilence`, return `noErr`. Runs on the render thread.
public typealias AudioSourceNodeRenderBlock = (_ isSilence: UnsafeMutablePointer<ObjCBool>,
                                               _ timestamp: UnsafePointer<AudioTimeStamp>,
                                               _ frameCount: AudioFrameCount,
                                               _ outputData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus

/// Receives a sink node's input, as `AVAudioSinkNodeReceiverBlock`. Runs on the render thread.
public typealias AudioSinkNodeReceiverBlock = (_ timestamp: UnsafePointer<AudioTimeStamp>,
                                               _ frameCount: AudioFrameCount,
                                               _ inputData: UnsafePointer<AudioBufferList>) -> OSStatus

/// Supplies the input node's audio in manual rendering mode, as `AVAudioIONodeInputBlock`:
/// return a buffer list holding `frameCount` frames in the format given to
/// ``AudioInputNode/setManualRenderingInputPCMFormat(_:inputBlock:)`` (it must stay valid
/// until the next call), or nil for none (the input renders silence). Runs on the thread that
/// renders (the render thread), once per slice.
public typealias AudioIONodeInputBlock = (_ frameCount: AudioFrameCount) -> UnsafePointer<AudioBufferList>?

/// A completion callback, as `AVAudioNodeCompletionHandler` (the player's `.dataConsumed`).
/// Runs on the engine's notifier thread.
public typealias AudioNodeCompletionHandler = () -> Void

/// A player's completion callback with its type, as `AVAudioPlayerNodeCompletionHandler`.
/// Runs on the engine's notifier thread.
public typealias AudioPlayerNodeCompletionHandler = (AudioPlayerNodeCompletionCallbackType) -> Void

/// Carries a value that is not `Sendable` (an application's block) to the thread the engine
/// calls it on. The engine hands each block to exactly one thread for calling (see the table
/// above), which is the contract Apple's engine keeps too.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
