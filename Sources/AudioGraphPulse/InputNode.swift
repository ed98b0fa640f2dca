// The graph's PulseAudio input: a source node reading what a capture stream recorded.
import AudioGraphCore
import AudioGraphRealtime
import Glibc

/// The `input` node: a source (no input bus, one output bus) that outputs audio captured from a
/// PulseAudio source (cf. the input element of the RemoteIO / HALInput Audio Unit).
///
/// When a `PulseContext` is attached before the graph initializes, `makeKernel` creates a
/// `PulseCaptureStream` at the graph's rate with `channels` channels (the output format's count
/// without a `channelMap`); with a map the output bus carries the mapped captured channels;
/// `startCapture()` connects it, and each slice the kernel reads exactly `frameCount` frames from
/// its lock-free ring (silence, counted, when the ring runs short). Without a context,
/// initialize fails unless ``rendersSilenceWithoutContext`` says silence is meant (offline renders).
///
/// Thread safety: configure, attach, start and stop on one control thread; the kernel runs on
/// the render thread and only reads the ring (real-time safe). Counters may be read from any thread.
public final class InputNode: GraphNode, @unchecked Sendable {
    /// The node's properties (source, channels, latency).
    public let properties: InputProperties

    // MARK: Control thread only
    /// The connection captures use; set before the graph initializes.
    package var pulseContext: PulseContext?
    /// Whether initializing without a ``pulseContext`` is meant (an offline render of a graph
    /// that has an input): the node then outputs silence. Otherwise a missing context is an
    /// error at initialize, never silent.
    public var rendersSilenceWithoutContext = false
    /// Processes the captured audio in place on the render thread (the engine's voice
    /// processing); set before initialize. nil: the capture passes unchanged.
    package var captureProcessor: (any CaptureProcessor)?
    private var capture: PulseCaptureStream?

