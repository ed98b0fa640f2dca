// One scheduled parameter event, with the meaning of the Web Audio API's AudioParam methods.

/// An automation event. Times are seconds on the graph's output timeline.
///
/// Thread safety: a value type; safe to share between threads.
public enum AutomationEventDescription: Sendable, Hashable {
    /// `setValueAtTime(value, time)`: jump to `value` at `time`.
    case setValueAtTime(value: Double, time: Double)
    /// `linearRampToValueAtTime(value, time)`: linear ramp from the previous event, reaching `value` at `time`.
    case linearRampToValueAtTime(value: Double, time: Double)
    /// `exponentialRampToValueAtTime(value, time)`: exponential ramp reaching `value` at `time`.
    case exponentialRampToValueAtTime(value: Double, time: Double)
    /// `setTargetAtTime(target, startTime, timeConstant)`: first-order approach to `target`.
    case setTargetAtTime(target: Double, startTime: Double, timeConstant: Double)
    /// `setValueCurveAtTime(values, startTime, duration)`: values spread linearly over `duration`.
    case setValueCurveAtTime(values: [Double], startTime: Double, duration: Double)
    /// `cancelScheduledValues(cancelTime)`: removes the events at or after `cancelTime`.
    case cancelScheduledValues(cancelTime: Double)

    /// The method's name as written in a graph file.
    public var name: String {
        switch self {
        case .setValueAtTime: return "setValueAtTime"
        case .linearRampToValueAtTime: return "linearRampToValueAtTime"
        case .exponentialRampToValueAtTime: return "exponentialRampToValueAtTime"
        case .setTargetAtTime: return "setTargetAtTime"
        case .setValueCurveAtTime: return "setValueCurveAtTime"
        case .cancelScheduledValues: return "cancelScheduledValues"
        }
    }

    /// The event's time: `time`, `startTime` or `cancelTime`.
    public var time: Double {
        switch self {
        case .setValueAtTime(_, let time), .linearRampToValueAtTime(_, let time),
             .exponentialRampToValueAtTime(_, let time):
            return time
        case .setTargetAtTime(_, let startTime, _), .setValueCurveAtTime(_, let startTime, _):
            return startTime
        case .cancelScheduledValues(let cancelTime):
            return cancelTime
        }
    }

    /// Every method name, in the order of the spec.
    public static let names = ["setValueAtTime", "linearRampToValueAtTime", "exponentialRampToValueAtTime",
                               "setTargetAtTime", "setValueCurveAtTime", "cancelScheduledValues"]
}

extension AutomationEventDescription {
    /// The engine's automation event for this description (one mapping, used by the validator
    /// and by the node factory).
    public var automationEvent: AutomationEvent {
        switch self {
        case let .setValueAtTime(value, time): return .setValue(value: value, time: time)
        case let .linearRampToValueAtTime(value, time): return .linearRamp(value: value, time: time)
        case let .exponentialRampToValueAtTime(value, time): return .exponentialRamp(value: value, time: time)
        case let .setTargetAtTime(target, startTime, timeConstant):
            return .setTarget(target: target, startTime: startTime, timeConstant: timeConstant)
        case let .setValueCurveAtTime(values, startTime, duration):
            return .setValueCurve(values: values, startTime: startTime, duration: duration)
        case .cancelScheduledValues(let cancelTime): return .cancelScheduledValues(cancelTime: cancelTime)
        }
    }
}
