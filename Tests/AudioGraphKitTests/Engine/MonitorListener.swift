// A test helper that listens to a PulseAudio source (a null sink's monitor) and notes when sound arrives.
import AudioGraphKit
import Foundation
import Synchronization

/// Captures a source (normally the test sink's monitor) at 5 ms latency on a thread of its own
/// that reads every millisecond, keeps every captured left-channel sample, and notes the host
/// time at which each block arrived, so a test can tell when a sound was first heard (the
/// arrival time minus the capture's own latency, at most ~6 ms).
///
/// Thread safety: `start`/`stop` and the accessors on the test thread; the reader thread fills
/// the buffers under a lock of its own.
final class MonitorListener: @unchecked Sendable {
    let context: PulseContext
    let capture: PulseCaptureStream
    private let lock = NSLock()
    private var samples: [Float] = []
    /// (frame index of a block's first frame, host time the block arrived), one per read.
    private var arrivals: [(frame: Int, host: UInt64)] = []
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?

    init(server: String, source: String) throws {
        context = try PulseContext(server: server)
        capture = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
            device: source, latencyMilliseconds: 5, maximumFramesPerSlice: 4096))
        try capture.start()
        capture.setBacklogLimit(frames: 96_000)
        let t = Thread { [unowned self] in self.readLoop() }
        thread = t
        t.start()
    }

    private func readLoop() {
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 4096), right = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { left.deallocate(); right.deallocate() }
        var pointers = [left, right]
        while !stopping.load(ordering: .acquiring) {
            let n = min(capture.readableFrames, 4096)
            if n > 0 {
                let got = pointers.withUnsafeMutableBufferPointer { capture.read(frameCount: n, into: UnsafePointer($0.baseAddress!)) }
                let now = AudioTime.currentHostTime
                lock.lock()
                arrivals.append((samples.count, now))
                samples += UnsafeBufferPointer(start: left, count: got)
                lock.unlock()
            }
            usleep(1000)
        }
    }

    /// The host time (ns) at which the first sample whose magnitude exceeds `threshold` arrived
    /// at or after frame `from`, nil if none yet.
    func firstSoundHostTime(threshold: Float = 0, from: Int = 0) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        guard let index = samples.indices.dropFirst(from).first(where: { abs(samples[$0]) > threshold }) else { return nil }
        let block = arrivals.last { $0.frame <= index }
        return block?.host
    }

    /// Everything captured so far (left channel).
    var captured: [Float] {
        lock.lock()
        defer { lock.unlock() }
        return samples
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        while thread != nil && !(thread!.isFinished) { usleep(1000) }
        thread = nil
        capture.stop()
        context.close()
    }
}