    /// A capture node named `id`; attach `pulseContext` before the graph initializes to capture.
    public init(id: String, properties: InputProperties = InputProperties()) {
        self.properties = properties
        super.init(id: id, typeName: "input", inputBusCount: 0, outputBusCount: 1, parameters: [])
    }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = declaredFormat.sampleRate ?? graphSampleRate
        if let map = properties.channelMap {
            guard (1...32).contains(properties.channels) else {
                throw .formatNotSupported(node: id, reason: "PulseAudio captures 1...32 channels, not \(properties.channels)")
            }
            if let i = map.firstIndex(where: { !(0..<properties.channels).contains($0) }) {
                throw .formatNotSupported(node: id, reason: "channelMap[\(i)] = \(map[i]), but the input captures \(properties.channels) channel(s)")
            }
            if let declared = declaredFormat.channelCount, declared != map.count {
                throw .formatNotSupported(node: id, reason: "the format declares \(declared) channels but the channelMap has \(map.count)")
            }
            return [StreamFormat.canonical(sampleRate: rate, channelCount: map.count)]
        }
        let channels = declaredFormat.channelCount ?? properties.channels
        guard (1...32).contains(channels) else {
            throw .formatNotSupported(node: id, reason: "PulseAudio captures 1...32 channels, not \(channels)")
        }
        return [StreamFormat.canonical(sampleRate: rate, channelCount: channels)]
    }

    /// Captured audio is consumed every slice, whether or not anything downstream reaches the
    /// output (taps and sinks on an input-only graph see it; the capture ring never overflows).
    public override var isPulledEverySlice: Bool { true }

    /// Captured audio exists only as time passes: it cannot be read ahead (a timePitch refuses it).
    public override var isLiveSource: Bool { true }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        capture?.stop()
        capture = nil
        let format = outputFormats[0]
        guard pulseContext != nil || rendersSilenceWithoutContext else {
            throw .nodeSetupFailed(node: id, reason: "no PulseAudio context to capture from: set pulseContext before initialize "
                                   + "(or rendersSilenceWithoutContext for an offline render)")
        }
        if let context = pulseContext {
            do {
                capture = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
                    sampleRate: Int(format.sampleRate.rounded()), channels: capturedChannelCount,
                    device: properties.device, latencyMilliseconds: properties.latency,
                    maximumFramesPerSlice: maximumFramesPerSlice, streamName: "AudioGraph \(id)"))
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        return InputNodeKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                               parameters: parameters, capture: capture, channelMap: properties.channelMap,
                               capturedChannelCount: capturedChannelCount, processor: captureProcessor)
    }

    /// Channels the capture stream records: `channels` with a map, else the output's.
    private var capturedChannelCount: Int { properties.channelMap != nil ? properties.channels : outputFormats[0].channelCount }

    /// Starts capture for full duplex with `output`, which is about to play `graph`, at the
    /// lowest round trip that does not run the capture ring dry: no pre-roll (the output starts
    /// at once), but a warm-up (`PulseCaptureStream.setWarmUp`): the input hands out silence
    /// while the output takes its start-up burst (its latency, its first request, its ring) and
    /// two more capture fragments, then drops what waits beyond ``duplexMarginFrames(graph:quantum:)``
    /// just before a fragment arrives. The capture's share of the round trip is then one
    /// fragment (the input's `latency`) plus that margin.
    ///
    /// When the input does not reach the output (a tap, a recorder or an analyser listens to it)
    /// nothing captured is dropped: the reads hand out silence until a fragment and 50 ms have
    /// arrived, and then every frame from the first one captured (drift control only when the
    /// ring is nearly full). No-op without a context.
    public func startCapture(before output: OutputNode, graph: AudioGraph) throws(PulseError) {
        guard let capture else { return }
        try startCapture()
        let playback = output.streamConfiguration(graph: graph)
        guard Self.reaches(from: id, to: output.id, in: graph.connections) else {
            let fragment = max(capture.bufferAttributes?.fragmentSize ?? 0,
                               Int((properties.latency * graph.sampleRate / 1000).rounded(.up)))
            // Latency matters little here, holes do: a 50 ms margin rides out a loaded machine's
            // late fragments, and drift control waits until the ring is nearly full.
            let margin = Int((0.050 * graph.sampleRate).rounded(.up))
            capture.setBacklogLimit(frames: capture.capacityFrames - 2 * graph.maximumFramesPerSlice)
            // Never above what the ring can hold (a server granting a huge fragment would
            // otherwise keep the reads silent for good).
            capture.setStartThreshold(frames: min(fragment + margin, capture.capacityFrames - 2 * graph.maximumFramesPerSlice))
            return
        }
        let rate = graph.sampleRate
        let burst = Int(((playback.latencyMilliseconds + playback.playbackRequestMilliseconds) * rate / 1000).rounded(.up))
            + playback.playbackRingFrames
        let fragment = max(capture.bufferAttributes?.fragmentSize ?? 0, Int((properties.latency * rate / 1000).rounded(.up)))
        let quantum = playback.playbackQuantumFrames
        let window = fragment + 2 * quantum
        let margin = duplexMarginFrames(graph: graph, quantum: quantum)
        capture.setWarmUp(frames: burst + 2 * fragment + window, window: window, margin: margin)
        // The fill peaks at the margin plus a fragment just after one arrives: drift control
        // (the backlog limit) starts above that, with a fragment to spare; what waits longer is the
        // settling's to drop.
        capture.setBacklogLimit(frames: 2 * fragment + margin + 2 * graph.maximumFramesPerSlice)
    }

    /// Whether audio flows from node `a` to node `b` through `connections`.
    static func reaches(from a: String, to b: String, in connections: [Connection]) -> Bool {
        var stack = [a], seen: Set<String> = [a]
        while let n = stack.popLast() {
            if n == b { return true }
            for c in connections where c.source == n && seen.insert(c.destination).inserted { stack.append(c.destination) }
        }
        return false
    }

    /// What the capture ring keeps just before each fragment arrives in full duplex: one input
    /// latency, at least 10 ms (a fragment's arrival passes through the server's main thread,
    /// which a busy machine delays; 3 ms gave 12-16 underruns a minute at a load average of 12)
    /// and two output quanta. (The capture underruns that remained with any margin, 4-25 a
    /// minute at 10 ms, were drift between two clocks: the reads now follow the output's clock,
    /// see `CaptureDriftCompensator`.)
    public func duplexMarginFrames(graph: AudioGraph, quantum: Int) -> Int {
        max(2 * quantum, Int((max(0.010, properties.latency / 1000) * graph.sampleRate).rounded(.up)))
    }

    /// Connects the capture stream (after initialize). No-op without a context.
    ///
    /// - Parameter preRoll: frames to accumulate before returning (at most `timeout` seconds),
    ///   so that an output starting next can fill its buffer from captured audio instead of
    ///   running the capture ring dry; the backlog limit is raised to match.
    /// - Throws: `PulseError` (unknown source, no server, ...).
    public func startCapture(preRoll: Int = 0, timeout: Double = 2) throws(PulseError) {
        guard let capture else { return }
        try capture.start()
        guard preRoll > 0 else { return }
        capture.setBacklogLimit(frames: preRoll + 4 * capture.configuration.maximumFramesPerSlice)
        let deadline = MonotonicClock.seconds() + timeout
        while capture.readableFrames < min(preRoll, capture.capacityFrames / 2), MonotonicClock.seconds() < deadline {
            if let fault = capture.fault { throw fault }
            usleep(1000)
        }
    }

    /// Disconnects the capture stream. Idempotent.
    public func stopCapture() {
        capture?.stop()
    }

    /// The capture stream (counters, latency), nil without a context or before initialize.
    package var captureStream: PulseCaptureStream? { capture }

    /// Why capture failed while running.
    public var fault: PulseError? { capture?.fault }
}

