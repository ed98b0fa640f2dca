// Programmer errors stop with one line naming the call, the node and the reason (where Apple raises).
import AudioGraphKit
import AudioGraphTesting
import XCTest

final class AudioEngineErrorTests: XCTestCase {
    func testConnectingANodeThatIsNotAttachedStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testConnectingANodeThatIsNotAttachedStops",
                        expected: ["connect(_:to:fromBus:toBus:format:)", "AudioMixerNode", "not attached"]) {
            let engine = AudioEngine()
            engine.connect(AudioMixerNode(), to: engine.mainMixerNode, format: nil)
        }
    }

    func testABusThatDoesNotExistStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testABusThatDoesNotExistStops",
                        expected: ["connect(_:to:fromBus:toBus:format:)", "AudioUnitDelay", "output bus 3 does not exist"]) {
            let engine = AudioEngine()
            let delay = AudioUnitDelay()
            engine.attach(delay)
            engine.connect(delay, to: engine.mainMixerNode, fromBus: 3, toBus: 0, format: nil)
        }
    }

    func testDisconnectingAnInputBusThatDoesNotExistStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testDisconnectingAnInputBusThatDoesNotExistStops",
                              expected: ["disconnectNodeInput(_:bus:)", "AudioUnitDelay", "input bus 2 does not exist (the node has 1)"]) {
            let engine = AudioEngine()
            let delay = AudioUnitDelay()
            engine.attach(delay)
            engine.disconnectNodeInput(delay, bus: 2)
        }
    }

    func testDisconnectingAnOutputBusThatDoesNotExistStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testDisconnectingAnOutputBusThatDoesNotExistStops",
                              expected: ["disconnectNodeOutput(_:bus:)", "AudioUnitDelay", "output bus 1 does not exist (the node has 1)"]) {
            let engine = AudioEngine()
            let delay = AudioUnitDelay()
            engine.attach(delay)
            engine.disconnectNodeOutput(delay, bus: 1)
        }
    }

    func testDisconnectingANodeThatIsNotAttachedStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testDisconnectingANodeThatIsNotAttachedStops",
                              expected: ["disconnectNodeOutput(_:)", "AudioUnitDelay", "not attached"]) {
            AudioEngine().disconnectNodeOutput(AudioUnitDelay())
        }
    }

    func testACycleStops() throws {
        try assertEngineStops("AudioEngineErrorTests/testACycleStops", expected: ["connect(_:to:fromBus:toBus:format:)", "AudioUnitDelay \"delay1\"", "cycle"]) {
            let engine = AudioEngine()
            let a = AudioUnitDelay(), b = AudioUnitDelay()
            engine.attach(a)
            engine.attach(b)
            engine.connect(a, to: b, format: nil)
            engine.connect(b, to: a, format: nil)
        }
    }
}
