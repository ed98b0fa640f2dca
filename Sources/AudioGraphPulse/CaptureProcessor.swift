// What may process the captured audio in place on the render thread (the engine's voice processing).
import AudioGraphCore

/// Processes an `InputNode`'s captured audio in place, on the render thread, right after the
/// capture is read (the engine's voice processing; see `InputNode.captureProcessor`).
///
/// Thread safety: ``processCapture(_:frameCount:)`` is called on the render thread only and
/// must be real-time safe (no allocation, lock, I/O or waiting).
package protocol CaptureProcessor: AnyObject, Sendable {
    /// Processes `frameCount` frames of `buffer` (the input node's output bus) in place. Real-time safe.
    func processCapture(_ buffer: ChannelBufferList, frameCount: Int)
}