/// The render side of `InputNode`: copies captured frames into the output bus (through the
/// channel map: captured into a scratch buffer sized at init, then the mapped channels copied).
final class InputNodeKernel: NodeKernel, @unchecked Sendable {
    // MARK: Immutable after init
    private let capture: PulseCaptureStream?
    /// Where each captured channel is written: the output bus, or the scratch with a map.
    private let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let capturedChannelCount: Int
    /// The channel map (`mapCount` entries), nil without one.
    private let map: UnsafeMutablePointer<Int>?
    private let mapCount: Int
    private let scratch: UnsafeMutablePointer<Float>?
    private let scratchStride: Int
    private let processor: (any CaptureProcessor)?

    init(nodeID: String, outputFormats: [StreamFormat], maximumFramesPerSlice: Int, parameters: [AudioParameter],
         capture: PulseCaptureStream?, channelMap: [Int]? = nil, capturedChannelCount: Int,
         processor: (any CaptureProcessor)? = nil) {
        self.capture = capture
        self.processor = processor
        self.capturedChannelCount = capturedChannelCount
        mapCount = channelMap?.count ?? 0
        map = channelMap.map { m in
            let p = UnsafeMutablePointer<Int>.allocate(capacity: m.count)
            p.initialize(from: m, count: m.count)
            return p
        }
        scratchStride = maximumFramesPerSlice
        scratch = channelMap == nil ? nil : .allocate(capacity: capturedChannelCount * maximumFramesPerSlice)
        channelPointers = .allocate(capacity: capturedChannelCount)
        super.init(nodeID: nodeID, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: parameters)
        for c in 0..<capturedChannelCount {
            channelPointers[c] = scratch.map { $0 + c * maximumFramesPerSlice } ?? outputs[0].channel(c)
        }
    }

    deinit {
        channelPointers.deallocate()
        scratch?.deallocate()
        map?.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        guard let capture else {
            outputSilence(frameCount: context.frameCount)
            return
        }
        let got = capture.read(frameCount: context.frameCount, into: channelPointers)
        if let map, let scratch {
            for i in 0..<mapCount {
                outputs[0].channel(i).update(from: scratch + map[i] * scratchStride, count: context.frameCount)
            }
        }
        outputIsSilent[0] = got == 0
        if let processor {
            processor.processCapture(outputs[0], frameCount: context.frameCount)
            outputIsSilent[0] = false
        }
    }
}

extension InputNode {
    /// The `input` node type: the PulseAudio capture source (``InputProperties``), at most one
    /// per graph. Rendered offline or by a caller that attaches no server it is silent on
    /// purpose; played live (``OutputPlacement/live(device:)``) it captures.
    package static let descriptor = NodeTypeDescriptor(
        name: "input", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["device", "channels", "latency", "channelMap"],
        decode: { reader in
            var result = InputProperties()
            if let device = reader.string("device") { result.device = device }
            if let channels = reader.integer("channels", in: 1...FormatDescription.maximumChannelCount) { result.channels = channels }
            if let latency = reader.latency("latency") { result.latency = latency }
            if let map = reader.channelMap("channelMap", channels: 0...(result.channels - 1)) { result.channelMap = map }
            return result
        },
        checkFormat: { options, context in
            guard let p = options as? InputProperties else { return }
            let mapped = p.channelMap != nil
            context.checkDeclaredChannels(property: p.outputChannelCount, propertyGiven: mapped || context.isGiven("channels"),
                                          what: mapped ? "the channelMap's length" : "the property channels")
        },
        maximumPerGraph: 1,
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            let input = InputNode(id: context.id, properties: context.options(as: InputProperties.self) ?? InputProperties())
            if case .live = context.placement {} else { input.rendersSilenceWithoutContext = true }
            return input
        })
}
