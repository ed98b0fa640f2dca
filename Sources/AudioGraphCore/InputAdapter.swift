// Implicit conversion of one input bus (the sample rate, for mixers and environments).

/// Converts what one input bus receives before its node sees it — the implicit per-input rate
/// conversion of mixers and environments. The adapter pulls its source on the source's own
/// timeline, as many frames as it needs, and returns exactly the slice its node asked for.
///
/// Subclasses (in the nodes module, with libsamplerate) override ``pull(context:upstream:)``.
/// Thread safety: created on a control thread; then render thread only.
open class InputAdapter: @unchecked Sendable {
    public init() {}

    /// Returns `context.frameCount` converted frames, pulling the source through `upstream`.
    /// Real-time safe.
    open func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        fatalError("InputAdapter.pull must be overridden")
    }

    /// Called on the render thread when the connection starts carrying audio, with the frame
    /// of the source's timeline to continue from. Real-time safe.
    open func start(atUpstreamSampleTime sampleTime: Int64) {}
}

/// The source of an adapted input: renders it (once per slice of its own timeline).
///
/// Thread safety: render thread only, during the render call.
public struct UpstreamSource {
    unowned(unsafe) let plan: RenderPlan
    let entry: Int
    let bus: Int
    /// The source's rate.
    public let sampleRate: Double

    /// Renders `frameCount` frames of the source starting at `sampleTime` (its own timeline).
    /// Real-time safe.
    @inline(__always)
    public func pull(sampleTime: Int64, frameCount: Int) -> InputBuffer {
        let context = RenderContext(sampleTime: sampleTime, frameCount: frameCount, sampleRate: sampleRate)
        plan.renderEntry(entry, context)
        let k = plan.entries[entry].kernel
        return InputBuffer(buffer: k.outputs[bus], isSilent: k.outputIsSilent[bus])
    }
}
