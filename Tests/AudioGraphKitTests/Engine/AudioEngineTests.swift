// Tests of AudioEngine through the public API: manual rendering, mixing, change lists, taps, sinks, errors.
@testable import AudioGraphCore
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// A phase a source block advances on the render thread (its state lives here, not in the test).
final class SinePhase: @unchecked Sendable {
    var frame: Int64 = 0
}

/// The formula the sources below render: `amplitude * sin(2π f n / rate)`, n from 0.
func sineSample(_ n: Int64, frequency: Double, rate: Double, amplitude: Double = 0.5) -> Float {
    Float(amplitude * sin(2 * Double.pi * frequency * Double(n) / rate))
}

/// A source node of `channels` channels at `rate` playing the formula, each channel alike.
func makeSineSource(frequency: Double, rate: Double = 48000, channels: AudioChannelCount = 2,
                    amplitude: Double = 0.5) -> AudioSourceNode {
    let phase = SinePhase()
    let format = AudioFormat(standardFormatWithSampleRate: rate, channels: channels)!
    return AudioSourceNode(format: format) { _, _, frameCount, data in
        let list = UnsafeMutableAudioBufferListPointer(data)
        for i in 0..<Int(frameCount) {
            let v = sineSample(phase.frame + Int64(i), frequency: frequency, rate: rate, amplitude: amplitude)
            for b in list { b.mData!.assumingMemoryBound(to: Float.self)[i] = v }
        }
        phase.frame += Int64(frameCount)
        return noErr
    }
}

final class AudioEngineTests: XCTestCase {
    let stereo48 = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!

    // MARK: Manual rendering

