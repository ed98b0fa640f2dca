// A parameter's automation events compiled into an immutable, per-sample (a-rate) evaluable timeline.

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The Web Audio API AudioParam automation model: a list of ``AutomationEvent``s, validated,
/// ordered and compiled once, then evaluated per sample on the graph timeline.
///
/// Rules (https://www.w3.org/TR/webaudio/#computation-of-value, #dom-audioparam-*), applied to
/// the events in the order given, as if the AudioParam methods were called in that order before
/// rendering starts (the context time 0):
/// - Events are sorted by time (a ramp's end time, otherwise its start time); events with equal
///   times keep their insertion order.
/// - Values are single precision, as the AudioParam methods' `float` arguments are: every value
///   (and the default value) is rounded to the nearest `Float` first, so a value beyond the
///   `Float` range is not finite (an error) and a ramp to 1e-100 is a ramp to 0.
/// - `cancelScheduledValues(c)` removes the events scheduled so far whose time is >= `c`, and a
///   value curve in progress at `c` (`T <= c < T + D`) as well.
/// - An event whose time falls in a value curve's `[T, T + D)`, or a curve that would contain
///   another event's time in `(T, T + D)` or overlap another curve, is an error.
/// - Linear and exponential ramps run from the previous event's end point: a `setValue`'s or
///   ramp's value and time, a curve's last value at `T + D`, a `setTarget`'s start time and the
///   value it started from (the ramp then replaces the `setTarget`, as it does in Web Audio
///   when the ramp is scheduled before the `setTarget` starts). Without a previous event, a ramp
///   starts from the default value at time 0 (Web Audio's implicit `setValueAtTime` at the
///   current time).
/// - `setTarget` starts from the value the timeline has at its start time.
/// - A value curve holds its last value after it ends; before the first event the value is the
///   default value.
/// - An exponential ramp whose start value is 0 or of the other sign than its end value holds
///   its start value until its end time, then the end value (a ramp *to* 0 is an error).
///
/// Thread safety: immutable after `init` (which allocates and may throw, so call it on the
/// control thread). ``value(atTime:)`` and ``fill(_:startFrame:count:sampleRate:)`` may be called
/// from any thread concurrently; `fill` is real-time safe (no allocation, locks or throwing).
/// The storage is freed in `deinit`; release the last reference off the render thread.
public final class AutomationTimeline: @unchecked Sendable {

    /// The kind of a compiled entry.
    @usableFromInline enum Kind: UInt8 { case setValue, linearRamp, exponentialRamp, setTarget, valueCurve }

    /// One compiled event, with the start point that the rules above give it.
    @usableFromInline struct Entry {
        @usableFromInline var kind: Kind
        /// Sort time: ramp end time, else start time.
        @usableFromInline var time: Double
        /// setValue value, ramp end value, setTarget target, curve last value.
        @usableFromInline var value: Double
        /// Ramp T0 (previous end time), setTarget start, curve start.
        @usableFromInline var startTime: Double
        /// Ramp V0 (previous end value), setTarget V0.
        @usableFromInline var startValue: Double
        /// setTarget time constant; curve duration.
        @usableFromInline var timeConstantOrDuration: Double
        /// Curve values offset and count in `curveValues`.
        @usableFromInline var curveOffset: Int
        @usableFromInline var curveCount: Int
        /// Position of the event in the list given to init (for messages).
        @usableFromInline var sourceIndex: Int
    }

    // MARK: Immutable after init (read by any thread)

    /// The value before the first event (the parameter's current value when the events were set).
    public let defaultValue: Double
    /// Number of compiled events (after cancellations).
    public let eventCount: Int
    /// The largest value the timeline takes: ramps, targets and curves move between the values
    /// of their events, so it is the largest of those and the default value.
    public let largestValue: Double?
    @usableFromInline let entries: UnsafeMutablePointer<Entry>
    @usableFromInline let curveValues: UnsafeMutablePointer<Double>
    let curveValueCount: Int

