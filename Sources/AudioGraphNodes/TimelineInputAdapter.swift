// An input bus pulled on its source's own timeline, as many frames as its node asks for (timePitch).

/// Passes one input bus through unchanged but on the source's own timeline: each pull returns
/// the next `context.frameCount` frames of the source, whatever the graph's frame is. A node
/// that consumes its input faster or slower than it produces output (``TimePitchNode``) asks for
/// exactly the frames it needs with `RenderInputs.pull(_:frameCount:)`; the source is rendered
/// in those pieces, once each (its own slices are at most the graph's maximum slice).
///
/// Thread safety: created on a control thread; `pull` and `start` on the render thread only.
final class TimelineInputAdapter: InputAdapter, @unchecked Sendable {
    // MARK: Render thread only
    /// The next frame of the source's timeline to pull.
    private(set) var upstreamTime: Int64 = 0

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        let input = upstream.pull(sampleTime: upstreamTime, frameCount: context.frameCount)
        upstreamTime += Int64(context.frameCount)
        return input
    }
}
