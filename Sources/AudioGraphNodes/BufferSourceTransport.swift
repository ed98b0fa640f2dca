// A buffer source's start, stop, duration and loop points, shared between the control side and the render thread through atomics.
import Synchronization

/// What Web Audio's `AudioBufferSourceNode.start(when, offset, duration)`, `stop(when)`, `loop`,
/// `loopStart` and `loopEnd` set, for a ``BufferSourceNode``'s kernel to read at each slice
/// start, and the `ended` flag it raises. The engine API's `AudioBufferSourceNode` keeps one for
/// every graph node it makes, so calls while the graph runs reach the kernel without a new node.
///
/// Times are seconds on the node's timeline: from the start of its kernel (``startsFromKernelStart``,
/// a graph file's `startTime`/`stopTime`) or from the graph's sample 0 (the engine API's `when`).
///
/// Thread safety: every member is atomic. Setters on control threads; the kernel reads on the
/// render thread (real-time safe). A start publishes its fields before its generation
/// (release/acquire), so the kernel sees a start whole.
public final class BufferSourceTransport: Sendable {
    /// Counts starts: 0 until the first (the source is silent until then).
    let generation = Atomic<UInt64>(0)
    private let start = Atomic<UInt64>(0.0.bitPattern)
    private let offset = Atomic<UInt64>(0.0.bitPattern)
    private let duration = Atomic<UInt64>(Double.infinity.bitPattern)
    private let stop = Atomic<UInt64>(Double.infinity.bitPattern)
    private let loopFlag = Atomic<Bool>(false)
    private let loopStartBits = Atomic<UInt64>(0.0.bitPattern)
    private let loopEndBits = Atomic<UInt64>(0.0.bitPattern)
    /// The generation whose playback ended (0: none). Compared with ``generation`` rather than
    /// cleared by a start, so an end of the previous playback that lands during a start cannot
    /// mark the new one ended.
    private let endedGeneration = Atomic<UInt64>(0)
    /// Whether times count from the kernel's start (graph files) rather than the graph's sample 0.
    public let startsFromKernelStart: Bool

    /// A transport not started yet (engine API) or, with `startsFromKernelStart`, for a graph file's node.
    public init(startsFromKernelStart: Bool = false) { self.startsFromKernelStart = startsFromKernelStart }

    /// Starts (or restarts) playback: at `when` s, from `offset` s into the buffer, for `duration`
    /// s of buffer content (infinity: no limit). Clears ``ended`` (a new generation) and any stop time.
    public func start(when: Double, offset: Double, duration: Double) {
        start.store(max(0, when.isFinite ? when : 0).bitPattern, ordering: .relaxed)
        self.offset.store(max(0, offset.isFinite ? offset : 0).bitPattern, ordering: .relaxed)
        self.duration.store((duration.isNaN ? .infinity : max(0, duration)).bitPattern, ordering: .relaxed)
        stop.store(Double.infinity.bitPattern, ordering: .relaxed)
        generation.add(1, ordering: .releasing)
    }

    /// Stops playback at `when` s (at once when that has passed). Ignored before the first start
    /// (where Web Audio throws InvalidStateError): a start clears any stop time anyway.
    public func stop(when: Double) {
        guard generation.load(ordering: .acquiring) != 0 else { return }
        stop.store(max(0, when.isNaN ? 0 : when).bitPattern, ordering: .releasing)
    }

    /// Web Audio's `loop`, `loopStart`, `loopEnd` (seconds into the buffer).
    public var loop: Bool {
        get { loopFlag.load(ordering: .relaxed) }
        set { loopFlag.store(newValue, ordering: .relaxed) }
    }
    public var loopStart: Double {
        get { Double(bitPattern: loopStartBits.load(ordering: .relaxed)) }
        set { loopStartBits.store(newValue.bitPattern, ordering: .relaxed) }
    }
    public var loopEnd: Double {
        get { Double(bitPattern: loopEndBits.load(ordering: .relaxed)) }
        set { loopEndBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// Whether playback ended (the buffer's end, the duration or the stop time reached) since the last start.
    public var ended: Bool {
        let current = generation.load(ordering: .acquiring)
        return current != 0 && endedGeneration.load(ordering: .acquiring) == current
    }

    /// Whether the playback of `generation` (a value of ``generation``) ended.
    func hasEnded(generation: UInt64) -> Bool {
        generation != 0 && endedGeneration.load(ordering: .acquiring) == generation
    }

    // MARK: Render thread

    /// The fields of the latest start (read after ``generation``).
    var startSeconds: Double { Double(bitPattern: start.load(ordering: .relaxed)) }
    var offsetSeconds: Double { Double(bitPattern: offset.load(ordering: .relaxed)) }
    var durationSeconds: Double { Double(bitPattern: duration.load(ordering: .relaxed)) }
    var stopSeconds: Double { Double(bitPattern: stop.load(ordering: .acquiring)) }
    /// Records that the playback of `generation` (the start the kernel is playing) ended.
    func markEnded(generation: UInt64) { endedGeneration.store(generation, ordering: .releasing) }
}