    func testManualOfflineRendersASourceThroughTheMainMixerExactly() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertTrue(engine.isRunning)
        let out = try render(engine, frames: 3000, piece: 700)
        // A stereo input at pan 0 and volume 1 passes the mixer unchanged (Web Audio's law).
        for c in 0..<2 {
            for n in 0..<3000 { XCTAssertEqual(out[c][n], sineSample(Int64(n), frequency: 440, rate: 48000), "ch \(c) frame \(n)") }
        }
        XCTAssertEqual(engine.manualRenderingSampleTime, 3000)
        engine.stop()
        XCTAssertFalse(engine.isRunning)
    }

    func testRequestsAboveTheMaximumAreRefusedWithAStatusNotTruncated() throws {
        let engine = try makeManualEngine(maximum: 512)
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo48, frameCapacity: 4096))
        buffer.frameLength = 7
        XCTAssertEqual(try engine.renderOffline(513, to: buffer), .error)
        XCTAssertEqual(buffer.frameLength, 7, "nothing rendered")
        XCTAssertEqual(engine.manualRenderingSampleTime, 0)
        let small = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo48, frameCapacity: 100))
        XCTAssertEqual(try engine.renderOffline(200, to: small), .error, "more than the buffer holds")
        XCTAssertEqual(try engine.renderOffline(512, to: buffer), .success)
        XCTAssertEqual(buffer.frameLength, 512)
    }

    func testRenderOfflineThrowsWhenNotInManualModeOrNotRunning() throws {
        let engine = try makeManualEngine()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo48, frameCapacity: 64))
        XCTAssertThrowsError(try engine.renderOffline(64, to: buffer)) { error in
            XCTAssertEqual((error as? AudioEngineError)?.code, AudioEngineError.notRunningCode)
        }
        let realtime = AudioEngine()
        try realtime.enableManualRenderingMode(.realtime, format: stereo48, maximumFrameCount: 64)
        try realtime.start()
        XCTAssertThrowsError(try realtime.renderOffline(64, to: buffer)) { error in
            XCTAssertEqual((error as? AudioEngineError)?.code, AudioEngineError.invalidModeCode)
        }
    }

    func testTheRequestedFormatIsHonouredInt16Interleaved() throws {
        let int16 = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 44100, channels: 2, interleaved: true))
        let engine = try makeManualEngine(format: int16)
        let source = makeSineSource(frequency: 1000, rate: 44100)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: int16, frameCapacity: 441))
        XCTAssertEqual(try engine.renderOffline(441, to: buffer), .success)
        XCTAssertEqual(buffer.frameLength, 441)
        let samples = try XCTUnwrap(buffer.int16ChannelData)[0]
        for n in 0..<441 {
            let x = Double(sineSample(Int64(n), frequency: 1000, rate: 44100))
            let expected = Int16(max(-32768, min(32767, (x * 32768).rounded())))
            XCTAssertEqual(samples[2 * n], expected, "frame \(n) left")
            XCTAssertEqual(samples[2 * n + 1], expected, "frame \(n) right")
        }
    }

    func testRealtimeBlockRendersWhatOfflineRenders() throws {
        let engine = AudioEngine()
        try engine.enableManualRenderingMode(.realtime, format: stereo48, maximumFrameCount: 256)
        let source = makeSineSource(frequency: 300)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let block = try XCTUnwrap(engine.manualRenderingBlock)
        let list = AudioBufferList.allocate(maximumBuffers: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { left.deallocate(); right.deallocate(); free(list.unsafeMutablePointer) }
        list[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: UnsafeMutableRawPointer(left))
        list[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: UnsafeMutableRawPointer(right))
        var status: OSStatus = 123
        for slice in 0..<4 {
            XCTAssertEqual(block(256, list.unsafeMutablePointer, &status), .success)
            XCTAssertEqual(status, noErr)
            for i in 0..<256 {
                let n = Int64(slice * 256 + i)
                XCTAssertEqual(left[i], sineSample(n, frequency: 300, rate: 48000))
                XCTAssertEqual(right[i], sineSample(n, frequency: 300, rate: 48000))
            }
        }
        XCTAssertEqual(block(257, list.unsafeMutablePointer, &status), .error)
        XCTAssertNotEqual(status, noErr)
    }

    // MARK: Mixing

    func testVolumeAndPanApplyToTheMixerInputTheSourceFeeds() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 500, channels: 1)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        source.volume = 0.5
        source.pan = -1
        try engine.start()
        var out = try render(engine, frames: 512)
        // Mono at pan -1: all of it left (equal-power gains cos 0 and sin 0), times the volume.
        for n in 0..<512 {
            XCTAssertEqual(out[0][n], 0.5 * sineSample(Int64(n), frequency: 500, rate: 48000), accuracy: 1e-7)
            XCTAssertEqual(out[1][n], 0)
        }
        // While running: pan 0 gives 0.70710678 on each side.
        source.pan = 0
        engine.mainMixerNode.outputVolume = 0.25
        out = try render(engine, frames: 512)
        for n in 0..<512 {
            let x = 0.25 * 0.5 * Float(0.70710678) * sineSample(Int64(512 + n), frequency: 500, rate: 48000)
            XCTAssertEqual(out[0][n], x, accuracy: 1e-6)
            XCTAssertEqual(out[1][n], x, accuracy: 1e-6)
        }
    }

    func testMixerGrowsInputBusesAsConnectionsNeedThemWhileRunning() throws {
        let engine = try makeManualEngine()
        let mixer = engine.mainMixerNode
        try engine.start()
        var sources: [AudioSourceNode] = []
        for k in 0..<12 {
            let s = makeSineSource(frequency: 100 + 50 * Double(k), amplitude: 0.05)
            sources.append(s)
            engine.attach(s)
            XCTAssertEqual(mixer.nextAvailableInputBus, k)
            engine.connect(s, to: mixer, format: nil)
        }
        XCTAssertEqual(mixer.nextAvailableInputBus, 12)
        let out = try render(engine, frames: 256)
        // Every source joined at frame 0 of its own timeline, here graph frame 0.
        for n in [0, 1, 100, 255] {
            let sum = (0..<12).map { sineSample(Int64(n), frequency: 100 + 50 * Double($0), rate: 48000, amplitude: 0.05) }
                .reduce(0, +)
            XCTAssertEqual(out[0][n], sum, accuracy: 1e-6)
        }
    }

    /// Apple's `connect(_:to:format:)`: bus 0 on the destination, except a mixer's next
    /// available input bus — and the environment is a mixer in Apple's class hierarchy. Two
    /// sources connected that way are on buses 0 and 1 and both heard (before the fix the second
    /// replaced the first on bus 0).
    func testConnectWithoutBusesUsesTheEnvironmentsNextAvailableInputBus() throws {
        func renderEnvironment(explicitBuses: Bool) throws -> (AudioEngine, AudioEnvironmentNode, [AudioSourceNode], [[Float]]) {
            let engine = try makeManualEngine()
            let environment = AudioEnvironmentNode()
            engine.attach(environment)
            engine.connect(environment, to: engine.mainMixerNode, format: nil)
            var sources: [AudioSourceNode] = []
            for (k, frequency) in [300.0, 700.0].enumerated() {
                let s = makeSineSource(frequency: frequency, amplitude: 0.3)
                engine.attach(s)
                XCTAssertEqual(environment.nextAvailableInputBus, k)
                if explicitBuses {
                    engine.connect(s, to: environment, fromBus: 0, toBus: k, format: nil)
                } else {
                    engine.connect(s, to: environment, format: nil)
                }
                s.renderingAlgorithm = .equalPowerPanning
                s.position = Audio3DPoint(x: k == 0 ? -1 : 1, y: 0, z: 0)
                sources.append(s)
            }
            try engine.start()
            return (engine, environment, sources, try render(engine, frames: 4800))
        }
        let (engine, environment, sources, out) = try renderEnvironment(explicitBuses: false)
        XCTAssertTrue(engine.inputConnectionPoint(for: environment, inputBus: 0)?.node === sources[0])
        XCTAssertTrue(engine.inputConnectionPoint(for: environment, inputBus: 1)?.node === sources[1])
        XCTAssertEqual(environment.nextAvailableInputBus, 2)
        let reference = try renderEnvironment(explicitBuses: true).3
        XCTAssertTrue(out == reference, "the output differs from the one with explicit buses 0 and 1")
        // Both tones are there: each channel correlates with the 300 Hz and the 700 Hz sine.
        for frequency in [300.0, 700.0] {
            let sine = (0..<4800).map { sineSample(Int64($0), frequency: frequency, rate: 48000) }
            let left = zip(out[0], sine).map { Double($0 * $1) }.reduce(0, +) / 2400
            let right = zip(out[1], sine).map { Double($0 * $1) }.reduce(0, +) / 2400
            XCTAssertGreaterThan(max(abs(left), abs(right)), 0.05, "\(frequency) Hz")
        }
    }

    // MARK: Change lists

    /// Each disconnect call removes what it names and nothing else: one input bus, every input
    /// bus, one output bus (from each destination it feeds), every output bus.
    func testEachDisconnectCallRemovesOnlyWhatItNames() throws {
        let engine = try makeManualEngine()
        let splitter = AudioChannelSplitterNode(numberOfOutputs: 2)
        let a = AudioMixerNode(), b = AudioMixerNode(), c = AudioMixerNode()
        for node in [splitter, a, b, c] { engine.attach(node) }
        func connectAll() {
            engine.connect(splitter, to: [AudioConnectionPoint(node: a, bus: 0), AudioConnectionPoint(node: b, bus: 0)],
                           fromBus: 0, format: nil)
            engine.connect(splitter, to: [AudioConnectionPoint(node: a, bus: 1), AudioConnectionPoint(node: c, bus: 0)],
                           fromBus: 1, format: nil)
        }
        func fed(_ node: AudioMixerNode, _ bus: Int) -> Int? {
            guard let point = engine.inputConnectionPoint(for: node, inputBus: bus) else { return nil }
            XCTAssertTrue(point.node === splitter)
            return point.bus
        }
        func feeds(_ bus: Int) -> Int { engine.outputConnectionPoints(for: splitter, outputBus: bus).count }
        connectAll()
        XCTAssertEqual([fed(a, 0), fed(a, 1), fed(b, 0), fed(c, 0)], [0, 1, 0, 1])

        engine.disconnectNodeInput(a, bus: 1)
        XCTAssertEqual([fed(a, 0), fed(a, 1), fed(b, 0), fed(c, 0)], [0, nil, 0, 1])
        engine.disconnectNodeInput(a)
        XCTAssertEqual([fed(a, 0), fed(a, 1), fed(b, 0), fed(c, 0)], [nil, nil, 0, 1])

        connectAll()
        engine.disconnectNodeOutput(splitter, bus: 1)
        XCTAssertEqual([fed(a, 0), fed(a, 1), fed(b, 0), fed(c, 0)], [0, nil, 0, nil])
        XCTAssertEqual([feeds(0), feeds(1)], [2, 0])
        connectAll()
        engine.disconnectNodeOutput(splitter)
        XCTAssertEqual([fed(a, 0), fed(a, 1), fed(b, 0), fed(c, 0)], [nil, nil, nil, nil])
        XCTAssertEqual([feeds(0), feeds(1)], [0, 0])
    }

    func testPerformChangesAppliesEverythingAtOneSliceBoundary() throws {
        let engine = try makeManualEngine()
        let a = makeSineSource(frequency: 200), b = makeSineSource(frequency: 300)
        engine.attach(a)
        engine.connect(a, to: engine.mainMixerNode, format: nil)
        try engine.start()
        _ = try render(engine, frames: 480)
        try engine.performChanges {
            engine.disconnectNodeOutput(a)
            engine.attach(b)
            engine.connect(b, to: engine.mainMixerNode, format: nil)
            b.volume = 0.5
            engine.mainMixerNode.outputVolume = 0.5
        }
        let out = try render(engine, frames: 480)
        // From the boundary on, only b, starting its own time at 0, at both volumes from its first frame.
        for n in 0..<480 { XCTAssertEqual(out[0][n], 0.25 * sineSample(Int64(n), frequency: 300, rate: 48000)) }
    }

    func testAnInvalidChangeListAppliesNothingAndThrows() throws {
        let engine = try makeManualEngine()
        let a = makeSineSource(frequency: 200)
        let delay = AudioUnitDelay()
        engine.attach(a)
        engine.attach(delay)
        engine.connect(a, to: engine.mainMixerNode, format: nil)
        try engine.start()
        // A format on a running effect's output that its input cannot have: the whole list is rejected.
        XCTAssertThrowsError(try engine.performChanges {
            engine.disconnectNodeOutput(a)
            engine.connect(a, to: delay, format: nil)
            engine.connect(delay, to: engine.mainMixerNode, fromBus: 0, toBus: 0,
                           format: AudioFormat(standardFormatWithSampleRate: 22050, channels: 2))
        }) { error in
            XCTAssertTrue("\(error)".contains("performChanges"), "\(error)")
        }
        XCTAssertEqual(engine.outputConnectionPoints(for: a, outputBus: 0).first?.node, engine.mainMixerNode,
                       "the model is restored")
        let out = try render(engine, frames: 256)
        for n in 0..<256 { XCTAssertEqual(out[0][n], sineSample(Int64(n), frequency: 200, rate: 48000)) }
    }

    // MARK: Connections and formats

    func testConnectionPointsAndFanOut() throws {
        let engine = AudioEngine()
        let source = makeSineSource(frequency: 440), m1 = AudioMixerNode(), m2 = AudioMixerNode()
        [source, m1, m2].forEach(engine.attach)
        engine.connect(source, to: [AudioConnectionPoint(node: m1, bus: 0), AudioConnectionPoint(node: m2, bus: 3)],
                       fromBus: 0, format: nil)
        let points = engine.outputConnectionPoints(for: source, outputBus: 0)
        XCTAssertEqual(points.count, 2)
        XCTAssertTrue(points.contains { $0.node === m2 && $0.bus == 3 })
        XCTAssertTrue(engine.inputConnectionPoint(for: m2, inputBus: 3)?.node === source)
        XCTAssertNil(engine.inputConnectionPoint(for: m2, inputBus: 0))
        // One-to-one connect breaks the fan-out of that source bus.
        engine.connect(source, to: m1, fromBus: 0, toBus: 1, format: nil)
        XCTAssertEqual(engine.outputConnectionPoints(for: source, outputBus: 0).count, 1)
        XCTAssertEqual(engine.attachedNodes.count, 3)
        engine.detach(m2)
        XCTAssertEqual(engine.attachedNodes.count, 2)
        XCTAssertNil(m2.engine)
    }

    func testFormatsFollowConnections() throws {
        let engine = try makeManualEngine()
        let mono44 = AudioFormat(standardFormatWithSampleRate: 44100, channels: 1)!
        let source = makeSineSource(frequency: 440, rate: 44100, channels: 1)
        engine.attach(source)
        XCTAssertEqual(source.outputFormat(forBus: 0), mono44)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        XCTAssertEqual(engine.mainMixerNode.inputFormat(forBus: 0), mono44)
        XCTAssertEqual(engine.mainMixerNode.outputFormat(forBus: 0), stereo48)
        XCTAssertEqual(engine.outputNode.inputFormat(forBus: 0), stereo48)
        try engine.start()
        XCTAssertEqual(engine.mainMixerNode.outputFormat(forBus: 0), stereo48)
        // The mixer converts 44.1 kHz mono to 48 kHz stereo: a 440 Hz tone comes out.
        let out = try render(engine, frames: 9600)
        let f = SignalMeasurement.estimateFrequency(Array(out[0][2000...]), sampleRate: 48000)
        XCTAssertEqual(f ?? 0, 440, accuracy: 0.5)
    }

    // MARK: Sinks and taps

    func testASinkReceivesItsInputWithNothingConnectedToTheOutput() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 440)
        final class Received: @unchecked Sendable { var samples: [Float] = []; var times: [Double] = [] }
        let received = Received()
        received.samples.reserveCapacity(4096)
        let sink = AudioSinkNode { timestamp, frames, data in
            let list = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: data))
            let x = list[0].mData!.assumingMemoryBound(to: Float.self)
            received.samples.append(contentsOf: UnsafeBufferPointer(start: x, count: Int(frames)))
            received.times.append(timestamp.pointee.mSampleTime)
            return noErr
        }
        engine.attach(source)
        engine.attach(sink)
        engine.connect(source, to: sink, format: nil)
        try engine.start()
        _ = try render(engine, frames: 2048, piece: 512)
        XCTAssertEqual(received.samples.count, 2048)
        XCTAssertEqual(received.times, [0, 512, 1024, 1536])
        for n in 0..<2048 { XCTAssertEqual(received.samples[n], sineSample(Int64(n), frequency: 440, rate: 48000)) }
    }

    func testATapDeliversExactBuffersThatEqualTheRenderInManualMode() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 330)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        final class Collected: @unchecked Sendable {
            var lengths: [Int] = []; var samples: [Float] = []; var times: [Int64] = []
            var threadIsMain = false
        }
        let collected = Collected()
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 100, format: nil) { buffer, time in
            collected.lengths.append(Int(buffer.frameLength))
            collected.samples += Array(UnsafeBufferPointer(start: buffer.floatChannelData![1], count: Int(buffer.frameLength)))
            collected.times.append(time.sampleTime)
        }
        try engine.start()
        let out = try render(engine, frames: 1050, piece: 512)
        engine.mainMixerNode.removeTap(onBus: 0)
        XCTAssertEqual(collected.lengths, Array(repeating: 100, count: 10) + [50])
        XCTAssertEqual(collected.times, (0..<11).map { Int64($0 * 100) })
        XCTAssertEqual(collected.samples, out[1])
    }
}