    /// Validates, orders and compiles `events` (control thread: allocates, may throw).
    ///
    /// - Parameters:
    ///   - events: the events in the order the AudioParam methods would be called.
    ///   - defaultValue: the value before the first event and the start of a leading ramp.
    /// - Throws: ``AutomationError`` naming the first offending event's index.
    public init(events: [AutomationEvent], defaultValue: Double) throws(AutomationError) {
        self.defaultValue = Double(Float(defaultValue))
        // 1. Insert one by one, as the API would, checking arguments and overlap rules.
        var list: [(event: AutomationEvent, index: Int)] = []
        for (index, given) in events.enumerated() {
            let event = given.roundedToFloat
            try Self.validateArguments(event, index: index)
            if case .cancelScheduledValues(let c) = event {
                list.removeAll { $0.event.isCancelled(by: c) }
                continue
            }
            let t = event.time
            for (other, _) in list {
                if case .setValueCurve(_, let ct, let cd) = other, t >= ct, t < ct + cd {
                    throw .overlapsValueCurve(index: index)
                }
                if case .setValueCurve(_, _, let d) = event {
                    if other.time > t && other.time < t + d { throw .overlapsValueCurve(index: index) }
                    if case .setValueCurve(_, let ct, _) = other, ct >= t, ct < t + d {
                        throw .overlapsValueCurve(index: index)
                    }
                }
            }
            // Stable insertion: after every event with time <= t.
            let position = list.firstIndex { $0.event.time > t } ?? list.count
            list.insert((event, index), at: position)
        }

        // 2. Compile: entries with their start points.
        var compiled: [Entry] = []
        var curves: [Double] = []
        compiled.reserveCapacity(list.count)
        for (event, index) in list {
            // The end point of the previous entry: where a following ramp starts.
            let previousEnd: (time: Double, value: Double)
            if let p = compiled.last {
                switch p.kind {
                case .setValue, .linearRamp, .exponentialRamp: previousEnd = (p.time, p.value)
                case .setTarget: previousEnd = (p.startTime, p.startValue)
                case .valueCurve: previousEnd = (p.startTime + p.timeConstantOrDuration, p.value)
                }
            } else {
                previousEnd = (0, self.defaultValue)
            }
            var e = Entry(kind: .setValue, time: event.time, value: 0, startTime: event.time,
                          startValue: 0, timeConstantOrDuration: 0, curveOffset: 0, curveCount: 0,
                          sourceIndex: index)
            switch event {
            case .setValue(let v, _):
                e.value = v
            case .linearRamp(let v, _):
                e.kind = .linearRamp
                e.value = v
                e.startTime = previousEnd.time
                e.startValue = previousEnd.value
            case .exponentialRamp(let v, _):
                e.kind = .exponentialRamp
                e.value = v
                e.startTime = previousEnd.time
                e.startValue = previousEnd.value
            case .setTarget(let target, _, let tau):
                e.kind = .setTarget
                e.value = target
                e.timeConstantOrDuration = tau
                // The value the timeline has at the start time, from the earlier entries alone.
                e.startValue = compiled.last.map { Self.valueAfterStart(of: $0, at: event.time, curves: curves) }
                    ?? self.defaultValue
            case .setValueCurve(let values, _, let duration):
                e.kind = .valueCurve
                e.value = values[values.count - 1]
                e.timeConstantOrDuration = duration
                e.curveOffset = curves.count
                e.curveCount = values.count
                curves.append(contentsOf: values)
            case .cancelScheduledValues:
                continue
            }
            compiled.append(e)
        }
        eventCount = compiled.count
        largestValue = max(compiled.reduce(self.defaultValue) { top, e in
            switch e.kind {
            case .setValue, .valueCurve: return max(top, e.value)
            case .linearRamp, .exponentialRamp, .setTarget: return max(top, max(e.value, e.startValue))
            }
        }, curves.max() ?? -.infinity)
        entries = .allocate(capacity: max(compiled.count, 1))
        entries.initialize(from: compiled, count: compiled.count)
        curveValueCount = curves.count
        curveValues = .allocate(capacity: max(curves.count, 1))
        curveValues.initialize(from: curves, count: curves.count)
    }

    deinit {
        entries.deinitialize(count: eventCount)
        entries.deallocate()
        curveValues.deinitialize(count: curveValueCount)
        curveValues.deallocate()
    }

    private static func validateArguments(_ event: AutomationEvent, index: Int) throws(AutomationError) {
        func checkTime(_ t: Double) throws(AutomationError) {
            if !t.isFinite || t < 0 { throw .invalidTime(index: index) }
        }
        func checkValue(_ v: Double) throws(AutomationError) {
            if !v.isFinite { throw .nonFiniteValue(index: index) }
        }
        switch event {
        case .setValue(let v, let t), .linearRamp(let v, let t):
            try checkValue(v); try checkTime(t)
        case .exponentialRamp(let v, let t):
            try checkValue(v); try checkTime(t)
            if v == 0 { throw .exponentialRampToZero(index: index) }
        case .setTarget(let v, let t, let tau):
            try checkValue(v); try checkTime(t)
            if !tau.isFinite || tau < 0 { throw .invalidTimeConstant(index: index) }
        case .setValueCurve(let values, let t, let d):
            try checkTime(t)
            if values.count < 2 { throw .curveTooShort(index: index) }
            for v in values { try checkValue(v) }
            if !d.isFinite || d <= 0 { throw .invalidDuration(index: index) }
        case .cancelScheduledValues(let t):
            try checkTime(t)
        }
    }

