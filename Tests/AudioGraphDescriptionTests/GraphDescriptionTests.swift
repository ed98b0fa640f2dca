// Loading whole graphs: the spec's examples, defaults, typed properties, files relative to the graph.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes
import AudioGraphPulse

final class GraphDescriptionTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    /// The spec's examples, each completed into a whole graph where the spec shows a fragment.
    static let specExamples: [String] = [
        // The node object example.
        """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 512, "duration": 10.0,
          "nodes": [
            { "id": "src", "type": "oscillator", "properties": { "channels": 2 } },
            { "id": "eq1", "type": "eq",
              "parameters": { "globalGain": 0, "band.0.gain": 6 },
              "properties": { "bands": [ {"type": "peak", "frequency": 1000, "gain": 6, "q": 1} ] },
              "inputBusCount": 1,
              "format": { "channels": 2 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "src", "to": "eq1" }, { "from": "eq1", "to": "out" } ],
          "updates": [], "taps": [] }
        """,
        // The updates example.
        """
        { "version": 1, "nodes": [
            { "id": "osc", "type": "oscillator" }, { "id": "old", "type": "oscillator" },
            { "id": "p1", "type": "player", "properties": { "file": "loop.wav" } },
            { "id": "mix", "type": "mixer", "inputBusCount": 3 }, { "id": "out", "type": "output" } ],
          "connections": [ { "from": "osc", "to": "mix:1" }, { "from": "old", "to": "mix:0" }, { "from": "p1", "to": "mix:2" },
                           { "from": "mix", "to": "out" } ],
          "updates": [
            { "frame": 24000, "actions": [
                { "setParameter": { "node": "mix", "address": "input.1.volume", "value": 0, "rampDuration": 0.05 } },
                { "disconnect": { "to": "mix:0" } },
                { "addNode": { "id": "d2", "type": "delay", "parameters": { "delayTime": 0.1 } } },
                { "connect": { "from": "osc", "to": "d2" } },
                { "connect": { "from": "d2", "to": "mix:0" } },
                { "removeNode": "old" },
                { "setProperty": { "node": "p1", "name": "loop", "value": true } } ] } ] }
        """,
        // The automation example.
        """
        { "version": 1, "nodes": [
            { "id": "osc", "type": "oscillator", "automation": {
                "frequency": [ { "setValueAtTime": { "value": 220, "time": 0 } },
                               { "exponentialRampToValueAtTime": { "value": 880, "time": 2 } } ] } },
            { "id": "mix", "type": "mixer", "automation": {
                "input.0.volume": [ { "setTargetAtTime": { "target": 0, "startTime": 3, "timeConstant": 0.2 } } ] } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "mix" }, { "from": "mix", "to": "out" } ] }
        """,
        // Connections, formats and taps examples.
        """
        { "version": 1, "sampleRate": 44100, "nodes": [
            { "id": "osc", "type": "oscillator" }, { "id": "mix", "type": "mixer", "inputBusCount": 2 },
            { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 44100, "channels": 2, "sampleType": "float32", "interleaved": false } } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "mix:1" }, { "from": "mix", "to": "c" }, { "from": "c", "to": "out" } ],
          "taps": [ { "node": "mix", "bus": 0, "file": "mix-tap.wav" } ] }
        """,
    ]

    /// Every node type and most keys in one graph.
    static let richGraph = """
    { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256, "duration": 2,
      "nodes": [
        { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 },
          "properties": { "waveform": "noise", "channels": 2, "seed": 7, "startTime": 0.1, "stopTime": 1.5 } },
        { "id": "p", "type": "player", "parameters": { "volume": 0.8 },
          "properties": { "file": "sounds/a.wav", "loop": true, "startTime": 0.5, "segment": { "start": 0.1, "duration": 0.2 } } },
        { "id": "mic", "type": "input", "properties": { "device": "mic0", "channels": 1, "latency": 10 } },
        { "id": "mix", "type": "mixer", "inputBusCount": 3, "properties": { "channels": 2 },
          "parameters": { "volume": 1.5, "input.0.pan": -0.5, "input.1.volume": 2, "input.2.enable": 0 } },
        { "id": "env", "type": "environment", "inputBusCount": 1,
          "properties": { "distanceModel": { "model": "linear", "referenceDistance": 2, "maxDistance": 50, "rolloffFactor": 0.5 },
                          "renderingAlgorithm": "equalPower", "reverb": { "enabled": true, "preset": "largeHall", "level": -6 } },
          "parameters": { "listener.yaw": 90, "input.0.z": -3, "input.0.occlusion": -10 } },
        { "id": "eq", "type": "eq", "properties": { "preset": "loudness" }, "parameters": { "band.1.gain": 3, "band.0.bypass": 1 } },
        { "id": "d", "type": "delay", "parameters": { "delayTime": 0.25, "feedback": -30, "lowPassCutoff": 8000, "wetDryMix": 40 },
          "automation": { "wetDryMix": [ { "linearRampToValueAtTime": { "value": 0, "time": 1 } },
                                          { "setValueCurveAtTime": { "values": [0, 50, 100], "startTime": 1, "duration": 0.5 } },
                                          { "cancelScheduledValues": { "cancelTime": 1.8 } } ] } },
        { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 44100, "sampleType": "int16", "interleaved": true },
                                                           "quality": "medium", "channelMap": [1, 0, -1] } },
        { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleType": "int24" } } } ],
      "connections": [
        { "from": "osc", "to": "mix:0" }, { "from": "p", "to": "mix:1" }, { "from": "mic", "to": "env" },
        { "from": "env", "to": "mix:2" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "d" },
        { "from": "d", "to": "c" }, { "from": "c", "to": "out" } ],
      "updates": [
        { "time": 1.0, "actions": [ { "setParameter": { "node": "d", "address": "feedback", "value": 10 } },
                                    { "setProperty": { "node": "osc", "name": "waveform", "value": "square" } } ] },
        { "frame": 100, "actions": [ { "disconnect": { "to": "mix:2" } } ] } ],
      "taps": [ { "node": "eq", "file": "eq.flac" } ] }
    """

    let files = [
        "loop.wav": AudioFileInfo(sampleRate: 48000, channels: 2, frames: 96000),
        "sounds/a.wav": AudioFileInfo(sampleRate: 44100, channels: 2, frames: 44100),
    ]

    func testSpecExamplesLoad() throws {
        for example in Self.specExamples {
            _ = try loadGraph(example, files: files)
        }
    }

    func testDefaults() throws {
        let graph = try loadGraph(#"{ "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "out", "type": "genericOutput" } ], "connections": [ { "from": "osc", "to": "out" } ] }"#)
        let description = graph.description
        XCTAssertEqual(description.sampleRate, 48000)
        XCTAssertEqual(description.maximumFramesPerSlice, 512)
        XCTAssertNil(description.duration)
        XCTAssertEqual(graph.defaultRenderDuration, 10)
        XCTAssertEqual(description.nodes[0].configuration.options(as: OscillatorProperties.self),
                       OscillatorProperties(waveform: .sine, channels: 1, seed: 0, startTime: 0, stopTime: nil))
        XCTAssertEqual(description.nodes[0].initialParameterValues(sampleRate: 48000),
                       [ParameterAddress(name: "frequency"): 440, ParameterAddress(name: "amplitude"): 1])
        XCTAssertEqual(description.outputNode?.id, "out")
        XCTAssertEqual(graph.formats["osc"]?.outputs, [BusFormat(sampleRate: 48000, channels: 1)])
        XCTAssertEqual(graph.formats["out"], NodeFormats(inputs: [BusFormat(sampleRate: 48000, channels: 1)], outputs: [],
                                                          clientFormat: BusFormat(sampleRate: 48000, channels: 1)))
    }

    func testRichGraphDecodesEveryTypedProperty() throws {
        // Decoding only (the file checks, paths against "."): the engine's rules are testRichGraphFormatsAfterPropagation's.
        let graph = try GraphDescription.parse(text: Self.richGraph, fileName: "graph.json", baseDirectory: ".",
                                               fileInfo: StubFiles(files: files).info)
        let d = graph.description
        XCTAssertEqual(d.maximumFramesPerSlice, 256)
        XCTAssertEqual(d.duration, 2)
        XCTAssertEqual(d.node("osc")?.configuration.options(as: OscillatorProperties.self),
                       OscillatorProperties(waveform: .noise, channels: 2, seed: 7, startTime: 0.1, stopTime: 1.5))
        XCTAssertEqual(d.node("p")?.configuration.options(as: PlayerProperties.self),
                       PlayerProperties(file: "sounds/a.wav", path: "sounds/a.wav", loop: true, startTime: 0.5,
                                                segment: PlayerSegment(start: 0.1, duration: 0.2)))
        XCTAssertEqual(d.node("mic")?.configuration.options(as: InputProperties.self), InputProperties(device: "mic0", channels: 1, latency: 10))
        XCTAssertEqual(d.node("mix")?.configuration.options(as: MixerProperties.self), MixerProperties(channels: 2))
        XCTAssertEqual(d.node("mix")?.inputBusCount, 3)
        XCTAssertEqual(d.node("env")?.configuration.options(as: EnvironmentProperties.self), EnvironmentProperties(
            distanceModel: DistanceModel(model: .linear, referenceDistance: 2, maxDistance: 50, rolloffFactor: 0.5),
            renderingAlgorithm: .equalPower, reverb: ReverbSettings(enabled: true, preset: .largeHall, level: -6)))
        XCTAssertEqual(d.node("eq")?.configuration.options(as: EQProperties.self), EQProperties(preset: .loudness))
        XCTAssertEqual(d.node("c")?.configuration.options(as: ConverterProperties.self), ConverterProperties(
            format: FormatDescription(sampleRate: 44100, sampleType: .int16, interleaved: true), quality: .medium, channelMap: [1, 0, -1]))
        XCTAssertEqual(d.node("out")?.configuration.options(as: GenericOutputProperties.self), GenericOutputProperties(format: FormatDescription(sampleType: .int24)))
        XCTAssertEqual(d.node("d")?.automation[ParameterAddress(name: "wetDryMix")], [
            .linearRamp(value: 0, time: 1),
            .setValueCurve(values: [0, 50, 100], startTime: 1, duration: 0.5),
            .cancelScheduledValues(cancelTime: 1.8),
        ])
        XCTAssertEqual(d.updates.count, 2)
        XCTAssertEqual(d.updates[1].when.frame(sampleRate: 48000), 100)
        XCTAssertEqual(d.updates[0].when.frame(sampleRate: 48000), 48000)
        XCTAssertEqual(d.taps, [TapDescription(node: "eq", bus: 0, file: "eq.flac", path: "eq.flac")])
        // setProperty carries the node's whole configuration after the change.
        guard case .setProperty(_, _, _, let configuration) = d.updates[0].actions[1] else { return XCTFail("not setProperty") }
        XCTAssertEqual(configuration.options(as: OscillatorProperties.self),
                       OscillatorProperties(waveform: .square, channels: 2, seed: 7, startTime: 0.1, stopTime: 1.5))
    }

    func testRichGraphFormatsAfterPropagation() throws {
        let formats = try loadGraph(Self.richGraph, files: files).formats
        XCTAssertEqual(formats["osc"]?.outputs, [BusFormat(sampleRate: 48000, channels: 2)])
        XCTAssertEqual(formats["p"]?.outputs, [BusFormat(sampleRate: 44100, channels: 2)])
        XCTAssertEqual(formats["mic"]?.outputs, [BusFormat(sampleRate: 48000, channels: 1)])
        XCTAssertEqual(formats["env"]?.outputs, [BusFormat(sampleRate: 48000, channels: 2)])
        // The mixer takes the 44.1 kHz player on input 1 and converts it.
        XCTAssertEqual(formats["mix"]?.inputs, [BusFormat(sampleRate: 48000, channels: 2), BusFormat(sampleRate: 44100, channels: 2),
                                               BusFormat(sampleRate: 48000, channels: 2)])
        XCTAssertEqual(formats["d"]?.outputs, [BusFormat(sampleRate: 48000, channels: 2)])
        // The converter: its format over its input, channels from the channel map.
        XCTAssertEqual(formats["c"]?.outputs, [BusFormat(sampleRate: 44100, channels: 3, sampleType: .int16, interleaved: true)])
        XCTAssertEqual(formats["out"]?.clientFormat, BusFormat(sampleRate: 44100, channels: 3, sampleType: .int24, interleaved: true))
        XCTAssertEqual(formats["out"]?.outputs, [])
    }

    func testEQBandFieldsBecomeInitialParameterValues() throws {
        let graph = try loadGraph(Self.richGraph, files: files)
        let eq = try XCTUnwrap(graph.description.node("eq"))
        let values = eq.initialParameterValues(sampleRate: 48000)
        // loudness = lowShelf 80 Hz +6 dB, peak 1 kHz -1.5 dB q 0.7, highShelf 10 kHz +4 dB;
        // band.1.gain given as 3, band.0.bypass as 1.
        XCTAssertEqual(values[ParameterAddress("band.0.frequency")], 80)
        XCTAssertEqual(values[ParameterAddress("band.0.gain")], 6)
        XCTAssertEqual(values[ParameterAddress("band.0.q")], 0.70710678)
        XCTAssertEqual(values[ParameterAddress("band.0.bypass")], 1)
        XCTAssertEqual(values[ParameterAddress("band.1.frequency")], 1000)
        XCTAssertEqual(values[ParameterAddress("band.1.q")], 0.7)
        XCTAssertEqual(values[ParameterAddress("band.1.gain")], 3)
        XCTAssertEqual(values[ParameterAddress("band.2.gain")], 4)
        XCTAssertEqual(values[ParameterAddress("globalGain")], 0)
        XCTAssertEqual(values.count, 1 + 3 * 4)
    }

    func testPeakBandDefaultsQToOne() throws {
        let graph = try loadGraph(Self.specExamples[0])
        guard let eq = graph.description.node("eq1")?.configuration.options(as: EQProperties.self) else { return XCTFail("not an eq") }
        XCTAssertEqual(eq.bands, [EQBand(type: .peak, frequency: 1000, gain: 6, q: 1)])
        let text = Self.specExamples[0].replacingOccurrences(of: #", "q": 1}"#, with: "}")
            .replacingOccurrences(of: #""type": "peak""#, with: #""type": "lowShelf""#)
        guard let shelf = try loadGraph(text).description.node("eq1")?.configuration.options(as: EQProperties.self) else { return XCTFail("not an eq") }
        XCTAssertEqual(shelf.bands[0].q, 0.70710678)
    }

    func testDefaultRenderDurationFromLongestPlayer() throws {
        let text = """
        { "version": 1, "nodes": [
            { "id": "a", "type": "player", "properties": { "file": "a.wav", "startTime": 1 } },
            { "id": "b", "type": "player", "properties": { "file": "b.wav", "segment": { "start": 0.5 } } },
            { "id": "l", "type": "player", "properties": { "file": "long.wav", "loop": true } },
            { "id": "m", "type": "mixer", "inputBusCount": 3 }, { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "a", "to": "m:0" }, { "from": "b", "to": "m:1" }, { "from": "l", "to": "m:2" }, { "from": "m", "to": "out" } ] }
        """
        let graph = try loadGraph(text, files: [
            "a.wav": AudioFileInfo(sampleRate: 48000, channels: 1, frames: 24000),    // 1 + 0.5 = 1.5 s
            "b.wav": AudioFileInfo(sampleRate: 44100, channels: 2, frames: 132300),   // 3 s - 0.5 = 2.5 s
            "long.wav": AudioFileInfo(sampleRate: 48000, channels: 2, frames: 480000), // loops: ignored
        ])
        XCTAssertEqual(graph.defaultRenderDuration, 2.5, accuracy: 1e-12)
        XCTAssertEqual(graph.audioFiles.count, 3)
    }

    func testLoadResolvesPathsAgainstTheGraphFolder() throws {
        let folder = "/tmp/audiograph-loader-test-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/sub/g.json"
        let text = #"{ "version": 1, "nodes": [ { "id": "p", "type": "player", "properties": { "file": "../in.wav" } }, { "id": "out", "type": "genericOutput" } ], "connections": [ { "from": "p", "to": "out" } ], "taps": [ { "node": "p", "file": "t.wav" } ] }"#
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        var asked: [String] = []
        let graph = try GraphDescription.load(contentsOf: path) { file in
            asked.append(file)
            return AudioFileInfo(sampleRate: 48000, channels: 1, frames: 10)
        }
        XCTAssertEqual(asked, [folder + "/sub/../in.wav"])
        XCTAssertEqual(graph.description.taps.first?.path, folder + "/sub/t.wav")
        XCTAssertEqual(graph.description.baseDirectory, folder + "/sub")

        XCTAssertThrowsError(try GraphDescription.load(contentsOf: folder + "/missing.json") { _ in
            AudioFileInfo(sampleRate: 1, channels: 1, frames: 1)
        }) { error in
            XCTAssertEqual((error as? GraphDescriptionErrors)?.lines, ["\(folder)/missing.json: no such file"])
        }
    }

    func testLargeGraphsLoad() throws {
        // 1024 oscillators into a 1024-input mixer, then a chain of 2000 delays.
        var nodes = (0..<1024).map { #"{ "id": "o\#($0)", "type": "oscillator" }"# }
        var connections = (0..<1024).map { #"{ "from": "o\#($0)", "to": "m:\#($0)" }"# }
        nodes.append(#"{ "id": "m", "type": "mixer", "inputBusCount": 1024, "parameters": { "input.1023.pan": 1 } }"#)
        var previous = "m"
        for index in 0..<2000 {
            nodes.append(#"{ "id": "d\#(index)", "type": "delay" }"#)
            connections.append(#"{ "from": "\#(previous)", "to": "d\#(index)" }"#)
            previous = "d\(index)"
        }
        nodes.append(#"{ "id": "out", "type": "genericOutput" }"#)
        connections.append(#"{ "from": "\#(previous)", "to": "out" }"#)
        let text = graphText(nodes: nodes.joined(separator: ","), connections: connections.joined(separator: ","))
        let start = ContinuousClock.now
        let graph = try loadGraph(text)
        let elapsed = ContinuousClock.now - start
        XCTAssertEqual(graph.description.nodes.count, 1024 + 1 + 2000 + 1)
        XCTAssertEqual(graph.formats["out"]?.inputs, [BusFormat(sampleRate: 48000, channels: 2)])
        XCTAssertLessThan(elapsed, .seconds(10), "loading took \(elapsed)")
        print("large graph (3026 nodes, 3025 connections) loaded in \(elapsed)")
    }
}

extension GraphDescriptionTests {
    /// Every time the loader accepts at every rate it accepts stays exact and far from the limits.
    func testTheLoadersLimitsStayInsideInt64() {
        let frames = FrameCount.frames(seconds: GraphDescription.maximumTime, sampleRate: GraphDescription.sampleRateRange.upperBound)
        XCTAssertEqual(frames, 7_680_000_000_000)
        XCTAssertLessThan(frames, Int64.max / 1_000_000)
    }
}