final class AudioEnvironmentNodeTests: XCTestCase {
    func testASourceToTheRightIsPannedRightAndAttenuatedWithDistance() throws {
        let engine = AudioEngine()
        try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!,
                                             maximumFrameCount: 1024)
        let environment = AudioEnvironmentNode()
        let source = makeSineSource(frequency: 700, channels: 1)
        engine.attach(environment)
        engine.attach(source)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        engine.connect(source, to: environment, format: nil)
        source.position = AudioMake3DPoint(1, 0, 0)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: engine.manualRenderingFormat, frameCapacity: 1024))
        XCTAssertEqual(try engine.renderOffline(1024, to: buffer), .success)
        let l = buffer.floatChannelData![0], r = buffer.floatChannelData![1]
        // Azimuth 90°: Web Audio's equal-power gains cos(π/2) and sin(π/2); 1 m is the reference distance.
        for n in 0..<1024 {
            XCTAssertEqual(r[n], sineSample(Int64(n), frequency: 700, rate: 48000), accuracy: 1e-6)
            XCTAssertEqual(l[n], 0, accuracy: 1e-6)
        }
        // 4 m to the right with the inverse model (ref 1, rolloff 1): gain 1 / (1 + (4 - 1)) = 0.25.
        source.position = AudioMake3DPoint(4, 0, 0)
        XCTAssertEqual(try engine.renderOffline(1024, to: buffer), .success)
        for n in 0..<1024 {
            XCTAssertEqual(r[n], 0.25 * sineSample(Int64(1024 + n), frequency: 700, rate: 48000), accuracy: 1e-6)
        }
        // The environment's output volume scales everything.
        environment.outputVolume = 0.5
        XCTAssertEqual(try engine.renderOffline(1024, to: buffer), .success)
        for n in 0..<1024 {
            XCTAssertEqual(r[n], 0.125 * sineSample(Int64(2048 + n), frequency: 700, rate: 48000), accuracy: 1e-6)
        }
    }

    func testVectorAndAngularOrientationsAgree() {
        let e = AudioEnvironmentNode()
        XCTAssertEqual(e.listenerVectorOrientation.forward.z, -1, accuracy: 1e-6)
        XCTAssertEqual(e.listenerVectorOrientation.up.y, 1, accuracy: 1e-6)
        // Facing -X (turned 90° to the left), head up.
        e.listenerVectorOrientation = AudioMake3DVectorOrientation(AudioMake3DPoint(-1, 0, 0), AudioMake3DPoint(0, 1, 0))
        XCTAssertEqual(e.listenerAngularOrientation.yaw, 90, accuracy: 1e-4)
        XCTAssertEqual(e.listenerAngularOrientation.pitch, 0, accuracy: 1e-4)
        XCTAssertEqual(e.listenerAngularOrientation.roll, 0, accuracy: 1e-4)
        // Looking 30° up and tilted 20° right round-trips.
        e.listenerAngularOrientation = AudioMake3DAngularOrientation(-45, 30, 20)
        let back = AudioEnvironmentNode.angles(e.listenerVectorOrientation)
        XCTAssertEqual(back.yaw, -45, accuracy: 1e-3)
        XCTAssertEqual(back.pitch, 30, accuracy: 1e-3)
        XCTAssertEqual(back.roll, 20, accuracy: 1e-3)
    }
}

