// Tests of AutomationTimeline against the Web Audio AudioParam formulas written out here.

import Foundation
import XCTest
@testable import AudioGraphCore

final class AutomationTimelineTests: XCTestCase {

    func timeline(_ events: [AutomationEvent], _ defaultValue: Double = 0.5) throws -> AutomationTimeline {
        try AutomationTimeline(events: events, defaultValue: defaultValue)
    }

    func assertError(_ events: [AutomationEvent], _ expected: AutomationError,
                     file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try AutomationTimeline(events: events, defaultValue: 1)
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error, expected, file: file, line: line)
        }
    }

    /// Sample times covering [0, end] including the event times themselves.
    func times(upTo end: Double, step: Double = 0.01) -> [Double] {
        stride(from: 0.0, through: end, by: step).map { $0 }
    }

    func testNoEventsGivesDefault() throws {
        let tl = try timeline([], 0.25)
        XCTAssertEqual(tl.value(atTime: 0), 0.25)
        XCTAssertEqual(tl.value(atTime: 100), 0.25)
    }

    func testSetValue() throws {
        let tl = try timeline([.setValue(value: 2, time: 1), .setValue(value: -3, time: 2)])
        for t in times(upTo: 3) {
            let exp: Double = t < 1 ? 0.5 : (t < 2 ? 2 : -3)
            XCTAssertEqual(tl.value(atTime: t), exp, "t=\(t)")
        }
        XCTAssertEqual(tl.value(atTime: 1), 2)  // an event applies at its own time
    }

    func testLinearRampFromPreviousEvent() throws {
        let tl = try timeline([.setValue(value: 1, time: 0.5), .linearRamp(value: 3, time: 1.5)])
        for t in times(upTo: 2.5) {
            let exp: Double
            if t < 0.5 { exp = 0.5 } else if t < 1.5 { exp = 1 + (3 - 1) * (t - 0.5) / (1.5 - 0.5) } else { exp = 3 }
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-12, "t=\(t)")
        }
    }

    func testRampWithoutPreviousStartsFromDefaultAtZero() throws {
        let tl = try timeline([.linearRamp(value: 4, time: 2)], 1)
        for t in times(upTo: 3) {
            let exp = t < 2 ? 1 + (4 - 1) * t / 2 : 4
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-12, "t=\(t)")
        }
        let ex = try timeline([.exponentialRamp(value: 8, time: 3)], 1)
        XCTAssertEqual(ex.value(atTime: 1), 1 * pow(8.0, 1.0 / 3.0), accuracy: 1e-12)
    }

    func testExponentialRamp() throws {
        let tl = try timeline([.setValue(value: 100, time: 0.25), .exponentialRamp(value: 1000, time: 2.25)])
        for t in times(upTo: 3) {
            let exp: Double
            if t < 0.25 { exp = 0.5 } else if t < 2.25 { exp = 100 * pow(1000.0 / 100.0, (t - 0.25) / 2) } else { exp = 1000 }
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-9, "t=\(t)")
        }
        // Negative values on both ends are fine.
        let neg = try timeline([.setValue(value: -1, time: 0), .exponentialRamp(value: -4, time: 1)])
        XCTAssertEqual(neg.value(atTime: 0.5), -1 * pow(4.0, 0.5), accuracy: 1e-12)
    }

    func testSetTarget() throws {
        let tl = try timeline([.setValue(value: 1, time: 0), .setTarget(target: 0.2, startTime: 1, timeConstant: 0.3)])
        for t in times(upTo: 3) {
            let target = Double(Float(0.2))   // AudioParam values are single precision
            let exp = t < 1 ? 1 : target + (1 - target) * exp(-(t - 1) / 0.3)
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-12, "t=\(t)")
        }
        // Time constant 0 jumps to the target.
        let jump = try timeline([.setTarget(target: 7, startTime: 1, timeConstant: 0)])
        XCTAssertEqual(jump.value(atTime: 0.99), 0.5)
        XCTAssertEqual(jump.value(atTime: 1), 7)
    }

    func testSetTargetStartsFromValueReachedByPreviousEvents() throws {
        // A linear ramp 0 -> 1 over [0, 2], then setTarget at 3 (the ramp has ended: V0 = 1),
        // then a second setTarget at 4 that starts from the value the first one reached.
        let tl = try timeline([
            .setValue(value: 0, time: 0), .linearRamp(value: 1, time: 2),
            .setTarget(target: 5, startTime: 3, timeConstant: 0.5),
            .setTarget(target: -1, startTime: 4, timeConstant: 0.25),
        ])
        let reachedAt4 = 5 + (1 - 5) * exp(-(4 - 3) / 0.5)
        for t in times(upTo: 5) {
            let exp: Double
            if t < 2 { exp = t / 2 } else if t < 3 { exp = 1 } else if t < 4 { exp = 5 + (1 - 5) * Foundation.exp(-(t - 3) / 0.5) } else {
                exp = -1 + (reachedAt4 - -1) * Foundation.exp(-(t - 4) / 0.25)
            }
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-12, "t=\(t)")
        }
    }

    func testSetValueCurve() throws {
        let v: [Double] = [0, 1, 0.5, 2]
        let t0 = 1.0, td = 3.0
        let tl = try timeline([.setValueCurve(values: v, startTime: t0, duration: td)])
        for t in times(upTo: 5, step: 0.007) {
            let exp: Double
            if t < t0 { exp = 0.5 } else if t >= t0 + td { exp = 2 } else {
                let n = Double(v.count)
                let k = Int(((n - 1) / td * (t - t0)).rounded(.down))
                let frac = (n - 1) / td * (t - t0) - Double(k)
                exp = v[k] + (v[k + 1] - v[k]) * frac
            }
            XCTAssertEqual(tl.value(atTime: t), exp, accuracy: 1e-12, "t=\(t)")
        }
        XCTAssertEqual(tl.value(atTime: 2), 1, accuracy: 1e-12)   // a curve point is hit exactly
        XCTAssertEqual(tl.value(atTime: 100), 2)                  // holds the last value
    }

    func testRampAfterCurveStartsAtCurveEnd() throws {
        let tl = try timeline([.setValueCurve(values: [1, 3], startTime: 0, duration: 1),
                               .linearRamp(value: 7, time: 3)])
        XCTAssertEqual(tl.value(atTime: 0.5), 2, accuracy: 1e-12)
        for t in [1.0, 1.5, 2.0, 2.9] {
            XCTAssertEqual(tl.value(atTime: t), 3 + (7 - 3) * (t - 1) / 2, accuracy: 1e-12, "t=\(t)")
        }
        XCTAssertEqual(tl.value(atTime: 3), 7)
    }

    func testRampAfterSetTargetStartsFromTheValueItReachedAtItsStart() throws {
        // The ramp's previous event is the setTarget at 1: the ramp runs from (1, value there) to (3, 0).
        let tl = try timeline([.setValue(value: 2, time: 0),
                               .setTarget(target: 10, startTime: 1, timeConstant: 0.5),
                               .linearRamp(value: 0, time: 3)])
        XCTAssertEqual(tl.value(atTime: 0.5), 2)
        for t in [1.0, 1.5, 2.0, 2.5] {
            XCTAssertEqual(tl.value(atTime: t), 2 + (0 - 2) * (t - 1) / 2, accuracy: 1e-12, "t=\(t)")
        }
        XCTAssertEqual(tl.value(atTime: 3.5), 0)
    }

    func testEqualTimesKeepInsertionOrder() throws {
        let tl = try timeline([.setValue(value: 1, time: 1), .setValue(value: 2, time: 1)])
        XCTAssertEqual(tl.value(atTime: 1), 2)
        let tl2 = try timeline([.setValue(value: 2, time: 1), .setValue(value: 1, time: 1)])
        XCTAssertEqual(tl2.value(atTime: 1), 1)
        // Events given out of order are sorted by time.
        let tl3 = try timeline([.setValue(value: 3, time: 2), .setValue(value: 1, time: 1)])
        XCTAssertEqual(tl3.value(atTime: 1.5), 1)
        XCTAssertEqual(tl3.value(atTime: 2.5), 3)
    }

    func testCancelScheduledValues() throws {
        let tl = try timeline([.setValue(value: 1, time: 1), .setValue(value: 2, time: 2),
                               .linearRamp(value: 9, time: 3),
                               .cancelScheduledValues(cancelTime: 2)])
        XCTAssertEqual(tl.eventCount, 1)
        XCTAssertEqual(tl.value(atTime: 2.5), 1)  // at-or-after 2 removed (the ramp ends at 3)
        // Cancelling exactly at an event time removes it; events after the cancel are kept.
        let tl2 = try timeline([.setValue(value: 1, time: 1), .cancelScheduledValues(cancelTime: 1),
                                .setValue(value: 4, time: 1.5)])
        XCTAssertEqual(tl2.value(atTime: 1.2), 0.5)
        XCTAssertEqual(tl2.value(atTime: 1.6), 4)
        // Cancelling a curve frees its range for new events.
        let tl3 = try timeline([.setValueCurve(values: [0, 1], startTime: 1, duration: 2),
                                .cancelScheduledValues(cancelTime: 0.5),
                                .setValue(value: 3, time: 2)])
        XCTAssertEqual(tl3.value(atTime: 2), 3)
    }

    /// Web Audio (#dom-audioparam-cancelscheduledvalues): a setValueCurveAtTime in progress at
    /// the cancel time is cancelled too, and the value returns to what the earlier events give.
    func testCancelRemovesAValueCurveInProgress() throws {
        let curve = AutomationEvent.setValueCurve(values: [2, 4], startTime: 1, duration: 2)
        let tl = try timeline([.setValue(value: 7, time: 0.5), curve, .cancelScheduledValues(cancelTime: 2)])
        XCTAssertEqual(tl.eventCount, 1)
        XCTAssertEqual(tl.value(atTime: 1.5), 7)
        XCTAssertEqual(tl.value(atTime: 2.5), 7)
        // In progress includes the start; the end (T + D) is not in progress.
        XCTAssertEqual(try timeline([curve, .cancelScheduledValues(cancelTime: 1)]).eventCount, 0)
        let kept = try timeline([curve, .cancelScheduledValues(cancelTime: 3)])
        XCTAssertEqual(kept.eventCount, 1)
        XCTAssertEqual(kept.value(atTime: 2), 3)   // 2 + (4 - 2) * (2 - 1) / 2
        // Its span is free again.
        XCTAssertNoThrow(try timeline([curve, .cancelScheduledValues(cancelTime: 2.9), .setValue(value: 1, time: 1.5)]))
    }

    /// Web Audio (#dom-audioparam-exponentialramptovalueattime): "If V0 and V1 have opposite
    /// signs or if V0 is zero, then v(t) = V0 for T0 <= t < T1", then V1.
    func testExponentialRampFromZeroOrAcrossZeroHoldsItsStartValue() throws {
        let fromZero = try timeline([.setValue(value: 0, time: 0), .exponentialRamp(value: 5, time: 1)])
        for t in times(upTo: 0.99) { XCTAssertEqual(fromZero.value(atTime: t), 0, "t=\(t)") }
        XCTAssertEqual(fromZero.value(atTime: 1), 5)
        XCTAssertEqual(fromZero.value(atTime: 2), 5)
        let across = try timeline([.setValue(value: 2, time: 1), .exponentialRamp(value: -3, time: 2)])
        XCTAssertEqual(across.value(atTime: 0.5), 0.5)
        for t in stride(from: 1.0, to: 2, by: 0.01) { XCTAssertEqual(across.value(atTime: t), 2, "t=\(t)") }
        XCTAssertEqual(across.value(atTime: 2), -3)
        // From the default value 0 (no earlier event): held from time 0.
        let fromDefault = try timeline([.exponentialRamp(value: -1, time: 1)], 0)
        XCTAssertEqual(fromDefault.value(atTime: 0.5), 0)
        XCTAssertEqual(fromDefault.value(atTime: 1), -1)
        // Same sign: still the exponential formula V0 (V1/V0)^((t-T0)/(T1-T0)).
        let normal = try timeline([.setValue(value: -2, time: 0), .exponentialRamp(value: -8, time: 1)])
        XCTAssertEqual(normal.value(atTime: 0.5), -2 * pow(4, 0.5), accuracy: 1e-12)
    }

    /// AudioParam values are `float`: every value is rounded to single precision first.
    func testValuesAreRoundedToSinglePrecision() throws {
        let tl = try timeline([.setValue(value: 0.1, time: 0), .linearRamp(value: 1e-100, time: 1)], 0.3)
        XCTAssertEqual(tl.defaultValue, Double(Float(0.3)))
        XCTAssertEqual(tl.value(atTime: 0), Double(Float(0.1)))
        XCTAssertEqual(tl.value(atTime: 1), 0)   // a ramp to 1e-100 is a ramp to 0
        XCTAssertEqual(tl.value(atTime: 0.5), Double(Float(0.1)) / 2, accuracy: 1e-15)
        let curve = try timeline([.setValueCurve(values: [1.1, 1e-60], startTime: 0, duration: 1),
                                  .setTarget(target: 0.7, startTime: 2, timeConstant: 0)])
        XCTAssertEqual(curve.value(atTime: 0), Double(Float(1.1)))
        XCTAssertEqual(curve.value(atTime: 1.5), 0)
        XCTAssertEqual(curve.value(atTime: 2), Double(Float(0.7)))
    }

    func testCurveOverlapRules() throws {
        let curve = AutomationEvent.setValueCurve(values: [0, 1], startTime: 1, duration: 2)
        assertError([curve, .setValue(value: 1, time: 2)], .overlapsValueCurve(index: 1))
        assertError([curve, .setValue(value: 1, time: 1)], .overlapsValueCurve(index: 1))   // [T, T+D) includes T
        assertError([curve, .linearRamp(value: 1, time: 2.5)], .overlapsValueCurve(index: 1))
        assertError([curve, .setTarget(target: 1, startTime: 1.5, timeConstant: 1)], .overlapsValueCurve(index: 1))
        XCTAssertNoThrow(try timeline([curve, .setValue(value: 1, time: 3)]))               // T+D is outside
        XCTAssertNoThrow(try timeline([curve, .setValue(value: 1, time: 0.5)]))
        // A curve may not contain an existing event's time strictly inside (T, T+D)...
        assertError([.setValue(value: 1, time: 2), curve], .overlapsValueCurve(index: 1))
        // ...but an event exactly at T is allowed.
        XCTAssertNoThrow(try timeline([.setValue(value: 1, time: 1), curve]))
        // Two curves may not overlap.
        assertError([curve, .setValueCurve(values: [0, 1], startTime: 2.5, duration: 1)], .overlapsValueCurve(index: 1))
        assertError([curve, .setValueCurve(values: [0, 1], startTime: 0.5, duration: 1)], .overlapsValueCurve(index: 1))
        XCTAssertNoThrow(try timeline([curve, .setValueCurve(values: [0, 1], startTime: 3, duration: 1)]))
    }

    func testInvalidArguments() {
        assertError([.exponentialRamp(value: 0, time: 1)], .exponentialRampToZero(index: 0))
        // Values are single precision: 1e-100 is 0, 1e39 is beyond the range.
        assertError([.exponentialRamp(value: 1e-100, time: 1)], .exponentialRampToZero(index: 0))
        assertError([.setValue(value: 1e39, time: 1)], .nonFiniteValue(index: 0))
        assertError([.setValueCurve(values: [1, -1e39], startTime: 0, duration: 1)], .nonFiniteValue(index: 0))
        assertError([.setValue(value: 1, time: -1)], .invalidTime(index: 0))
        assertError([.setValue(value: .nan, time: 1)], .nonFiniteValue(index: 0))
        assertError([.setTarget(target: 1, startTime: 0, timeConstant: -1)], .invalidTimeConstant(index: 0))
        assertError([.setValueCurve(values: [1], startTime: 0, duration: 1)], .curveTooShort(index: 0))
        assertError([.setValueCurve(values: [1, 2], startTime: 0, duration: 0)], .invalidDuration(index: 0))
    }

    /// A timeline using every event type, for the fill tests.
    func richTimeline() throws -> AutomationTimeline {
        try timeline([
            .setValue(value: 220, time: 0.01),
            .exponentialRamp(value: 880, time: 0.05),
            .linearRamp(value: 100, time: 0.08),
            .setTarget(target: 300, startTime: 0.09, timeConstant: 0.01),
            .setValueCurve(values: [10, 500, 20, 40, 1000], startTime: 0.12, duration: 0.031),
            .setValue(value: 5, time: 0.17),
            .linearRamp(value: 6, time: 0.19),
        ], 440)
    }

    func testFillMatchesValueAtFrameTimes() throws {
        let tl = try richTimeline()
        let sr = 48000.0, n = 12000
        let out = UnsafeMutablePointer<Float>.allocate(capacity: n)
        defer { out.deallocate() }
        tl.fill(out, startFrame: 0, count: n, sampleRate: sr)
        for i in 0..<n {
            XCTAssertEqual(out[i], Float(tl.value(atTime: Double(i) / sr)), "frame \(i)")
        }
        XCTAssertEqual(out[0], 440)
        XCTAssertEqual(out[n - 1], 6)
    }

    func testFillIsBitIdenticalForAnySplit() throws {
        let tl = try richTimeline()
        let sr = 44100.0, n = 10000, start: Int64 = 17
        var results: [[Float]] = []
        for slice in [1, 128, 4096, 333] {
            var buffer = [Float](repeating: .nan, count: n)
            buffer.withUnsafeMutableBufferPointer { p in
                var done = 0
                while done < n {
                    let c = min(slice, n - done)
                    tl.fill(p.baseAddress! + done, startFrame: start + Int64(done), count: c, sampleRate: sr)
                    done += c
                }
            }
            results.append(buffer)
        }
        for r in results.dropFirst() {
            XCTAssertTrue(zip(results[0], r).allSatisfy { $0.bitPattern == $1.bitPattern })
        }
        XCTAssertFalse(results[0].contains { $0.isNaN })
    }

    func testSteadyFrame() throws {
        XCTAssertEqual(try richTimeline().steadyFrame(sampleRate: 1000), 190)
        XCTAssertNil(try timeline([.setTarget(target: 1, startTime: 0, timeConstant: 1)]).steadyFrame(sampleRate: 1000))
        XCTAssertEqual(try timeline([]).steadyFrame(sampleRate: 1000), 0)
    }

    // MARK: Extreme arguments (issue 10)

    /// A value curve lasting 5e-324 s (the smallest double) makes the curve position infinite:
    /// the value is the curve's last one from its start on, and filling never traps.
    func testValueCurveWithTheTiniestDurationJumpsToItsEnd() throws {
        let tl = try timeline([.setValueCurve(values: [100, 1000, 300], startTime: 0.001, duration: .leastNonzeroMagnitude)], 50)
        XCTAssertEqual(tl.value(atTime: 0), 50)
        XCTAssertEqual(tl.value(atTime: 0.001), 300)
        XCTAssertEqual(tl.value(atTime: 1), 300)
        var out = [Float](repeating: -1, count: 480)
        out.withUnsafeMutableBufferPointer { tl.fill($0.baseAddress!, startFrame: 0, count: 480, sampleRate: 48000) }
        XCTAssertEqual(out[47], 50)
        XCTAssertEqual(Set(out[48...]), [300])
    }

    /// An event at 1e300 s: the steady frame saturates instead of trapping, and the value before
    /// the event is the default.
    func testHugeEventTimesSaturate() throws {
        let tl = try timeline([.linearRamp(value: 2, time: 1e300)], 1)
        XCTAssertEqual(tl.steadyFrame(sampleRate: 48000), .max)
        XCTAssertEqual(tl.value(atTime: 10), 1 + (2 - 1) * (10 / 1e300))
        var out = [Float](repeating: 0, count: 4)
        out.withUnsafeMutableBufferPointer { tl.fill($0.baseAddress!, startFrame: Int64.max - 10, count: 4, sampleRate: 48000) }
        XCTAssertEqual(out, [1, 1, 1, 1])
    }

    // MARK: Total arithmetic (issue 22)

    /// A curve starting at 0 lasting 1e-320 s (subnormal): `(n - 1) / duration` is infinite, and
    /// infinity times the 0 of the first sample was NaN (an oscillator then stayed NaN). Like the
    /// 5e-324 s curve above, it is over as soon as it starts: its last value from frame 0 on.
    func testValueCurveWithSubnormalDurationAtTimeZeroIsFinite() throws {
        // 0x7E8p-1074 is 1e-320 and 0xCAp-1074 is 1e-321, exactly (subnormal decimal literals warn).
        let tl = try timeline([.setValueCurve(values: [100, 1000, 300], startTime: 0, duration: 0x7E8p-1074)], 50)
        XCTAssertEqual(tl.value(atTime: 0), 300)
        XCTAssertEqual(tl.value(atTime: 0xCAp-1074), 300)
        XCTAssertEqual(tl.value(atTime: 1e-6), 300)
        var out = [Float](repeating: -1, count: 48)
        out.withUnsafeMutableBufferPointer { tl.fill($0.baseAddress!, startFrame: 0, count: 48, sampleRate: 48000) }
        XCTAssertEqual(Set(out), [300])
    }

    /// Every combination of extreme durations, time constants, start times and values (the WPT
    /// audioparam edge cases and the fuzzer's values: subnormals, the smallest and largest
    /// doubles, times near and at the Float limit) fills only finite values.
    func testExtremeArgumentsNeverProduceNonFiniteValues() throws {
        let lengths: [Double] = [.leastNonzeroMagnitude, 0x7E8p-1074, 2.2250738585072014e-308, 1e-300, 1e-12, 1 / 48000.0, 1,
                                 1e12, 1e300, .greatestFiniteMagnitude]
        let times: [Double] = [0, .leastNonzeroMagnitude, 0x7E8p-1074, 1e-300, 1 / 96000.0, 0.0005, 1, 1e300, .greatestFiniteMagnitude]
        let values: [Double] = [-3.4028234663852886e38, -1, -1e-45, 1e-45, 1e-38, 1, 3.4028234663852886e38]
        var checked = 0
        func check(_ events: [AutomationEvent], _ defaultValue: Double) {
            guard let tl = try? AutomationTimeline(events: events, defaultValue: defaultValue) else { return }
            var out = [Float](repeating: 0, count: 64)
            for start: Int64 in [0, 1, 47_990, Int64.max - 64] {
                out.withUnsafeMutableBufferPointer { tl.fill($0.baseAddress!, startFrame: start, count: 64, sampleRate: 48000) }
                if let bad = out.firstIndex(where: { !$0.isFinite }) {
                    XCTFail("\(events) default \(defaultValue) from frame \(start): \(out[bad]) at \(bad)")
                    return
                }
            }
            for t in times where !tl.value(atTime: t).isFinite {
                XCTFail("\(events) at \(t): \(tl.value(atTime: t))"); return
            }
            _ = tl.steadyFrame(sampleRate: 48000)
            checked += 1
        }
        for d in lengths {
            for t in times {
                for (a, b) in [(values[0], values[6]), (values[3], values[5]), (values[2], values[4])] {
                    check([.setValueCurve(values: [a, b, a], startTime: t, duration: d)], b)
                    check([.setValue(value: a, time: 0), .setTarget(target: b, startTime: t, timeConstant: d)], a)
                    check([.setTarget(target: b, startTime: t, timeConstant: d), .linearRamp(value: a, time: t + d)], a)
                    check([.setValue(value: a, time: t), .exponentialRamp(value: b, time: t + d)], b)
                    check([.setValue(value: b, time: t), .linearRamp(value: a, time: t + d)], a)
                    check([.setValueCurve(values: [a, b], startTime: t, duration: d), .linearRamp(value: a, time: min(t + 2 * d, .greatestFiniteMagnitude)),
                           .exponentialRamp(value: b, time: .greatestFiniteMagnitude)], a)
                }
            }
        }
        XCTAssertGreaterThan(checked, 1000)
    }
}
