// One scheduled AudioParam automation event (the Web Audio API's AudioParam methods as values).

/// One automation event of a parameter, with the meaning of the Web Audio API's AudioParam
/// method of the same name (https://www.w3.org/TR/webaudio/#AudioParam).
///
/// Times are seconds on the graph timeline (frame / sampleRate).
public enum AutomationEvent: Sendable, Hashable {
    /// `setValueAtTime(value, time)`: the value jumps to `value` at `time` and holds.
    case setValue(value: Double, time: Double)
    /// `linearRampToValueAtTime(value, time)`: a straight line from the previous event's value
    /// and time to `value` at `time`.
    case linearRamp(value: Double, time: Double)
    /// `exponentialRampToValueAtTime(value, time)`: `V0 * (V1/V0)^((t-T0)/(T1-T0))` from the
    /// previous event's value and time. `value` must not be 0; a ramp that starts from 0 or
    /// crosses 0 holds its start value until `time` (as in Web Audio).
    case exponentialRamp(value: Double, time: Double)
    /// `setTargetAtTime(target, startTime, timeConstant)`:
    /// `V1 + (V0 - V1) * exp(-(t - T0) / timeConstant)` from `startTime`; `timeConstant` 0 jumps.
    case setTarget(target: Double, startTime: Double, timeConstant: Double)
    /// `setValueCurveAtTime(values, startTime, duration)`: linear interpolation over `values`
    /// (at least 2) spread evenly over `duration` (> 0) seconds; the last value holds afterwards.
    case setValueCurve(values: [Double], startTime: Double, duration: Double)
    /// `cancelScheduledValues(cancelTime)`: removes every event scheduled so far whose time is at
    /// or after `cancelTime`, and a value curve in progress at `cancelTime`.
    case cancelScheduledValues(cancelTime: Double)

    /// The time the event is sorted by: the ramp's end time, the start time otherwise.
    public var time: Double {
        switch self {
        case .setValue(_, let t), .linearRamp(_, let t), .exponentialRamp(_, let t): return t
        case .setTarget(_, let t, _), .setValueCurve(_, let t, _): return t
        case .cancelScheduledValues(let t): return t
        }
    }

    /// Whether `cancelScheduledValues(cancelTime)` removes this event: its time is at or after
    /// `cancelTime`, or it is a value curve in progress at `cancelTime` (`T <= cancelTime < T + D`).
    public func isCancelled(by cancelTime: Double) -> Bool {
        if case .setValueCurve(_, let t, let d) = self, t <= cancelTime, cancelTime < t + d { return true }
        return time >= cancelTime
    }

    /// The event with every value rounded to the nearest `Float` (the AudioParam methods take
    /// `float` values; times stay double).
    public var roundedToFloat: AutomationEvent {
        func r(_ v: Double) -> Double { Double(Float(v)) }
        switch self {
        case .setValue(let v, let t): return .setValue(value: r(v), time: t)
        case .linearRamp(let v, let t): return .linearRamp(value: r(v), time: t)
        case .exponentialRamp(let v, let t): return .exponentialRamp(value: r(v), time: t)
        case .setTarget(let v, let t, let tau): return .setTarget(target: r(v), startTime: t, timeConstant: tau)
        case .setValueCurve(let values, let t, let d): return .setValueCurve(values: values.map(r), startTime: t, duration: d)
        case .cancelScheduledValues: return self
        }
    }

    /// The AudioParam method's name, as a graph file writes the event (`setValueAtTime`, ...).
    public var name: String {
        switch self {
        case .setValue: return "setValueAtTime"
        case .linearRamp: return "linearRampToValueAtTime"
        case .exponentialRamp: return "exponentialRampToValueAtTime"
        case .setTarget: return "setTargetAtTime"
        case .setValueCurve: return "setValueCurveAtTime"
        case .cancelScheduledValues: return "cancelScheduledValues"
        }
    }

    /// Every method name, in the order of the spec.
    public static let names = ["setValueAtTime", "linearRampToValueAtTime", "exponentialRampToValueAtTime",
                               "setTargetAtTime", "setValueCurveAtTime", "cancelScheduledValues"]
}