final class AudioEngineGraphFileTests: XCTestCase {
    func testAGraphFileBecomesAnEngineThatRendersItsFormula() throws {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("engine-file-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("tone.json")
        try """
        { "version": 1, "sampleRate": 48000,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 250, "amplitude": 0.5 } },
                     { "id": "mix", "type": "mixer", "parameters": { "input.0.pan": -1 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "mix" }, { "from": "mix", "to": "out" } ] }
        """.write(to: url, atomically: true, encoding: .utf8)
        let engine = try AudioEngine(contentsOf: url)
        try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!,
                                             maximumFrameCount: 1000)
        let osc = try XCTUnwrap(engine.node(named: "osc") as? DescribedNode)
        XCTAssertTrue(engine.node(named: "out") === engine.outputNode)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: engine.manualRenderingFormat, frameCapacity: 1000))
        XCTAssertEqual(try engine.renderOffline(1000, to: buffer), .success)
        // The oscillator's formula, all of it on the left (mono at pan -1).
        for n in 0..<1000 {
            XCTAssertEqual(buffer.floatChannelData![0][n], Float(0.5 * sin(2 * Double.pi * 250 * Double(n) / 48000)), accuracy: 1e-6)
            XCTAssertEqual(buffer.floatChannelData![1][n], 0, accuracy: 1e-7)
        }
        // Its parameters are live.
        try XCTUnwrap(osc.parameter("amplitude")).setValue(0.25)
        XCTAssertEqual(try engine.renderOffline(1000, to: buffer), .success)
        XCTAssertEqual(buffer.floatChannelData![0][100], Float(0.25 * sin(2 * Double.pi * 250 * 1100 / 48000)), accuracy: 1e-6)
    }

    /// `manualRenderingThreadCount` 3 renders the same samples as 1 (eight oscillators of four
    /// waveforms into the mixer), and the graph's workers did the branches.
    func testManualOfflineRenderingOnSeveralThreadsIsBitIdentical() throws {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("engine-threads-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("voices.json")
        let waveforms = ["sine", "square", "sawtooth", "triangle"]
        let oscs = (0..<8).map { #"{ "id": "o\#($0)", "type": "oscillator", "parameters": { "frequency": \#(200 + 37 * $0), "amplitude": 0.1 }, "properties": { "waveform": "\#(waveforms[$0 % 4])" } }"# }
        try """
        { "version": 1, "sampleRate": 48000,
          "nodes": [ \(oscs.joined(separator: ", ")), { "id": "mix", "type": "mixer", "inputBusCount": 8 }, { "id": "out", "type": "genericOutput" } ],
          "connections": [ \((0..<8).map { #"{ "from": "o\#($0)", "to": "mix:\#($0)" }"# }.joined(separator: ", ")), { "from": "mix", "to": "out" } ] }
        """.write(to: url, atomically: true, encoding: .utf8)
        var renders: [[[Float]]] = []
        for threads in [1, 3] {
            let engine = try AudioEngine(contentsOf: url)
            try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!,
                                                 maximumFrameCount: 1000)
            engine.manualRenderingThreadCount = threads
            XCTAssertEqual(engine.manualRenderingThreadCount, threads)
            try engine.start()
            renders.append(try render(engine, frames: 9600, piece: 700))
            let graph = try XCTUnwrap(engine.graph)
            XCTAssertEqual(graph.renderThreadCount, threads)
            if threads > 1 { XCTAssertGreaterThan(graph.testOnly_parallelGroups.workerRenderedGroups, 0, "the workers rendered") }
            engine.stop()
        }
        XCTAssertGreaterThan(renders[0][0].map(abs).max()!, 0.1, "not silent")
        XCTAssertTrue(renders[1] == renders[0], "3 threads render what 1 thread renders")
    }

    func testABadGraphFileThrowsOneLinePerProblemNamingTheFile() throws {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("bad-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try #"{ "version": 1, "nodes": [ { "id": "d", "type": "delay", "parameters": { "feedback": 150 } } ], "connections": [] }"#
            .write(to: url, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try AudioEngine(contentsOf: url)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains(url.lastPathComponent) && text.contains("feedback") && text.contains("150"), text)
        }
    }
}

