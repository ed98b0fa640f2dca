// Decoding automation events and checking them against the Web Audio AudioParam rules.
import AudioGraphCore

extension DescriptionReader {
    /// Decodes one parameter's event list and checks it as Web Audio would when the calls are made
    /// in file order: times >= 0 and finite (no upper limit, as in Web Audio), values in range, exponential ramps never reach 0 (values are
    /// single precision, as in Web Audio: one that rounds to 0 as a `Float` is 0),
    /// setTarget time constants > 0, curves of >= 2 values over a duration > 0 that overlap no
    /// other event.
    func decodeAutomation(_ elements: [JSONValue], info: ParameterInfo, initialValue: Double,
                          at location: String) -> [AutomationEvent] {
        var decoded: [AutomationEvent] = []
        /// The timeline as Web Audio keeps it: sorted by time, equal times in insertion order.
        var timeline: [AutomationEvent] = []
        for (index, element) in elements.enumerated() {
            let base = Self.join(location, index: index)
            guard case .object(let wrapper) = element, wrapper.members.count == 1, let member = wrapper.members.first else {
                if case .object(let wrapper) = element, wrapper.members.count > 1 {
                    report(base, .invalidAutomation("an event object has exactly one key (one of \(AutomationEvent.names.joined(separator: ", "))), found \(wrapper.members.count)"))
                } else if case .object = element {
                    report(base, .invalidAutomation("an empty event (write one of \(AutomationEvent.names.joined(separator: ", ")))"))
                } else {
                    report(base, .wrongType(expected: "an event object", found: element.typeDescription))
                }
                continue
            }
            let name = member.key
            let path = Self.join(base, name)
            guard AutomationEvent.names.contains(name) else {
                report(path, .unknownKey(name, allowed: AutomationEvent.names))
                continue
            }
            guard let event = decodeEvent(name, member.value, info: info, at: path) else { continue }
            guard checkEvent(event, against: timeline, at: path) else { continue }
            decoded.append(event)
            if case .cancelScheduledValues(let cancelTime) = event {
                timeline.removeAll { $0.isCancelled(by: cancelTime) }
            } else {
                let position = timeline.firstIndex { $0.time > event.time } ?? timeline.endIndex
                timeline.insert(event, at: position)
            }
        }
        // The engine compiles the same list with AutomationTimeline: run it too, so that a list
        // this loader accepts is one the engine accepts (one set of ordering rules).
        if decoded.count == elements.count, !decoded.isEmpty {
            do {
                _ = try AutomationTimeline(events: decoded, defaultValue: initialValue)
            } catch {
                let index = Self.index(of: error)
                let path = index < elements.count ? "\(Self.join(location, index: index)).\(decoded[index].name)" : location
                report(path, .invalidAutomation(Self.explain(error)))
                return []
            }
        }
        return decoded
    }

    static func index(of error: AutomationError) -> Int {
        switch error {
        case .invalidTime(let index), .nonFiniteValue(let index), .exponentialRampToZero(let index),
             .invalidTimeConstant(let index), .curveTooShort(let index),
             .invalidDuration(let index), .overlapsValueCurve(let index):
            return index
        }
    }

    static func explain(_ error: AutomationError) -> String {
        switch error {
        case .invalidTime: return "the time must be finite and not negative"
        case .nonFiniteValue: return "the value must be finite and within the single-precision range (±3.4e38)"
        case .exponentialRampToZero: return "an exponential ramp cannot reach 0 (values are single precision: below 1.4e-45 is 0)"
        case .invalidTimeConstant: return "timeConstant must be greater than 0"
        case .curveTooShort: return "a value curve needs at least 2 values"
        case .invalidDuration: return "duration must be greater than 0"
        case .overlapsValueCurve: return "the event overlaps a setValueCurveAtTime"
        }
    }

