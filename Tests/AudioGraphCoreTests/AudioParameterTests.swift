// Tests of AudioParameter: range checks, change-list ramps per sample, values set from another thread.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore

final class AudioParameterTests: XCTestCase {
    func testOutOfRangeThrowsAndKeepsTheValue() throws {
        let n = GainNode("g", gain: 2)
        let p = try XCTUnwrap(n.parameter("gain"))
        XCTAssertThrowsError(try p.setValue(10.5)) {
            XCTAssertEqual($0 as? AudioGraphError, .parameterOutOfRange(node: "g", address: "gain", value: 10.5, range: "0...10"))
        }
        XCTAssertThrowsError(try p.setValue(-0.001))
        XCTAssertThrowsError(try p.setValue(.nan))
        XCTAssertThrowsError(try n.setParameter("nope", 1)) {
            XCTAssertEqual($0 as? AudioGraphError, .parameterNotFound(node: "g", address: "nope"))
        }
        XCTAssertEqual(p.value, 2)
        try p.setValue(10)
        try p.setValue(0)
        XCTAssertEqual(p.value, 0)
    }

    func testAddressesParseAndPrint() {
        // Text from users goes through the failable parser (a literal would be the programmer's form).
        func parse(_ text: String) -> ParameterAddress? { ParameterAddress(text) }
        XCTAssertEqual(parse("input.1.pan"), ParameterAddress(scope: .input, element: 1, name: "pan"))
        XCTAssertEqual(parse("band.0.gain"), ParameterAddress(scope: .global, element: 0, group: "band", name: "gain"))
        XCTAssertEqual(parse("listener.x")?.description, "listener.x")
        XCTAssertEqual(parse("output.0.volume")?.description, "output.0.volume")
        XCTAssertNil(parse("input.x.pan"))
        XCTAssertNil(parse("input.01.pan"))
        XCTAssertNil(parse("a..b"))
        XCTAssertNil(parse("input.pan"))
        // A literal is the same address, parsed once.
        let literal: ParameterAddress = "input.1.pan"
        XCTAssertEqual(literal, parse("input.1.pan"))
    }

    func testChangeListRampIsLinearPerSample() throws {
        let a = CountingSourceNode("a", value: 1)
        let g = try makeGraph([a, TestOutputNode()], "a -> out", sampleRate: 48000, maximumFramesPerSlice: 64)
        try g.initialize()
        try g.start()
        _ = renderSlice(g, frames: 64)
        // 0.01 s at 48 kHz: N = 480 frames from 1 to 3.
        g.enqueue(.setParameter(node: "a", address: "value", value: 3, rampDuration: 0.01))
        try g.update(waitUntilApplied: false)
        var got: [Float] = []
        for n in [64, 1, 60, 63, 64, 64, 64, 64, 64, 44] { got += renderSlice(g, frames: n) }  // 592 frames, odd slice sizes
        let N = 480.0
        for (i, v) in got.enumerated() {
            let expected = i < 480 ? 1 + (3 - 1) * Double(i) / N : 3
            XCTAssertEqual(Double(v), expected, accuracy: 1e-6, "frame \(i)")
        }
        XCTAssertEqual(a.parameters[0].value, 3, "the control side reads the target")
        // A ramp down from the reached value, with a step (0 s) afterwards.
        g.enqueue(.setParameter(node: "a", address: "value", value: -1, rampDuration: 64.0 / 48000))
        try g.update(waitUntilApplied: false)
        let down = renderSlice(g, frames: 64)
        for i in 0..<64 { XCTAssertEqual(Double(down[i]), 3 - 4 * Double(i) / 64, accuracy: 1e-6) }
        g.enqueue(.setParameter(node: "a", address: "value", value: 5, rampDuration: 0))
        try g.update(waitUntilApplied: false)
        XCTAssertEqual(renderSlice(g, frames: 3), [5, 5, 5])
    }

