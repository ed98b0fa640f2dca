// The graph's PulseAudio output: a live driver that pulls the graph from a dedicated render thread.
import AudioGraphCore
import Synchronization

/// The `output` node: the end of a graph played live to a PulseAudio sink (cf. the
/// RemoteIO / HALOutput Audio Unit). It has one input bus and no output bus.
///
/// While started it *drives* the graph: a `PulsePlaybackStream` whose dedicated render thread
/// calls `AudioGraph.render(frameCount:)` once per quantum and hands the result to PulseAudio
/// (see `PulsePlaybackStream` for the ring buffer between the two). The quantum is sized from
/// the node's `latency`, not from the graph's `maximumFramesPerSlice` (which stays the maximum):
/// `PulseStreamConfiguration.playbackQuantumFrames`, 32 frames at 10 or 20 ms and 48 kHz, a
/// divisor of the slice, so updates timed at slice boundaries land where they do offline and
/// the samples are those of an offline render. With it the stream's own ring holds at most 4 ms.
/// The stream runs at the rate and channel count of what reaches the node's input, which is the
/// node's rate (an `output` node does not convert rates; a mismatch is an error at load).
///
/// `start(graph:context:)` starts the graph and the stream; `stop()` stops both and is idempotent.
/// Faults (server gone, sink gone) are reported by `fault` and the fault handler.
///
/// Thread safety: configure, start and stop on one control thread. `fault`, `underrunCount`,
/// `renderedFrames` may be read from any thread; `setRenderLimit` may be called from any thread.
/// The render callback it installs is real-time safe (it only calls `AudioGraph.render` and
/// copies samples).
public final class OutputNode: GraphNode, @unchecked Sendable {
    /// The node's properties (sink, latency, stream name).
    public let properties: OutputProperties

    // MARK: Control thread only
    private var stream: PulsePlaybackStream?
    private weak var drivenGraph: AudioGraph?
    /// The counters of the last stream, kept after `stop()` so they can still be read.
    private var stopped = (underruns: 0, renderedFrames: 0, fault: PulseError?.none)

    /// A playback node named `id` (sink, latency and stream name from `properties`).
    public init(id: String, properties: OutputProperties = OutputProperties()) {
        self.properties = properties
        super.init(id: id, typeName: "output", inputBusCount: 1, outputBusCount: 0, parameters: [])
    }