final class AudioUnitEffectTests: XCTestCase {
    func testAParametricBandBoostsItsFrequencyAndBypassPassesTheInputExactly() throws {
        let engine = try makeManualEngine(maximum: 4800)
        let source = makeSineSource(frequency: 1000, amplitude: 0.25)
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.bands[0].filterType = .parametric
        eq.bands[0].frequency = 1000
        eq.bands[0].bandwidth = 1
        eq.bands[0].gain = 6
        eq.bands[0].bypass = false
        [source, eq].forEach(engine.attach)
        engine.connect(source, to: eq, format: nil)
        engine.connect(eq, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let boosted = try render(engine, frames: 4800, piece: 4800)[0]
        // A peak of +6 dB at its centre: amplitude × 10^(6/20) once the filter settled.
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: boosted[2400...], sampleRate: 48000))
        XCTAssertEqual(fit.tones[0].amplitude, 0.25 * pow(10, 6.0 / 20), accuracy: 1e-4)
        eq.bypass = true
        let bypassed = try render(engine, frames: 4800, piece: 4800)[0]
        // The band glides out over its documented 10 ms (480 frames, no click); from then on the input, exactly.
        for n in 480..<4800 { XCTAssertEqual(bypassed[n], sineSample(Int64(4800 + n), frequency: 1000, rate: 48000, amplitude: 0.25)) }
        XCTAssertFalse(eq.bands[0].bypass, "the band's own bypass is kept while the unit is bypassed")
    }

    func testADelayWithoutFeedbackDelaysByItsTimeExactly() throws {
        let engine = try makeManualEngine(maximum: 4800)
        let source = makeSineSource(frequency: 440)
        let delay = AudioUnitDelay()
        delay.delayTime = 0.01
        delay.feedback = 0
        delay.wetDryMix = 100
        delay.lowPassCutoff = 24000
        [source, delay].forEach(engine.attach)
        engine.connect(source, to: delay, format: nil)
        engine.connect(delay, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let out = try render(engine, frames: 2000, piece: 2000)[0]
        for n in 0..<480 { XCTAssertEqual(out[n], 0) }
        for n in 480..<2000 { XCTAssertEqual(out[n], sineSample(Int64(n - 480), frequency: 440, rate: 48000), accuracy: 1e-6) }
    }
}

