// Why a list of AudioParam automation events is rejected (thrown on the control thread only).

/// Why a list of automation events is invalid. `index` is the position of the offending event
/// in the list given to ``AutomationTimeline/init(events:defaultValue:)``.
public enum AutomationError: Error, Sendable, Hashable {
    /// A time is negative, infinite or NaN.
    case invalidTime(index: Int)
    /// A value is infinite or NaN, or beyond the `Float` range.
    case nonFiniteValue(index: Int)
    /// `exponentialRamp` to the value 0, or to a value that rounds to 0 as a `Float` (a
    /// RangeError in Web Audio).
    case exponentialRampToZero(index: Int)
    /// `setTarget` with a negative or non-finite time constant.
    case invalidTimeConstant(index: Int)
    /// `setValueCurve` with fewer than 2 values.
    case curveTooShort(index: Int)
    /// `setValueCurve` with a duration that is not strictly positive and finite.
    case invalidDuration(index: Int)
    /// An event whose time falls inside a value curve's `[startTime, startTime + duration)`, or a
    /// value curve that would contain another event's time (NotSupportedError in Web Audio).
    case overlapsValueCurve(index: Int)
}
