// What may see the audio an OutputNode hands to PulseAudio, on the render thread (voice processing's far end).
import AudioGraphCore

/// Sees every slice an `OutputNode` hands to PulseAudio, on the render thread (the engine's
/// voice processing takes its far-end signal from it; see `OutputNode.playbackObserver`).
///
/// Thread safety: ``observePlayback(_:channelCount:frameCount:)`` is called on the render thread
/// only and must be real-time safe (no allocation, lock, I/O or waiting).
package protocol PlaybackObserver: AnyObject, Sendable {
    /// `channelCount` buffers of `frameCount` frames, as they go to the sink. Real-time safe.
    func observePlayback(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int)
}
