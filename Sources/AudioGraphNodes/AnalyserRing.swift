// The lock-free ring through which an analyser's render thread publishes its latest frames.
import Synchronization

/// A single-writer ring of the mono frames an ``AnalyserNode`` has seen, read as a seqlock.
///
/// The render thread writes each slice's frames (``write(_:frameCount:)``, the channels'
/// mean) and then publishes the new frame count with a releasing store. A reader copies the
/// last `count` frames (``snapshot(into:count:)``) and checks afterwards, against the count
/// published then, that the writer cannot have overwritten any frame it copied; if it may have,
/// it copies again. The ring holds at least twice `fftSize + maximumFramesPerSlice` frames, so a
/// reader only retries when it was preempted for about an fftSize's worth of audio.
///
/// Thread safety: ``write(_:frameCount:)`` is called by one render thread only and is real-time
/// safe (no allocation, no lock, no wait). ``snapshot(into:count:)`` may be called from any
/// number of other threads at once; it never blocks the writer and only spins (retries the copy)
/// while the writer overtakes it. The copied floats race benignly with the writer: a torn copy
/// is detected by the count check and thrown away.
final class AnalyserRing: @unchecked Sendable {
    // MARK: Fixed at creation
    /// Frames the ring holds (a power of two).
    let capacity: Int
    private let mask: Int
    /// The largest slice the writer writes at once.
    let maximumFramesPerSlice: Int
    private let storage: UnsafeMutablePointer<Float>

    // MARK: Render thread only
    private var renderWritten: UInt64 = 0

    // MARK: Shared (atomic)
    /// Frames written and published so far (releasing store by the writer, acquiring loads by readers).
    private let published = Atomic<UInt64>(0)

    /// A zeroed ring for snapshots of up to `maximumSnapshot` frames from slices of up to
    /// `maximumFramesPerSlice` frames.
    init(maximumSnapshot: Int, maximumFramesPerSlice: Int) {
        var size = 1
        while size < 2 * (maximumSnapshot + maximumFramesPerSlice) { size <<= 1 }
        capacity = size
        mask = size - 1
        self.maximumFramesPerSlice = maximumFramesPerSlice
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Appends the mean of `channels` over `frameCount` frames (zeros when `channels` is nil).
    /// Render thread only; real-time safe.
    @inline(__always)
    func write(_ channels: ChannelBufferList?, frameCount n: Int) {
        let start = Int(truncatingIfNeeded: renderWritten)
        if let channels, channels.channelCount > 0 {
            let count = channels.channelCount
            let scale = 1 / Float(count)
            let first = channels.channel(0)
            if count == 1 {
                for i in 0..<n { storage[(start + i) & mask] = first[i] }
            } else {
                for i in 0..<n {
                    var sum = first[i]
                    for c in 1..<count { sum += channels.channel(c)[i] }
                    storage[(start + i) & mask] = sum * scale
                }
            }
        } else {
            for i in 0..<n { storage[(start + i) & mask] = 0 }
        }
        renderWritten &+= UInt64(n)
        published.store(renderWritten, ordering: .releasing)
    }

    /// Copies the last `count` frames written (oldest first; zeros before the first frame) into
    /// `destination` and returns the frame count they end at. Any thread but the writer's.
    func snapshot(into destination: UnsafeMutablePointer<Float>, count: Int) -> UInt64 {
        precondition(count + maximumFramesPerSlice <= capacity / 2, "snapshot larger than the ring was made for")
        while true {
            let end = published.load(ordering: .acquiring)
            let start = Int(truncatingIfNeeded: end) &- count
            for i in 0..<count { destination[i] = storage[(start &+ i) & mask] }
            atomicMemoryFence(ordering: .acquiring)
            let now = published.load(ordering: .relaxed)
            // The writer may be writing frames now..<now + slice; the first frame copied is
            // overwritten by frame `end - count + capacity`.
            if now &+ UInt64(maximumFramesPerSlice) &- end &+ UInt64(count) <= UInt64(capacity) { return end }
        }
    }
}
