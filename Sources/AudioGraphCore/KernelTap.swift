// Recording what a node's output bus produces, every time it renders (offline taps).

/// Records every frame a kernel's output bus produces into a buffer the control side drains
/// between render calls — the mechanism behind graph-file `taps`. A node behind a rate-converting
/// input renders on its own timeline, possibly several times per slice; the tap sees each render.
///
/// Thread safety: `record` runs on the render thread; `drain` on the thread driving the render,
/// between render calls (offline rendering, where that is the same thread). Not for live use.
package final class KernelTap: @unchecked Sendable {
    /// The output bus recorded.
    package let bus: Int
    private let storage: ChannelBufferStorage
    /// Frames recorded since the last drain.
    package private(set) var frameCount = 0
    /// Frames that did not fit before a drain (0 unless a slice pulls the node unusually often).
    package private(set) var droppedFrames: Int64 = 0

    /// - Parameters:
    ///   - capacity: frames held between drains (several slices' worth for nodes pulled by a
    ///     rate converter).
    package init(bus: Int, channelCount: Int, capacity: Int) {
        self.bus = bus
        storage = ChannelBufferStorage(channelCount: channelCount, capacity: capacity)
    }

    /// Appends `frames` frames of `buffer`. Real-time safe.
    func record(_ buffer: ChannelBufferList, frames: Int) {
        let n = min(frames, storage.list.capacity - frameCount)
        if n < frames { droppedFrames += Int64(frames - n) }
        guard n > 0 else { return }
        for c in 0..<min(buffer.channelCount, storage.list.channelCount) {
            (storage.list.channel(c) + frameCount).update(from: buffer.channel(c), count: n)
        }
        frameCount += n
    }

    /// Hands the recorded frames to `body` (a view valid during the call) and empties the tap.
    package func drain<E: Error>(_ body: (ChannelBufferList, Int) throws(E) -> Void) throws(E) {
        defer { frameCount = 0 }
        if frameCount > 0 { try body(storage.list, frameCount) }
    }
}

extension NodeKernel {
    /// Attaches a tap (offline rendering: call between render calls, on the rendering thread).
    package final func attachTap(_ tap: KernelTap) {
        taps.append(tap)
    }

    @inline(__always)
    final func recordTaps(frameCount: Int) {
        var i = 0
        while i < taps.count {
            let t = taps[i]
            if t.bus < outputs.count { t.record(outputs[t.bus], frames: frameCount) }
            i += 1
        }
    }
}