    private func decodeEvent(_ name: String, _ body: JSONValue, info: ParameterInfo, at path: String) -> AutomationEvent? {
        let keys: [String]
        switch name {
        case "setTargetAtTime": keys = ["target", "startTime", "timeConstant"]
        case "setValueCurveAtTime": keys = ["values", "startTime", "duration"]
        case "cancelScheduledValues": keys = ["cancelTime"]
        default: keys = ["value", "time"]
        }
        guard let object = object(body, at: path, allowed: keys, required: keys) else { return nil }
        guard keys.allSatisfy({ object[$0] != nil }) else { return nil }
        func at(_ key: String) -> String { Self.join(path, key) }
        func time(_ key: String) -> Double? {
            guard let number = number(object[key]!, at: at(key)) else { return nil }
            guard number >= 0 else {
                report(at(key), .invalidAutomation("\(key) \(ParameterInfo.format(number)) must not be negative"))
                return nil
            }
            // Any finite time, as Web Audio accepts (the W3C `large-endtime` cases): the
            // timeline computes in seconds and its frame conversions saturate (FrameCount).
            return number
        }
        func valueField(_ key: String) -> Double? {
            guard let number = number(object[key]!, at: at(key)) else { return nil }
            return checkParameterValue(number, info, at: at(key)) ? number : nil
        }
        if info.unit == .boolean, name != "setValueAtTime", name != "cancelScheduledValues" {
            report(path, .invalidAutomation("\(info.address) is 0 or 1: only setValueAtTime and cancelScheduledValues apply to it"))
            return nil
        }
        switch name {
        case "setValueAtTime", "linearRampToValueAtTime", "exponentialRampToValueAtTime":
            let v = valueField("value")
            let t = time("time")
            guard let v, let t else { return nil }
            if name == "setValueAtTime" { return .setValue(value: v, time: t) }
            if name == "linearRampToValueAtTime" { return .linearRamp(value: v, time: t) }
            if Float(v) == 0 {
                report(at("value"), .invalidAutomation(v == 0 ? "an exponential ramp cannot reach 0"
                    : "an exponential ramp cannot reach 0 (\(ParameterInfo.format(v)) is 0 in single precision)"))
                return nil
            }
            return .exponentialRamp(value: v, time: t)
        case "setTargetAtTime":
            let target = valueField("target")
            let start = time("startTime")
            var constant: Double?
            if let number = number(object["timeConstant"]!, at: at("timeConstant")) {
                if number > 0 { constant = number } else {
                    report(at("timeConstant"), .invalidAutomation("timeConstant \(ParameterInfo.format(number)) must be greater than 0"))
                }
            }
            guard let target, let start, let constant else { return nil }
            return .setTarget(target: target, startTime: start, timeConstant: constant)
        case "setValueCurveAtTime":
            let start = time("startTime")
            var duration: Double?
            if let number = number(object["duration"]!, at: at("duration")) {
                if number > 0 { duration = number } else {
                    report(at("duration"), .invalidAutomation("duration \(ParameterInfo.format(number)) must be greater than 0"))
                }
            }
            var values: [Double]?
            if let array = array(object["values"]!, at: at("values")) {
                if array.count < 2 {
                    report(at("values"), .invalidAutomation("a value curve needs at least 2 values, found \(array.count)"))
                } else {
                    var collected: [Double] = []
                    for (index, element) in array.enumerated() {
                        let elementPath = Self.join(at("values"), index: index)
                        if let number = number(element, at: elementPath), checkParameterValue(number, info, at: elementPath) {
                            collected.append(number)
                        }
                    }
                    if collected.count == array.count { values = collected }
                }
            }
            guard let start, let duration, let values else { return nil }
            return .setValueCurve(values: values, startTime: start, duration: duration)
        default:
            guard let t = time("cancelTime") else { return nil }
            return .cancelScheduledValues(cancelTime: t)
        }
    }

    /// Checks an event against the events already scheduled (Web Audio's overlap rules; an
    /// exponential ramp from 0 or across 0 is accepted: it holds its start value).
    private func checkEvent(_ event: AutomationEvent, against timeline: [AutomationEvent], at path: String) -> Bool {
        if case .cancelScheduledValues = event { return true }
        let t = event.time
        // No event may fall inside an existing curve [T, T + D).
        for existing in timeline {
            if case .setValueCurve(_, let start, let duration) = existing, t >= start, t < start + duration {
                report(path, .invalidAutomation("\(event.name) at \(ParameterInfo.format(t)) s falls inside the setValueCurveAtTime from \(ParameterInfo.format(start)) s to \(ParameterInfo.format(start + duration)) s"))
                return false
            }
        }
        // A curve may not contain another event strictly inside (T, T + D).
        if case .setValueCurve(_, let start, let duration) = event {
            for existing in timeline where existing.time > start && existing.time < start + duration {
                report(path, .invalidAutomation("setValueCurveAtTime from \(ParameterInfo.format(start)) s to \(ParameterInfo.format(start + duration)) s overlaps the \(existing.name) at \(ParameterInfo.format(existing.time)) s"))
                return false
            }
        }
        return true
    }
}
