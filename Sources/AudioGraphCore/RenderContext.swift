// What a render call is asked for: the slice's sample time, length and rate.

/// One slice to render: where it starts on the timeline of the node's rate, and how long it is.
///
/// `sampleTime` counts frames from 0 at the first rendered frame of the graph's output timeline
/// (or, behind a rate-converting input, of the upstream rate's own timeline). Every slice a node
/// renders carries it, so a node rendered twice for the same slice (fan-out) is rendered once.
public struct RenderContext: Sendable, Hashable {
    /// The first frame of the slice.
    public var sampleTime: Int64
    /// Frames to render, at most the graph's `maximumFramesPerSlice`.
    public var frameCount: Int
    /// The sample rate this slice runs at.
    public var sampleRate: Double

    public init(sampleTime: Int64, frameCount: Int, sampleRate: Double) {
        self.sampleTime = sampleTime
        self.frameCount = frameCount
        self.sampleRate = sampleRate
    }
}

/// Flags a render returns per output bus (cf. `AudioUnitRenderActionFlags`).
public struct RenderActionFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Every sample of the bus is zero for this slice; consumers may skip it.
    public static let outputIsSilence = RenderActionFlags(rawValue: 1 << 4)
}
