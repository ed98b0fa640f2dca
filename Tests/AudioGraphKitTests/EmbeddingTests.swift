// The README's embedding example, compiled and checked: if it breaks, the README is wrong.
import AudioGraphKit
import AudioGraphTesting
import Synchronization
import XCTest

final class EmbeddingTests: XCTestCase {
    func testReadmeExampleRendersAPannedSineAndAppliesAChangeList() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 512)
        try graph.addNode(OscillatorNode(id: "tone", sampleRate: 48000,
                                         properties: OscillatorProperties(waveform: .sine, channels: 1)))
        try graph.addNode(MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2))
        try graph.addNode(GenericOutputNode(id: "out"))
        try graph.connect("tone", to: "mix", inputBus: 0)
        try graph.connect("mix", to: "out")
        try graph.node("mix")!.setParameter("input.0.pan", -0.5)
        try graph.initialize()
        try graph.start()

        let slice = try XCTUnwrap(graph.render(frameCount: 512))
        XCTAssertFalse(slice.isSilent)
        // StereoPanner, mono input at pan -0.5: x = 0.25, gains cos(x*pi/2), sin(x*pi/2).
        let gl = cos(0.25 * Double.pi / 2), gr = sin(0.25 * Double.pi / 2)
        for n in [1, 17, 100, 511] {
            let s = sin(2 * Double.pi * 440 * Double(n) / 48000)
            XCTAssertEqual(Double(slice.buffer.channel(0)[n]), gl * s, accuracy: 1e-6)
            XCTAssertEqual(Double(slice.buffer.channel(1)[n]), gr * s, accuracy: 1e-6)
        }

        graph.enqueue(contentsOf: [.disconnect(destination: "mix", destinationBus: 0),
                                   .setParameter(node: "mix", address: "volume", value: 0.5, rampDuration: 0.05)])
        // Not applied yet: changes wait for update().
        XCTAssertEqual(graph.connections.count, 2)
        XCTAssertFalse(try graph.update(waitUntilApplied: false), "adopted only by the next render")
        XCTAssertEqual(graph.connections.count, 1)
        let after = try XCTUnwrap(graph.render(frameCount: 512))
        XCTAssertTrue(after.isSilent, "the tone was disconnected at the slice boundary")
        graph.stop()
    }

    func testReadmeExampleLoadsAndRendersAGraphFile() throws {
        let dir = NSTemporaryDirectory() + "embedding-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = #"{ "version": 1, "duration": 0.25, "nodes": [ { "id": "o", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.25 } }, { "id": "out", "type": "genericOutput" } ], "connections": [ { "from": "o", "to": "out" } ] }"#
        try text.write(toFile: dir + "/g.json", atomically: true, encoding: .utf8)
        let validated = try GraphLoader.load(dir + "/g.json")
        let renderer = try OfflineRenderer(validated, outputPath: dir + "/g.wav")
        var fractions: [Double] = []
        try renderer.render(to: dir + "/g.wav") { fractions.append($0) }
        XCTAssertEqual(fractions.last, 1)
        let (info, channels) = try AudioFileReader.read(path: dir + "/g.wav")
        XCTAssertEqual(info.frames, 12000)
        XCTAssertEqual(info.sampleRate, 48000)
        for n in [0, 5, 999, 11999] {
            XCTAssertEqual(Double(channels[0][n]), 0.25 * sin(2 * Double.pi * 1000 * Double(n) / 48000), accuracy: 1e-6)
        }
        XCTAssertEqual(Double(renderer.peak), 0.25, accuracy: 1e-4)
    }
}

/// The README's engine example (the tap and the offline render), compiled and checked.
final class EngineEmbeddingTests: XCTestCase {
    func testReadmeEngineExampleTapsAndRendersOffline() throws {
        let engine = AudioEngine()
        let source = makeSineSource(frequency: 1000)   // what the README's player would play
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        final class Printed: @unchecked Sendable { var lines: [(Int64, Float)] = [] }
        let printed = Printed()
        @Sendable func print(_ time: Int64, _ rms: Float) { printed.lines.append((time, rms)) }

        // From the README:
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4096)
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 4800, format: nil) { buffer, time in
            let x = UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
            print(time.sampleTime, sqrt(x.map { $0 * $0 }.reduce(0, +) / Float(x.count)))
        }
        try engine.start()
        let buffer = AudioPCMBuffer(pcmFormat: engine.manualRenderingFormat, frameCapacity: 4096)!
        while engine.manualRenderingSampleTime < 48_000 {
            _ = try engine.renderOffline(4096, to: buffer)   // .success; buffer.frameLength == 4096
        }

        XCTAssertEqual(buffer.frameLength, 4096)
        XCTAssertEqual(engine.manualRenderingSampleTime, 49152)
        // Ten full tap buffers of 4800 frames: 100 ms of a 0.5-amplitude sine each, RMS 0.5/√2.
        XCTAssertEqual(printed.lines.map(\.0), (0..<10).map { Int64($0 * 4800) })
        for (_, rms) in printed.lines { XCTAssertEqual(Double(rms), 0.5 / 2.0.squareRoot(), accuracy: 1e-5) }
    }
}

/// Docs/Engine.md's render-block example ("where state lives"), compiled and rendered.
final class EngineRenderBlockExampleTests: XCTestCase {
    func testTheDocumentedRenderBlockKeepsItsStateInTheBlock() throws {
        // From Docs/Engine.md:
        final class Oscillator: Sendable {            // lives in the block: render thread only
            let frequency = Atomic<Double>(440)       // set from any thread, read each slice
            nonisolated(unsafe) var phase = 0.0       // touched by the render thread only
        }

        let osc = Oscillator()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        let source = AudioSourceNode(format: format) { _, _, frameCount, data in
            let step = 2 * Double.pi * osc.frequency.load(ordering: .relaxed) / 48000
            let out = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
            for i in 0..<Int(frameCount) {
                out[i] = Float(0.2 * sin(osc.phase))
                osc.phase += step
            }
            return noErr
        }
        osc.frequency.store(660, ordering: .relaxed)  // from the UI thread, while it plays

        let engine = AudioEngine()
        try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4800)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: 4800)!
        XCTAssertEqual(try engine.renderOffline(4800, to: buffer), .success)
        let samples = Array(UnsafeBufferPointer(start: buffer.floatChannelData![0], count: 4800))
        XCTAssertEqual(SignalMeasurement.estimateFrequency(samples, sampleRate: 48000) ?? 0, 660, accuracy: 0.01)
    }
}
