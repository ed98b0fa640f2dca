// Render side of a PlayerNode that streams a long file from disk through a FileStreamer.

/// The render-side processor of a streaming ``PlayerNode``: the same timeline arithmetic as
/// ``PlayerKernel`` (position `p` of the player's own timeline plays stream position `p`), but
/// the samples come from a ``FileStreamer`` ring filled by a disk-reader thread.
///
/// When the ring does not hold the frames a slice needs, the kernel outputs silence for them and
/// adds them to the node's `streamStarvedFrames` — it never waits. Offline, once
/// ``prepareForOfflineRender()`` has run, the render reads the frames it needs from the file
/// itself (no disk thread, nothing missing, nothing read twice).
///
/// Thread safety: render thread only after creation, except ``deinit`` (control thread: stops
/// and joins the disk thread) and the offline preparation the node performs between renders
/// (``prepareForOfflineRender()``).
final class StreamingPlayerKernel: NodeKernel, @unchecked Sendable {
    // MARK: Immutable after init
    let streamer: FileStreamer
    private let volumeIndex: Int
    private let counters: FileStreamer.Counters

    // MARK: Render thread only (changed by PlayerKernel.Settings messages)
    private var segment: FileStreamer.Segment
    private var version: UInt64
    private var startOffset: Int64


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

    override func receive(_ message: KernelMessage) {
        guard let s = message as? PlayerKernel.Settings else { return }
        startOffset = s.startOffset
        segment = FileStreamer.Segment(start: s.frameRange.lowerBound, length: Int64(s.frameRange.count), loop: s.loop)
        version = s.version
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
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
        let got = min(wanted, streamer.acquire(position: a, segment: segment, version: version, wanted: wanted))
        let out = outputs[0]
        // Whole runs from the ring (sample × volume, as the in-memory kernel computes it).
        let ring = streamer.ring
        let head = streamer.headIndex
        let gains = volume.values.map { UnsafePointer($0 + lead) }
        for c in 0..<out.channelCount {
            let dst = out.channel(c)
            for i in 0..<lead { dst[i] = 0 }
            ring.copy(channel: c, from: head, count: got, into: dst + lead, gains: gains, gain: volume.constant)
            for i in (lead + got)..<n { dst[i] = 0 }
        }
        streamer.consume(got)
        if got < wanted { counters.starvedFrames.add(Int64(wanted - got), ordering: .relaxed) }
        outputIsSilent[0] = false
    }

    /// Offline only, between two renders (on the thread that renders): switches the streamer to
    /// synchronous reading (``FileStreamer/enterSynchronousMode()``), so that every later render
    /// reads exactly the frames it needs from the file itself — however its source is pulled
    /// (behind a rate converter, ahead of the graph frame) — and never waits for the disk thread.
    func prepareForOfflineRender() {
        streamer.enterSynchronousMode()
    }
}
