// The engine API's buffer source (Web Audio's AudioBufferSourceNode surface, a Linux addition) over the graph's bufferSource node.
import AudioGraphNodes
import AudioGraphRealtime
import Foundation
import Synchronization

/// Plays an ``AudioPCMBuffer`` held in memory as Web Audio's `AudioBufferSourceNode` plays its
/// buffer (a Linux addition: AVFAudio has none), over the graph's `bufferSource` node
/// (``BufferSourceNode``): after ``start(when:offset:duration:)`` a playhead moves
/// `playbackRate · 2^(detune/1200)` buffer frames per output frame (both k-rate parameters, any
/// finite value, negative plays backward), the output is the buffer linearly interpolated at the
/// playhead, ``loop`` wraps it within ``loopStart``…``loopEnd``, and playback ends at the buffer's
/// end, after `duration` seconds of buffer content, or at ``stop(when:)``; then ``onEnded`` runs
/// (on a thread of its own, never the render thread). Output: the buffer's channels at its rate
/// (a mixer converts).
///
/// Times (`when`) are seconds on the engine's render timeline (``AudioTime/sampleTime`` over the
/// rate, as ``AudioNode/lastRenderTime`` reports; for a buffer at another rate than the engine's,
/// on the node's own timeline): a time already passed means at once. ``start(when:offset:duration:)``
/// may be called again to restart (Web Audio allows one start per node; restarting is a Linux
/// addition). Start, stop and the loop properties reach a running engine at the next slice
/// without a new graph node; a new ``buffer`` makes one.
///
/// Thread safety: the engine's; the parameters, ``loop`` and its points, start and stop may be
/// set from any thread.
public final class AudioBufferSourceNode: AudioNode, @unchecked Sendable {
    /// What the graph node reads: one for the node's life, shared by every graph node made for it.
    private let transport = BufferSourceTransport()
    private let state = Mutex(State())

    private struct State {
        var buffer: AudioPCMBuffer?
        var onEnded: (@Sendable () -> Void)?
        var watcher: PosixThread?
        var watchedStart = 0
        var starts = 0
    }

    /// A source without a buffer (silent until one is set and it is started).
    public init() { super.init(kindName: "bufferSource") }

    deinit { stopWatching() }

    public override var numberOfInputs: Int { 0 }

    override var parameterTable: ParameterTable { .bufferSource }

    /// The buffer played (float32 PCM, deinterleaved or not; nil: silence). Setting it while the
    /// engine runs makes a new graph node that plays the latest start on the new buffer, unless
    /// that playback already ended (as in Web Audio, a buffer change never restarts a source).
    public var buffer: AudioPCMBuffer? {
        get { state.withLock { $0.buffer } }
        set {
            state.withLock { $0.buffer = newValue }
            needsNewGraphNode = true
            if graphNode != nil { engine?.applyEdit("buffer") }
        }
    }

    /// The playback rate (k-rate; any finite value; 1). NaN is ignored.
    public var playbackRate: Float {
        get { Float(storedParameter("playbackRate", default: 1)) }
        set { setStoredParameter("playbackRate", Double(newValue), call: "playbackRate") }
    }

    /// The detune in cents (k-rate; any finite value; 0). NaN is ignored.
    public var detune: Float {
        get { Float(storedParameter("detune", default: 0)) }
        set { setStoredParameter("detune", Double(newValue), call: "detune") }
    }

    /// ``playbackRate`` as a destination of ``AudioEngine/connect(_:to:fromBus:)``.
    public var playbackRateParameter: AudioNodeParameter { parameter("playbackRate") }
    /// ``detune`` as a destination of ``AudioEngine/connect(_:to:fromBus:)``.
    public var detuneParameter: AudioNodeParameter { parameter("detune") }

    /// Whether the playhead loops (false).
    public var loop: Bool {
        get { transport.loop }
        set { transport.loop = newValue }
    }

    /// The loop's start, seconds into the buffer (0; the whole buffer unless `0 ≤ loopStart < loopEnd`).
    public var loopStart: TimeInterval {
        get { transport.loopStart }
        set { if !newValue.isNaN { transport.loopStart = newValue } }
    }

    /// The loop's end, seconds into the buffer (0: the buffer's end; at most its duration).
    public var loopEnd: TimeInterval {
        get { transport.loopEnd }
        set { if !newValue.isNaN { transport.loopEnd = newValue } }
    }

    /// Runs once each time playback ends (buffer end, duration, stop time), on a thread of the
    /// node's own — never the render thread. Set it before ``start(when:offset:duration:)``.
    public var onEnded: (@Sendable () -> Void)? {
        get { state.withLock { $0.onEnded } }
        set { state.withLock { $0.onEnded = newValue } }
    }

    /// Whether playback ended since the last start (false before any start).
    public var hasEnded: Bool { transport.ended }

    /// Starts playback at `when` (seconds on the render timeline; passed: at once), `offset`
    /// seconds into the buffer (clamped to it), for `duration` seconds of buffer content (loops
    /// included; nil: until the end or a stop).
    public func start(when: TimeInterval = 0, offset: TimeInterval = 0, duration: TimeInterval? = nil) {
        transport.start(when: when, offset: offset, duration: duration ?? .infinity)
        startWatching()
    }

    /// Stops playback at `when` (seconds on the render timeline; passed or 0: at once). Before
    /// the first start it is ignored (Web Audio throws InvalidStateError; a later start plays
    /// in full, as a graph file's `stopTime` only applies to its start).
    public func stop(when: TimeInterval = 0) {
        transport.stop(when: when)
    }

    /// How often the ended watcher looks at the transport: ``onEnded`` runs at most this late.
    static let endedPollSeconds = 0.002

    /// One watcher thread per start while an ``onEnded`` handler is set: it polls the transport's
    /// ended flag (the render thread makes no call that could wake it) and runs the handler once.
    private func startWatching() {
        stopWatching()   // from the handler itself (a restart when playback ends): detached, it ends after the handler
        guard onEnded != nil else { return }
        let transport = self.transport
        let generation = state.withLock { $0.starts }
        let handler = onEnded
        let thread = try? PosixThread(name: "ag-buffer-ended") { [weak self] in
            while true {
                guard let self else { return }
                if self.state.withLock({ $0.starts }) != generation { return }   // restarted: the next watcher takes over
                if transport.ended {
                    handler?()
                    return
                }
                usleep(UInt32(Self.endedPollSeconds * 1e6))
            }
        }
        state.withLock { $0.watcher = thread }
    }

    /// Ends the current watcher, if any: a new start generation (it sees it and returns) and a join.
    private func stopWatching() {
        let thread: PosixThread? = state.withLock { s in
            s.starts += 1
            let t = s.watcher
            s.watcher = nil
            return t
        }
        thread?.join()
    }

    /// The buffer's channels and rate.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        guard let b = buffer else { return AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: 1) ?? engineFormat }
        return AudioFormat(standardFormatWithSampleRate: b.format.sampleRate, channels: b.format.channelCount) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        var channels: [[Float]] = [[]]
        var rate = sampleRate
        if let b = buffer {
            rate = b.format.sampleRate
            let n = Int(b.frameLength), count = Int(b.format.channelCount)
            if let data = b.floatChannelData {
                let stride = b.stride
                channels = (0..<count).map { c in (0..<n).map { data[c][$0 * stride] } }
            } else {
                throw .nodeSetupFailed(node: graphID, reason: "a buffer source plays float32 buffers; this one is \(b.format.commonFormat)")
            }
        }
        return try BufferSourceNode(id: graphID, channels: channels, sampleRate: rate, transport: transport)
    }
}