final class AudioEngineLifeCycleTests: XCTestCase {
    func testResetClearsADelaysTailAndPauseKeepsTheGraph() throws {
        let engine = AudioEngine()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4800)
        let source = makeSineSource(frequency: 440)
        let delay = AudioUnitDelay()
        delay.delayTime = 0.05
        delay.feedback = 90
        delay.wetDryMix = 100
        [source, delay].forEach(engine.attach)
        engine.connect(source, to: delay, format: nil)
        engine.connect(delay, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 4800))
        XCTAssertEqual(try engine.renderOffline(4800, to: buffer), .success)
        engine.disconnectNodeInput(delay)
        XCTAssertEqual(try engine.renderOffline(4800, to: buffer), .success)
        let tail = (0..<4800).map { abs(buffer.floatChannelData![0][$0]) }.max() ?? 0
        XCTAssertGreaterThan(tail, 0.1, "the delay rings on after its input is gone")
        engine.reset()
        XCTAssertEqual(try engine.renderOffline(4800, to: buffer), .success)
        XCTAssertTrue((0..<4800).allSatisfy { buffer.floatChannelData![0][$0] == 0 }, "reset cleared the delay line")
        // Pause keeps what prepare built: rendering refuses while paused, and goes on after start().
        engine.pause()
        XCTAssertFalse(engine.isRunning)
        XCTAssertThrowsError(try engine.renderOffline(480, to: buffer))
        try engine.start()
        XCTAssertEqual(try engine.renderOffline(480, to: buffer), .success)
        XCTAssertEqual(engine.manualRenderingSampleTime, 3 * 4800 + 480)
    }
}