    /// The value of entry `e` at time `t >= e.time` when no later event intervenes.
    @inline(__always) @usableFromInline
    static func valueAfterStart(of e: Entry, at t: Double, curves: UnsafePointer<Double>) -> Double {
        switch e.kind {
        case .setValue, .linearRamp, .exponentialRamp:
            return e.value
        case .setTarget:
            let tau = e.timeConstantOrDuration
            if tau == 0 { return e.value }
            return e.value + (e.startValue - e.value) * exp(-(t - e.startTime) / tau)
        case .valueCurve:
            let t0 = e.startTime, duration = e.timeConstantOrDuration, n = e.curveCount
            if t >= t0 + duration { return e.value }
            // A subnormal duration makes the scale infinite, and infinity times the 0 at the
            // curve's start was NaN (an oscillator then stayed NaN). Such a curve is over as soon
            // as it starts: its last value, as when `t0 + duration` rounds to `t0`.
            let scale = Double(n - 1) / duration
            if !scale.isFinite { return e.value }
            let position = scale * (t - t0)
            // A tiny duration makes `position` huge or infinite: clamp before converting.
            var k = position < Double(n - 2) ? Int(max(0, position).rounded(.down)) : n - 2
            if k < 0 { k = 0 }
            let c = curves + e.curveOffset
            let v0 = c[k], v1 = c[k + 1]
            return v0 + (v1 - v0) * (position - Double(k))
        }
    }

    private static func valueAfterStart(of e: Entry, at t: Double, curves: [Double]) -> Double {
        // Padded so that the buffer is never empty (its address is then never nil).
        (curves + [0]).withUnsafeBufferPointer { valueAfterStart(of: e, at: t, curves: $0.baseAddress!) }
    }

    /// The value at time `t` given `j`, the index of the last entry with time <= t (-1: none).
    @inline(__always) @usableFromInline
    func value(at t: Double, lastStarted j: Int) -> Double {
        let next = j + 1
        if next < eventCount {
            let n = entries[next]
            switch n.kind {
            case .linearRamp:
                let t0 = n.startTime, t1 = n.time, v0 = n.startValue, v1 = n.value
                if t < t0 { return j >= 0 ? Self.valueAfterStart(of: entries[j], at: t, curves: UnsafePointer(curveValues)) : defaultValue }
                return v0 + (v1 - v0) * ((t - t0) / (t1 - t0))
            case .exponentialRamp:
                let t0 = n.startTime, t1 = n.time, v0 = n.startValue, v1 = n.value
                if t < t0 { return j >= 0 ? Self.valueAfterStart(of: entries[j], at: t, curves: UnsafePointer(curveValues)) : defaultValue }
                // From 0 or across 0 the ramp holds its start value until its end.
                if v0 == 0 || (v0 < 0) != (v1 < 0) { return v0 }
                return v0 * pow(v1 / v0, (t - t0) / (t1 - t0))
            default:
                break
            }
        }
        if j < 0 { return defaultValue }
        return Self.valueAfterStart(of: entries[j], at: t, curves: UnsafePointer(curveValues))
    }

    /// Index of the last entry with time <= t, or -1 (binary search).
    @inline(__always) @usableFromInline
    func lastStartedIndex(at t: Double) -> Int {
        var lo = 0, hi = eventCount  // first index with time > t lies in lo...hi
        while lo < hi {
            let mid = (lo + hi) >> 1
            if entries[mid].time <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }

    /// The parameter's value at time `t` (seconds on the graph timeline). Real-time safe.
    public func value(atTime t: Double) -> Double {
        value(at: t, lastStarted: lastStartedIndex(at: t))
    }

    /// Writes the value at `t = frame / sampleRate` for the frames `startFrame ..< startFrame +
    /// count` into `out` (a-rate).
    ///
    /// Each sample is a pure function of its frame index, so the output is bit-identical however
    /// a range is split into calls. Real-time safe: no allocation, no locks, no throwing.
    public func fill(_ out: UnsafeMutablePointer<Float>, startFrame: Int64, count: Int, sampleRate: Double) {
        if count <= 0 { return }
        if eventCount == 0 {
            out.update(repeating: Float(defaultValue), count: count)
            return
        }
        var j = lastStartedIndex(at: Double(startFrame) / sampleRate)
        for i in 0..<count {
            let t = Double(startFrame + Int64(i)) / sampleRate
            while j + 1 < eventCount && entries[j + 1].time <= t { j += 1 }
            out[i] = Float(value(at: t, lastStarted: j))
        }
    }

    /// The first frame at or after which the value no longer changes, or nil when it changes
    /// forever (a `setTarget` as the last event). Lets a node skip per-sample work once the
    /// automation has settled. Real-time safe.
    public func steadyFrame(sampleRate: Double) -> Int64? {
        if eventCount == 0 { return 0 }
        let last = entries[eventCount - 1]
        let end: Double
        switch last.kind {
        case .setValue, .linearRamp, .exponentialRamp: end = last.time
        case .valueCurve: end = last.startTime + last.timeConstantOrDuration
        case .setTarget:
            if last.timeConstantOrDuration != 0 { return nil }
            end = last.time
        }
        return FrameCount.frames(seconds: end, sampleRate: sampleRate, rounding: .up)
    }
}
