// Programmer errors stop with one line naming the call, the node and the reason (where Apple raises).
import AudioGraphKit
import AudioGraphTesting
import XCTest

final class AudioEngineErrorTests: XCTestCase {
    /// Runs `body` in a child copy of this test and checks it stopped with one line holding every
    /// piece of `expected`.
    private func assertStops(_ test: String, expected: [String], file: StaticString = #filePath, line: UInt = #line,
                             _ body: () -> Void) throws {
        if TrapCheck.isChild {
            body()
            return
        }
        let r = try TrapCheck.rerun("AudioGraphKitTests.AudioEngineErrorTests/\(test)")
        XCTAssertTrue(r.stoppedBySignal, "status \(r.status): \(r.standardError)", file: file, line: line)
        let lines = r.lines(containing: "AudioEngine: ")
        XCTAssertEqual(lines.count, 1, r.standardError, file: file, line: line)
        for piece in expected {
            XCTAssertTrue(lines.first?.contains(piece) == true, "\(piece) missing from: \(lines)", file: file, line: line)
        }
    }

    func testConnectingANodeThatIsNotAttachedStops() throws {
        try assertStops("testConnectingANodeThatIsNotAttachedStops",
                        expected: ["connect(_:to:fromBus:toBus:format:)", "AudioMixerNode", "not attached"]) {
            let engine = AudioEngine()
            engine.connect(AudioMixerNode(), to: engine.mainMixerNode, format: nil)
        }
    }

    func testABusThatDoesNotExistStops() throws {
        try assertStops("testABusThatDoesNotExistStops",
                        expected: ["connect(_:to:fromBus:toBus:format:)", "AudioUnitDelay", "output bus 3 does not exist"]) {
            let engine = AudioEngine()
            let delay = AudioUnitDelay()
            engine.attach(delay)
            engine.connect(delay, to: engine.mainMixerNode, fromBus: 3, toBus: 0, format: nil)
        }
    }

    func testASecondTapOnABusStops() throws {
        try assertStops("testASecondTapOnABusStops", expected: ["installTap", "AudioMixerNode", "already has a tap"]) {
            let engine = AudioEngine()
            engine.mainMixerNode.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
            engine.mainMixerNode.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in }
        }
    }

    func testAValueOutsideItsRangeStops() throws {
        try assertStops("testAValueOutsideItsRangeStops", expected: ["delayTime", "AudioUnitDelay", "outside 0.0...2.0"]) {
            AudioUnitDelay().delayTime = 5
        }
    }

    func testACycleStops() throws {
        try assertStops("testACycleStops", expected: ["connect(_:to:fromBus:toBus:format:)", "AudioUnitDelay \"delay1\"", "cycle"]) {
            let engine = AudioEngine()
            let a = AudioUnitDelay(), b = AudioUnitDelay()
            engine.attach(a)
            engine.attach(b)
            engine.connect(a, to: b, format: nil)
            engine.connect(b, to: a, format: nil)
        }
    }
}