final class AudioRecorderTests: XCTestCase {
    func testARecorderWritesWhatTheBusRenderedBitForBitAndOnlyAppearsWhenStopped() throws {
        let engine = AudioEngine()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 1000)
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("recorder-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("mix.wav")
        let recorder = AudioNodeRecorder(node: engine.mainMixerNode, url: url)
        try engine.start()
        try recorder.record()
        XCTAssertTrue(recorder.isRecording)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1000))
        var rendered: [Float] = []
        for _ in 0..<5 {
            XCTAssertEqual(try engine.renderOffline(1000, to: buffer), .success)
            rendered += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: 1000)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path), "the file appears only when complete")
        try recorder.stop()
        XCTAssertFalse(recorder.isRecording)
        XCTAssertEqual(recorder.recordedFrameCount, 5000)
        XCTAssertEqual(recorder.droppedBufferCount, 0)
        let file = try AudioFile(forReading: url)
        XCTAssertEqual(file.length, 5000)
        let back = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 5000))
        try file.read(into: back)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: back.floatChannelData![0], count: 5000)), rendered)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["mix.wav"], "no temporary left")
    }

    func testAnUnknownExtensionFailsWhenRecordingStarts() throws {
        let engine = AudioEngine()
        engine.attach(AudioMixerNode())
        let recorder = AudioNodeRecorder(node: engine.mainMixerNode, url: URL(fileURLWithPath: "/tmp/x-\(getpid()).mp3"))
        XCTAssertThrowsError(try recorder.record()) { error in
            XCTAssertTrue("\(error)".contains(".mp3") || "\(error)".contains("x-"), "\(error)")
        }
        XCTAssertFalse(recorder.isRecording)
    }
}

