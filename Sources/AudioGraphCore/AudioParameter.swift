// A real-time parameter: set from any thread without locking, read by the render thread.
import AudioGraphRealtime
import Synchronization

/// A node parameter (cf. `AudioUnitParameter`): a number with an address, unit, range and default.
///
/// Setting a value from a control thread publishes it through a sequence lock made of atomics;
/// the render thread picks it up at the start of its next slice without ever waiting (a write in
/// progress is simply picked up one slice later). A `rampDuration` makes the render thread move
/// linearly from the current value to the new one over that time, per sample.
///
/// Thread safety: `setValue` may be called from any thread (writers are serialised among
/// themselves by a mutex that the render thread never touches); `value` reads the last value set.
/// The render side reads through ``ParameterRenderState``.
public final class AudioParameter: @unchecked Sendable {
    /// Address, unit, range and default.
    public let info: ParameterInfo
    /// The id of the node the parameter belongs to (for messages).
    public let nodeID: String
    /// Scheduled values on the graph timeline, or nil. Set before the graph starts.
    public internal(set) var automation: (any ParameterAutomation)?

    // MARK: Shared (atomic)
    private let sequence = Atomic<UInt64>(0)
    private let valueBits: Atomic<UInt64>
    private let rampFrames = Atomic<UInt64>(0)
    /// The last value set by either path (direct or change list), for control-side reads only.
    private let lastSetBits: Atomic<UInt64>

    // MARK: Control threads only
    private let writers = ControlLock<Void>(())

    public init(info: ParameterInfo, nodeID: String, initialValue: Double? = nil) {
        self.info = info
        self.nodeID = nodeID
        valueBits = Atomic((initialValue ?? info.defaultValue).bitPattern)
        lastSetBits = Atomic((initialValue ?? info.defaultValue).bitPattern)
    }

    /// The address as the spec writes it (`input.1.pan`).
    public var address: String { info.address.description }

    /// The last value set (not a ramp's intermediate value).
    public var value: Double { Double(bitPattern: lastSetBits.load(ordering: .acquiring)) }

    /// Records a value set through a change list (delivered to the kernel by the render plan).
    func recordListValue(_ v: Double) { lastSetBits.store(v.bitPattern, ordering: .releasing) }

    /// Sets the value, reaching it after `rampFrames` frames of linear ramp (0: an exact step at
    /// the next slice). Lock-free for the render thread; throws when out of range.
    public func setValue(_ newValue: Double, rampFrames frames: Int = 0) throws(AudioGraphError) {
        guard info.contains(newValue) else {
            throw .parameterOutOfRange(node: nodeID, address: address, value: newValue, range: info.rangeDescription)
        }
        writers.withLock { _ in
            // The writer half of the sequence lock (the reader is `poll`). The odd count must be
            // visible before any data store: a release *fence* after the increment orders it before
            // the stores that follow (a release increment alone only orders what came before it,
            // so on ARM64 the data could land first and a reader take a torn pair for a consistent
            // one). A reader that sees a new data store acquires the fence through its own acquire
            // fence and then reads an odd or newer count, and drops the pair. The closing increment
            // releases the data to readers that acquire the even count.
            sequence.wrappingAdd(1, ordering: .relaxed)  // odd: a write is in progress
            atomicMemoryFence(ordering: .releasing)
            valueBits.store(newValue.bitPattern, ordering: .relaxed)
            rampFrames.store(UInt64(max(0, frames)), ordering: .relaxed)
            sequence.wrappingAdd(1, ordering: .releasing)  // even: consistent again
            lastSetBits.store(newValue.bitPattern, ordering: .releasing)
        }
    }

    /// Render thread: a new (value, ramp) published since `lastSequence`, if any and consistent.
    /// Real-time safe: never waits; a concurrent write is seen at the next call.
    @inline(__always)
    func poll(after lastSequence: UInt64) -> (sequence: UInt64, value: Double, rampFrames: Int)? {
        // The reader half of the sequence lock: acquire the even count, read the pair, then an
        // acquire fence so the second count load cannot move above the data loads (it pairs with
        // the writer's release fence); a changed count means a write overlapped: try next slice.
        let s1 = sequence.load(ordering: .acquiring)
        if s1 == lastSequence || s1 & 1 == 1 { return nil }
        let v = valueBits.load(ordering: .relaxed)
        let r = rampFrames.load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        let s2 = sequence.load(ordering: .relaxed)
        guard s1 == s2 else { return nil }
        return (s1, Double(bitPattern: v), Int(truncatingIfNeeded: r))
    }
}

/// Scheduled values of a parameter (Web Audio AudioParam automation), evaluated per sample.
///
/// Thread safety: implementations are immutable after creation; `fill` is real-time safe.
public protocol ParameterAutomation: AnyObject, Sendable {
    /// Writes the value at frames `startFrame ..< startFrame + count` (time = frame / sampleRate)
    /// into `out`. Must not allocate, lock or wait, and must depend only on the frame index.
    func fill(_ out: UnsafeMutablePointer<Float>, startFrame: Int64, count: Int, sampleRate: Double)
    /// The largest value the automation ever takes, or nil when it cannot say (then the
    /// parameter's range maximum is assumed). Lets the graph bound what a value costs before
    /// rendering (the input a `rate` makes a node pull).
    var largestValue: Double? { get }
}

extension ParameterAutomation {
    /// Unknown by default.
    public var largestValue: Double? { nil }
}

extension AudioParameter {
    /// The largest value the parameter can take while the graph renders from what is set now:
    /// its value and its automation's largest (the range maximum for automation that cannot
    /// say). Control threads.
    public var largestScheduledValue: Double {
        guard let automation else { return value }
        return max(value, automation.largestValue ?? info.maxValue)
    }
}