    func testANewRampStartsFromWhereTheRunningOneIs() throws {
        let a = CountingSourceNode("a", value: 0)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        g.enqueue(.setParameter(node: "a", address: "value", value: 10, rampDuration: 100 / 48000))
        try g.update(waitUntilApplied: false)
        let up = renderSlice(g, frames: 50)
        XCTAssertEqual(up, (0..<50).map { Float(10 * Double($0) / 100) })
        // Interrupted halfway (value 5 at the next frame): down to -5 over 20 frames.
        g.enqueue(.setParameter(node: "a", address: "value", value: -5, rampDuration: 20 / 48000))
        try g.update(waitUntilApplied: false)
        let down = renderSlice(g, frames: 24)
        for i in 0..<24 {
            XCTAssertEqual(Double(down[i]), i < 20 ? 5 + (-5 - 5) * Double(i) / 20 : -5, accuracy: 1e-6, "frame \(i)")
        }
    }

    func testDirectSetValueWithRampFrames() throws {
        let a = CountingSourceNode("a", value: 0)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        _ = renderSlice(g, frames: 8)
        try a.parameters[0].setValue(10, rampFrames: 10)
        let x = renderSlice(g, frames: 12)
        XCTAssertEqual(x, (0..<12).map { Float(min(10, $0)) })
    }

    func testValueSetFromAnotherThreadIsPickedUpAtTheNextSlice() throws {
        let a = CountingSourceNode("a", value: 1)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
        let p = a.parameters[0]
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? p.setValue(42)
            done.signal()
        }.start()
        done.wait()
        XCTAssertEqual(renderSlice(g, frames: 4), [42, 42, 42, 42])
        // Many writes between two slices: the last one wins.
        let writers = DispatchGroup()
        for k in 0..<8 {
            writers.enter()
            Thread {
                for j in 0..<1000 { try? p.setValue(Double((k * 1000 + j) % 500)) }
                writers.leave()
            }.start()
        }
        writers.wait()
        try p.setValue(7)
        XCTAssertEqual(renderSlice(g, frames: 4), [7, 7, 7, 7])
    }
}

/// The sequence lock under real threads.
final class AudioParameterConcurrencyTests: XCTestCase {
    /// A writer thread publishes pairs that belong together (value v, ramp of v frames) while this
    /// thread polls like the render thread: every pair it accepts must be one that was written
    /// (ramp == value), and the sequence numbers it sees only grow. On x86-64 (TSO) a torn pair
    /// cannot show up even without the writer's release fence; on ARM64 the missing fence let the
    /// data stores overtake the odd count, which this check catches there.
    func testConcurrencyReaderNeverSeesATornPair() throws {
        let info = ParameterInfo(address: ParameterAddress(name: "x"), unit: .generic, minValue: 0, maxValue: 1e9, defaultValue: 0)
        let p = AudioParameter(info: info, nodeID: "n")
        let stop = Atomic<Bool>(false)
        let writes = Atomic<Int>(0)
        let writer = Thread {
            var v = 1
            while !stop.load(ordering: .relaxed) {
                try! p.setValue(Double(v), rampFrames: v)
                v = v % 1_000_000 + 1
                writes.wrappingAdd(1, ordering: .relaxed)
            }
        }
        writer.start()
        var last: UInt64 = 0
        var accepted = 0, torn = 0, backwards = 0
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline || accepted < 1000 {
            for _ in 0..<1000 {
                guard let r = p.poll(after: last) else { continue }
                if r.sequence < last { backwards += 1 }
                if r.rampFrames != Int(r.value) { torn += 1 }
                last = r.sequence
                accepted += 1
            }
        }
        stop.store(true, ordering: .relaxed)
        while !writer.isFinished { usleep(1000) }
        print("seqlock: \(writes.load(ordering: .relaxed)) writes, \(accepted) pairs read, \(torn) torn")
        XCTAssertEqual(torn, 0, "the reader accepted a pair that was never written")
        XCTAssertEqual(backwards, 0)
        XCTAssertGreaterThan(writes.load(ordering: .relaxed), 1000, "the writer hardly ran: nothing was raced")
    }
}