    public override var isOutputNode: Bool { true }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        []
    }

    /// The format reaching the node (after initialize), or nil when nothing is connected.
    public var inputFormat: StreamFormat? { inputFormats.first ?? nil }

    // MARK: Live driving

    /// Sees every slice handed to the sink, on the render thread (the engine's voice
    /// processing); set before `start`.
    package var playbackObserver: (any PlaybackObserver)?

    /// Tests only: called on the render thread before each slice (set before `start`).
    nonisolated(unsafe) var testOnly_renderThreadHook: (@Sendable () -> Void)?

    /// The playback stream's settings for `graph` (initialized, with this node as its output):
    /// the format reaching the node (stereo at the graph's rate when nothing is connected), the
    /// node's device, latency and stream name, the graph's slice size (the quantum and the ring
    /// follow from these: `playbackQuantumFrames`, `playbackRingFrames`).
    package func streamConfiguration(graph: AudioGraph) -> PulseStreamConfiguration {
        let format = inputFormat ?? .canonical(sampleRate: graph.sampleRate, channelCount: 2)
        return PulseStreamConfiguration(
            sampleRate: Int(format.sampleRate.rounded()), channels: format.channelCount, device: properties.device,
            latencyMilliseconds: properties.latency, maximumFramesPerSlice: graph.maximumFramesPerSlice,
            streamName: properties.streamName ?? "AudioGraph \(id)")
    }

    /// Starts `graph` (initialized, with this node as its output) and a playback stream on
    /// `context` that pulls it. Unconnected input: plays silence in stereo at the graph's rate.
    ///
    /// - Throws: `PulseError` (no server, unknown sink, `.parallelRenderingNotLive` for a graph
    /// with ``AudioGraph/renderThreadCount`` above 1, ...); nothing is left running then.
    /// `endFrame`: see `PulsePlaybackStream.setEndFrame(_:)`.
    package func start(graph: AudioGraph, context: PulseContext, renderLimit: Int64? = nil,
                      endFrame: Int64? = nil) throws(PulseError) {
        guard stream == nil else { return }
        let threads = graph.renderThreadCount
        guard threads <= 1 else { throw .parallelRenderingNotLive(threads: threads) }
        let configuration = streamConfiguration(graph: graph)
        let channels = configuration.channels
        let hook = testOnly_renderThreadHook
        let observer = playbackObserver
        let s = try PulsePlaybackStream(context: context, configuration: configuration) { [unowned graph] _, frames, buffers in
            // Render thread: pull one slice of the graph and copy it out (silence if nothing).
            hook?()
            if let result = graph.render(frameCount: frames), !result.isSilent {
                let available = result.buffer.channelCount
                for c in 0..<channels {
                    if c < available {
                        buffers[c].update(from: result.buffer.channel(c), count: frames)
                    } else {
                        buffers[c].update(repeating: 0, count: frames)
                    }
                }
            } else {
                for c in 0..<channels { buffers[c].update(repeating: 0, count: frames) }
            }
            observer?.observePlayback(buffers, channelCount: channels, frameCount: frames)
        }
        s.setRenderLimit(renderLimit)
        s.setEndFrame(endFrame)
        do {
            try graph.start()
        } catch {
            throw .streamFailed(stream: configuration.streamName, reason: "\(error)")
        }
        do {
            try s.start()
        } catch {
            graph.stop()
            throw error
        }
        stream = s
        stopped = (0, 0, nil)
        drivenGraph = graph
    }

    /// Stops the stream (joining the render thread) and then the graph. Idempotent.
    public func stop() {
        if let stream {
            stream.stop()
            stopped = (stream.underrunCount, stream.renderedFrames, stream.fault)
        }
        stream = nil
        drivenGraph?.stop()
        drivenGraph = nil
    }

    /// The running playback stream (latency, buffer attributes, counters), nil when stopped.
    package var playbackStream: PulsePlaybackStream? { stream }

    /// Why playback failed (nil when fine); after `stop()`, why the last run failed, if it did.
    public var fault: PulseError? { stream.map { $0.fault } ?? stopped.fault }

    /// Server underruns since start (after `stop()`: those of the last run).
    public var underrunCount: Int { stream?.underrunCount ?? stopped.underruns }

    /// Frames of the graph rendered since start: the sample time of the next slice (after
    /// `stop()`: the frames the last run rendered).
    public var renderedFrames: Int { stream?.renderedFrames ?? stopped.renderedFrames }

    /// See `PulsePlaybackStream.setRenderLimit(_:)`.
    public func setRenderLimit(_ frame: Int64?) { stream?.setRenderLimit(frame) }

    /// Sets a handler called on libpulse's mainloop thread when playback fails.
    public func setFaultHandler(_ handler: (@Sendable (PulseError) -> Void)?) { stream?.setFaultHandler(handler) }
}

extension OutputNode {
    /// The `output` node type: the PulseAudio playback output (``OutputProperties``). Rendered
    /// offline (``OutputPlacement/offline``) it hands over to the generic output type; played
    /// live on a chosen device, that device replaces the node's.
    package static let descriptor = NodeTypeDescriptor(
        name: "output", kind: .output, inputBuses: .fixed(1), outputBusCount: 0,
        propertyKeys: ["device", "latency", "streamName"],
        decode: { reader in
            var result = OutputProperties()
            if let device = reader.string("device") { result.device = device }
            if let latency = reader.latency("latency") { result.latency = latency }
            if let name = reader.string("streamName") { result.streamName = name }
            return result
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            var p = context.options(as: OutputProperties.self) ?? OutputProperties()
            switch context.placement {
            case .offline: return try context.handOver(to: OutputPlacement.offlineOutputType)
            case .live(let device): if let device { p.device = device }
            case .asDescribed: break
            }
            return OutputNode(id: context.id, properties: p)
        })
}
