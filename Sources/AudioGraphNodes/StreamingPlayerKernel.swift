// Render side of a PlayerNode that streams a long file from disk through a FileStreamer.

/// The render-side processor of a streaming ``PlayerNode``: the same timeline arithmetic as
/// ``PlayerKernel`` (position `p` of the player's own timeline plays stream position `p`), but
/// the samples come from a ``FileStreamer`` ring filled by a disk-reader thread.
///
/// When the ring does not hold the frames a slice needs, the kernel outputs silence for them and
/// adds them to the node's `streamStarvedFrames` — it never waits.
///
/// Thread safety: render thread only after creation, except ``deinit`` (control thread: stops
/// and joins the disk thread) and the offline preparation the node performs between renders
/// (``prepare(graphSampleTime:graphSampleRate:startOffset:segment:version:)``).
final class StreamingPlayerKernel: NodeKernel, @unchecked Sendable {
    // MARK: Immutable after init
    let streamer: FileStreamer
    private let volumeIndex: Int
    private let counters: FileStreamer.Counters

    // MARK: Render thread only (changed by PlayerKernel.Settings messages)
    private var segment: FileStreamer.Segment
    private var version: UInt64
    private var startOffset: Int64

    // MARK: Render thread only (read by the offline preparation between renders)
    /// The sample time (own timeline) after the last slice rendered.
    private(set) var nextSampleTime: Int64 = 0
    /// Slices rendered so far.
    private(set) var renderCount = 0
    /// Whether `start(atSampleTime:)` has run.
    private(set) var hasStarted = false

    init(node: PlayerNode, streamer: FileStreamer, segment: FileStreamer.Segment, version: UInt64,
         startOffset: Int64, maximumFramesPerSlice: Int) {
        self.streamer = streamer
        counters = streamer.counters
        self.segment = segment
        self.version = version
        self.startOffset = startOffset
        volumeIndex = node.parameterIndex(of: ParameterAddress(name: "volume"))!
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit { streamer.stop() }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        nextSampleTime = sampleTime
        hasStarted = true
    }

    override func receive(_ message: KernelMessage) {
        guard let s = message as? PlayerKernel.Settings else { return }
        startOffset = s.startOffset
        segment = FileStreamer.Segment(start: s.frameRange.lowerBound, length: Int64(s.frameRange.count), loop: s.loop)
        version = s.version
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        renderCount &+= 1
        nextSampleTime = context.sampleTime + Int64(n)
        let volume = parameterValues(volumeIndex, context)
        let first = context.sampleTime - (startSampleTime + startOffset)
        let length = segment.length
        if length == 0 || first + Int64(n) <= 0 || (!segment.loop && first >= length) {
            // Before the start: have the ring hold the beginning by then (a seek if it does not).
            if length > 0 && first < 0 { _ = streamer.acquire(position: 0, segment: segment, version: version) }
            outputSilence(frameCount: n)
            return
        }
        // Stream positions a..<b play in this slice, at output frames lead..<lead + (b - a).
        let a = max(first, 0)
        let b = segment.loop ? first + Int64(n) : min(first + Int64(n), length)
        let lead = Int(a - first)
        let wanted = Int(b - a)
        let got = min(wanted, streamer.acquire(position: a, segment: segment, version: version))
        let out = outputs[0]
        for c in 0..<out.channelCount {
            let dst = out.channel(c)
            for i in 0..<lead { dst[i] = 0 }
            for j in 0..<got { dst[lead + j] = streamer.sample(channel: c, offset: j) * volume[lead + j] }
            for i in (lead + got)..<n { dst[i] = 0 }
        }
        streamer.consume(got)
        if got < wanted { counters.starvedFrames.add(Int64(wanted - got), ordering: .relaxed) }
        outputIsSilent[0] = false
    }

    /// Offline only, between two renders (on the thread that renders): makes sure the frames
    /// the next render of graph frame `graphSampleTime` needs are in the ring, waiting for the
    /// disk thread. The arguments are the control side's current settings — the ones any
    /// message still on its way to this kernel carries.
    ///
    /// The ring is filled with half its capacity from a position no later than the one the next
    /// slice starts at: where the last slice ended (a source behind a rate converter is pulled
    /// contiguously, ahead of the graph frame), unless that is far from the graph frame on the
    /// kernel's timeline (first slice, or reconnected after a pause) — then the graph frame. The
    /// render skips forward over frames it does not need; it never has to seek.
    func prepare(graphSampleTime: Int64, graphSampleRate: Double, startOffset newOffset: Int64,
                 segment newSegment: FileStreamer.Segment, version newVersion: UInt64) {
        let rate = outputFormats[0].sampleRate
        let graphTime = rate == graphSampleRate ? graphSampleTime
            : Int64((Double(graphSampleTime) * rate / graphSampleRate).rounded())
        let slack = Int64(streamer.ring.capacity / 4)
        let time = renderCount > 0 && abs(graphTime - nextSampleTime) <= slack ? nextSampleTime : graphTime
        let start = hasStarted ? startSampleTime : graphTime
        let a = max(time - (start + newOffset), 0)
        guard newSegment.length > 0, newSegment.loop || a < newSegment.length else { return }
        let remaining = newSegment.loop ? Int64.max : newSegment.length - a
        let frames = Int(min(Int64(streamer.ring.capacity / 2), remaining))
        if !streamer.waitUntilBuffered(position: a, segment: newSegment, version: newVersion, frames: frames) {
            counters.readFailures.add(1, ordering: .relaxed)
        }
    }
}
