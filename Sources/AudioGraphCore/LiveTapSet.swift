// The immutable set of live taps a kernel records into, and the plan command that swaps it.

/// The live taps on one kernel's output buses: immutable, built on a control thread, handed to
/// the render thread by a ``LiveTapChange`` in a render plan.
///
/// Thread safety: immutable after init; ``record(_:frameCount:sampleTime:)`` runs on the render thread.
final class LiveTapSet: @unchecked Sendable {
    let taps: [LiveTap]

    init(_ taps: [LiveTap]) { self.taps = taps }

    /// Copies what `kernel` just rendered (`frameCount` frames at `sampleTime`, the kernel's own
    /// timeline) into each tap's ring. Render thread. Real-time safe.
    @inline(__always)
    func record(_ kernel: NodeKernel, frameCount: Int, sampleTime: Int64) {
        var i = 0
        let count = taps.count
        while i < count {
            let t = taps[i]
            if t.bus < kernel.outputs.count {
                t.record(kernel.outputs[t.bus], frameCount: frameCount, sampleTime: sampleTime)
            }
            i += 1
        }
    }
}

/// A plan command's payload: give `kernel` a new tap set and let go of the taps in `detaching`.
/// Run once, on the render thread when it adopts the plan (or on the control thread when the
/// graph is not running). The set it replaces is kept in ``retired`` so that it is released with
/// the plan, on a control thread.
///
/// Thread safety: built on a control thread; `apply` runs once, wherever plan commands run.
final class LiveTapChange: @unchecked Sendable {
    let kernel: NodeKernel
    let set: LiveTapSet?
    let detaching: [LiveTap]
    /// The set the kernel used before (written by `apply`; released with the plan).
    private(set) var retired: LiveTapSet?

    init(kernel: NodeKernel, set: LiveTapSet?, detaching: [LiveTap]) {
        self.kernel = kernel
        self.set = set
        self.detaching = detaching
    }

    /// Swaps the kernel's set and marks removed taps detached. Real-time safe: the old set is
    /// moved here (no release to zero on the render thread), nothing is allocated.
    func apply() {
        retired = kernel.liveTapSet
        kernel.liveTapSet = set
        var i = 0
        while i < detaching.count {
            detaching[i].markDetached()
            i += 1
        }
    }
}