/// An edit the running graph refuses is a runtime condition: undone and counted, never fatal (issue 18).
final class AudioEngineEditFaultTests: XCTestCase {
    func testAnEditTheRunningGraphRefusesIsUndoneAndCounted() throws {
        let engine = try makeManualEngine()
        let stereo = makeSineSource(frequency: 440, amplitude: 0.25)
        let mono = makeSineSource(frequency: 440, channels: 1, amplitude: 0.25)
        let timePitch = AudioUnitTimePitch()
        [stereo, mono, timePitch].forEach(engine.attach)
        engine.connect(stereo, to: timePitch, format: nil)
        engine.connect(timePitch, to: engine.mainMixerNode, format: nil)
        try engine.start()
        _ = try render(engine, frames: 4800)
        // A mono input would change the format of a node that keeps state (rubberband): refused.
        engine.connect(mono, to: timePitch, fromBus: 0, toBus: 0, format: nil)
        XCTAssertEqual(engine.editFaultCount, 1)
        XCTAssertTrue(engine.lastEditFault?.description.contains("connect(_:to:fromBus:toBus:format:)") == true,
                      "\(String(describing: engine.lastEditFault))")
        XCTAssertEqual(engine.inputConnectionPoint(for: timePitch, inputBus: 0)?.node, stereo, "the edit is undone")
        XCTAssertTrue(engine.isRunning)
        let out = try render(engine, frames: 4800)
        XCTAssertGreaterThan(out[0].map(abs).max() ?? 0, 0.1, "the graph plays on as before")
    }
}
