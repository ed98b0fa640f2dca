// Every kind of problem the validator reports, with its exact one-line message.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes
import AudioGraphTesting

final class GraphCheckerTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    let osc = #"{ "id": "osc", "type": "oscillator" }"#
    let out = #"{ "id": "out", "type": "genericOutput" }"#

    func lines(_ nodes: String, _ connections: String = "", extra: String = "",
               files: [String: AudioFileInfo] = [:], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        errorLines(graphText(nodes: nodes, connections: connections, extra: extra), files: files, file: file, line: line)
    }

    // MARK: Document

    func testSyntaxErrorIsOneLineWithPosition() {
        XCTAssertEqual(errorLines("{\n  \"version\": 1,\n  \"nodes\": [,]\n}"),
                       ["graph.json: invalid JSON at line 3, column 13: unexpected ',', expected a value"])
    }

    func testDocumentKeys() {
        XCTAssertEqual(errorLines(#"{ "version": 2, "nodez": [], "connections": [] }"#), [
            #"graph.json: nodez: unknown key "nodez" (did you mean "nodes"?)"#,
            #"graph.json: missing required key "nodes""#,
            "graph.json: version: version 2 is not supported (only 1)",
        ])
        XCTAssertEqual(errorLines("[]"), ["graph.json: expected an object, found an array"])
    }

    func testSettingsTypesAndRanges() {
        XCTAssertEqual(errorLines(#"{ "version": 1, "nodes": [ \#(osc), \#(out) ], "connections": [ { "from": "osc", "to": "out" } ], "sampleRate": -1, "maximumFramesPerSlice": 1.5, "duration": "long" }"#), [
            "graph.json: sampleRate: -1 must be greater than 0",
            "graph.json: maximumFramesPerSlice: 1.5 must be an integer",
            "graph.json: duration: expected a number, found a string",
        ].map { $0 })
    }

    // MARK: Nodes

    func testATimePitchCannotReadALiveInputAhead() {
        XCTAssertEqual(lines(#"{ "id": "mic", "type": "input" }, { "id": "tp", "type": "timePitch" }, \#(out)"#,
                             #"{ "from": "mic", "to": "tp" }, { "from": "tp", "to": "out" }"#),
                       [#"graph.json: nodes[1] (id "tp"): node "tp": it reads its input ahead of the clock; a live input ("mic") cannot be read ahead"#])
        XCTAssertEqual(lines(#"\#(osc), { "id": "tp", "type": "timePitch", "parameters": { "pitch": 2401 } }, \#(out)"#,
                             #"{ "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" }"#),
                       [#"graph.json: nodes[1] (id "tp").parameters.pitch: 2401 is outside -2400...2400"#])
    }

    func testIdentifiers() {
        XCTAssertEqual(lines(#"{ "id": "a b", "type": "oscillator" }, { "id": "osc", "type": "oscillator" }, \#(osc), \#(out)"#), [
            #"graph.json: nodes[0] (id "a b").id: id "a b" must match [A-Za-z0-9_-]+"#,
            #"graph.json: nodes[2] (id "osc").id: id "osc" is already used by nodes[1] (id "osc")"#,
        ])
    }

    func testUnknownTypeAndMissingKeys() {
        XCTAssertEqual(lines(#"{ "id": "x", "type": "chorus" }, { "type": "eq" }, \#(out)"#), [
            #"graph.json: nodes[0] (id "x").type: "chorus" is not one of oscillator, player, input, mixer, environment, eq, delay, recorder, converter, output, genericOutput, analyser, reverb, timePitch, varispeed, lv2, bufferSource, channelMerger, channelSplitter, compressor, constantSource, convolver, distortion, dynamicsProcessor, gain, iirFilter, limiter, matrixMixer, sampler, stereoPanner, waveShaper"#,
            #"graph.json: nodes[1]: missing required key "id""#,
        ])
    }

    func testOutputAndInputNodeCounts() {
        XCTAssertEqual(lines(#"\#(osc), \#(out), { "id": "out2", "type": "output" }, { "id": "in1", "type": "input" }, { "id": "in2", "type": "input" }"#), [
            #"graph.json: nodes: the graph has 2 output nodes ("out", "out2"); it needs exactly one"#,
            #"graph.json: nodes: the graph has 2 input nodes ("in1", "in2"); at most one is allowed"#,
        ])
    }

    func testParameters() {
        let nodes = """
        { "id": "m", "type": "mixer", "inputBusCount": 2,
          "parameters": { "input.2.volume": 1, "input.0.pan": -2, "input.1.enable": 0.5, "gain": 1, "input..x": 1, "volume": true } },
        { "id": "e", "type": "eq", "properties": { "bands": [ { "type": "peak", "frequency": 1000 } ] },
          "parameters": { "band.1.gain": 3, "band.0.frequency": 24001 } },
        \(out)
        """
        XCTAssertEqual(lines(nodes, #"{ "from": "m", "to": "out" }"#), [
            #"graph.json: nodes[0] (id "m").parameters.input.2.volume: "input.2.volume" is not a parameter: this mixer node has 2 input buses (input.0 to input.1); raise inputBusCount for input.2.volume"#,
            "graph.json: nodes[0] (id \"m\").parameters.input.0.pan: -2 is outside -1...1",
            "graph.json: nodes[0] (id \"m\").parameters.input.1.enable: 0.5 must be 0 or 1",
            #"graph.json: nodes[0] (id "m").parameters.gain: "gain" is not a parameter: a mixer node has volume, input.N.volume, input.N.pan, input.N.enable"#,
            #"graph.json: nodes[0] (id "m").parameters.input..x: "input..x" is not a parameter: not an address (write name, group.N.name or input.N.name)"#,
            "graph.json: nodes[0] (id \"m\").parameters.volume: expected a number, found a boolean",
            #"graph.json: nodes[1] (id "e").parameters.band.1.gain: "band.1.gain" is not a parameter: the eq has 1 band"#,
            "graph.json: nodes[1] (id \"e\").parameters.band.0.frequency: 24001 is outside 10...24000",
        ])
    }

    func testSampleRateDependentRanges() throws {
        let text = """
        { "version": 1, "sampleRate": 22050, "nodes": [
          { "id": "osc", "type": "oscillator", "parameters": { "frequency": 11025 } },
          { "id": "d", "type": "delay", "parameters": { "lowPassCutoff": 11026 } }, \(out) ],
          "connections": [ { "from": "osc", "to": "d" }, { "from": "d", "to": "out" } ] }
        """
        XCTAssertEqual(errorLines(text), ["graph.json: nodes[1] (id \"d\").parameters.lowPassCutoff: 11026 is outside 10...11025"])
    }

    func testAnalyserProperties() throws {
        let good = #"{ "id": "a", "type": "analyser", "properties": { "fftSize": 32768, "smoothingTimeConstant": 0, "minDecibels": -120, "maxDecibels": 0 } }"#
        let graph = try loadGraph(graphText(nodes: "\(osc), \(good), \(out)", connections: #"{ "from": "osc", "to": "a" }, { "from": "a", "to": "out" }"#))
        XCTAssertEqual(graph.description.nodes[1].configuration.options(as: AnalyserProperties.self),
                       AnalyserProperties(fftSize: 32768, smoothingTimeConstant: 0, minDecibels: -120, maxDecibels: 0))
        XCTAssertEqual(lines(#"""
            { "id": "a", "type": "analyser", "properties": { "fftSize": 1000, "smoothingTimeConstant": 1.5, "maxDecibels": -100, "window": "hann" } },
            { "id": "b", "type": "analyser", "properties": { "fftSize": 65536 } },
            { "id": "c", "type": "analyser", "properties": { "minDecibels": -20 } }, \#(out)
            """#), [
            #"graph.json: nodes[0] (id "a").properties.window: unknown key "window" (allowed: fftSize, smoothingTimeConstant, minDecibels, maxDecibels)"#,
            #"graph.json: nodes[0] (id "a").properties.fftSize: fftSize 1000 is not a power of two"#,
            #"graph.json: nodes[0] (id "a").properties.smoothingTimeConstant: 1.5 is outside 0...1"#,
            #"graph.json: nodes[0] (id "a").properties.maxDecibels: maxDecibels -100 must be above minDecibels -100"#,
            #"graph.json: nodes[1] (id "b").properties.fftSize: 65536 is outside 32...32768"#,
            #"graph.json: nodes[2] (id "c").properties.minDecibels: minDecibels -20 must be below maxDecibels -30"#,
        ])
    }

    func testInputBusCount() {
        XCTAssertEqual(lines(#"{ "id": "m", "type": "mixer", "inputBusCount": 1025 }, { "id": "e", "type": "eq", "inputBusCount": 2 }, \#(out)"#), [
            "graph.json: nodes[0] (id \"m\").inputBusCount: 1025 is outside 1...1024",
            "graph.json: nodes[1] (id \"e\").inputBusCount: an eq node has 1 input bus; inputBusCount is for mixer and environment nodes",
        ])
    }

    func testProperties() {
        let nodes = """
        { "id": "osc", "type": "oscillator", "properties": { "waveform": "saw", "channels": 0, "seed": -1, "stopTime": 0, "colour": 1 } },
        { "id": "p", "type": "player", "properties": { "loop": 1 } },
        { "id": "e", "type": "eq", "properties": { "bands": [ { "type": "peak", "gain": 30, "slope": 2 } ], "preset": "rock" } },
        { "id": "c", "type": "converter", "properties": { "quality": "great", "channelMap": [0, -2], "format": { "sampleType": "int8" } } },
        { "id": "env", "type": "environment", "properties": { "distanceModel": { "model": "log", "maxDistance": 0 }, "channels": 4 } },
        \(out)
        """
        XCTAssertEqual(lines(nodes), [
            #"graph.json: nodes[0] (id "osc").properties.colour: unknown key "colour" (allowed: waveform, channels, seed, startTime, stopTime, real, imag, disableNormalization)"#,
            #"graph.json: nodes[0] (id "osc").properties.waveform: "saw" is not one of sine, square, sawtooth, triangle, noise, custom"#,
            "graph.json: nodes[0] (id \"osc\").properties.channels: 0 is outside 1...256",
            "graph.json: nodes[0] (id \"osc\").properties.seed: -1 is outside 0...9007199254740991",
            "graph.json: nodes[0] (id \"osc\").properties.stopTime: stopTime 0 must be after startTime 0",
            #"graph.json: nodes[1] (id "p").properties: missing required key "file""#,
            "graph.json: nodes[1] (id \"p\").properties.loop: expected true or false, found a number",
            #"graph.json: nodes[2] (id "e").properties: give either "bands" or "preset", not both"#,
            "graph.json: nodes[3] (id \"c\").properties.format.sampleType: \"int8\" is not one of float32, float64, int16, int24, int32",
            #"graph.json: nodes[3] (id "c").properties.quality: "great" is not one of best, medium, fastest, linear, zeroOrderHold, sincBest"#,
            "graph.json: nodes[3] (id \"c\").properties.channelMap[1]: -2 is outside -1...255",
            #"graph.json: nodes[4] (id "env").properties.distanceModel.model: "log" is not one of inverse, linear, exponential, none"#,
            "graph.json: nodes[4] (id \"env\").properties.distanceModel.maxDistance: 0 must be greater than 0",
            "graph.json: nodes[4] (id \"env\").properties.channels: an environment's output is stereo: channels must be 2, found 4",
        ])
    }

    /// The types whose `file` is required say so when it is absent, and report a present but
    /// invalid one (the lines of the CLI before the types shared one reader call).
    func testARequiredFileIsReportedMissingOrInvalid() {
        XCTAssertEqual(lines("""
        { "id": "r", "type": "recorder" },
        { "id": "b", "type": "bufferSource" },
        { "id": "c", "type": "convolver" },
        { "id": "p", "type": "player", "properties": { "file": 3 } },
        { "id": "b2", "type": "bufferSource", "properties": { "file": "" } },
        { "id": "r2", "type": "recorder", "properties": { "file": "x.zzz" } },
        \(out)
        """), [
            #"graph.json: nodes[0] (id "r").properties: missing required key "file""#,
            #"graph.json: nodes[1] (id "b").properties: missing required key "file""#,
            #"graph.json: nodes[2] (id "c").properties: missing required key "file""#,
            "graph.json: nodes[3] (id \"p\").properties.file: expected a string, found a number",
            "graph.json: nodes[4] (id \"b2\").properties.file: the file name is empty",
            #"graph.json: nodes[5] (id "r2").properties.file: cannot write "x.zzz": the extension must be one of aif, aifc, aiff, au, caf, flac, oga, ogg, rf64, snd, w64, wav, wave"#,
        ])
    }

    func testIOAndEnvironmentProperties() {
        XCTAssertEqual(lines("""
        { "id": "in", "type": "input", "properties": { "device": 3, "channels": 300, "latency": 0 } },
        { "id": "env", "type": "environment", "properties": { "renderingAlgorithm": "hrtf", "hrtf": "no-such-set.sofa",
            "reverb": { "enabled": "yes", "preset": "hall", "level": 50, "size": 1 },
            "distanceModel": { "model": "linear", "referenceDistance": 5, "maxDistance": 2, "rolloffFactor": -1 } } },
        { "id": "o", "type": "output", "properties": { "latency": -5, "streamName": "AudioGraph", "sink": "x" } }
        """, #"{ "from": "in", "to": "env" }, { "from": "env", "to": "o" }"#), [
            "graph.json: nodes[0] (id \"in\").properties.device: expected a string, found a number",
            "graph.json: nodes[0] (id \"in\").properties.channels: 300 is outside 1...256",
            "graph.json: nodes[0] (id \"in\").properties.latency: 0 must be greater than 0",
            "graph.json: nodes[1] (id \"env\").properties.distanceModel.rolloffFactor: -1 must not be negative",
            "graph.json: nodes[1] (id \"env\").properties.distanceModel: maxDistance 2 must not be less than referenceDistance 5 for the linear model",
            #"graph.json: nodes[1] (id "env").properties.reverb.size: unknown key "size" (allowed: enabled, preset, level)"#,
            "graph.json: nodes[1] (id \"env\").properties.reverb.enabled: expected true or false, found a string",
            #"graph.json: nodes[1] (id "env").properties.reverb.preset: "hall" is not one of smallRoom, mediumRoom, largeRoom, largeRoom2, mediumHall, mediumHall2, mediumHall3, largeHall, largeHall2, plate, mediumChamber, largeChamber, cathedral"#,
            "graph.json: nodes[1] (id \"env\").properties.reverb.level: 50 is outside -40...40",
            #"graph.json: nodes[2] (id "o").properties.sink: unknown key "sink" (allowed: device, latency, streamName)"#,
            "graph.json: nodes[2] (id \"o\").properties.latency: -5 must be greater than 0",
            #"graph.json: nodes[1] (id "env").properties.hrtf: cannot read "no-such-set.sofa" for node "env": no such file"#,
        ])
    }

    func testEQBandsAreCheckedWhenNotPreset() {
        XCTAssertEqual(lines(#"{ "id": "e", "type": "eq", "properties": { "bands": [ { "type": "peak", "gain": 30, "slope": 2 }, { "frequency": 5 } ] } }, \#(out)"#), [
            #"graph.json: nodes[0] (id "e").properties.bands[0].slope: unknown key "slope" (allowed: type, frequency, gain, q, bypass)"#,
            "graph.json: nodes[0] (id \"e\").properties.bands[0].gain: 30 is outside -96...24",
            #"graph.json: nodes[0] (id "e").properties.bands[1]: missing required key "type""#,
            "graph.json: nodes[0] (id \"e\").properties.bands[1].frequency: 5 is outside 10...24000",
        ])
    }

    func testFormats() {
        XCTAssertEqual(lines(#"{ "id": "osc", "type": "oscillator", "format": { "sampleRate": 0, "channels": 2.5, "interleaved": "no", "bits": 16 } }, \#(out)"#), [
            #"graph.json: nodes[0] (id "osc").format.bits: unknown key "bits" (allowed: sampleRate, channels, sampleType, interleaved)"#,
            "graph.json: nodes[0] (id \"osc\").format.sampleRate: 0 must be greater than 0",
            "graph.json: nodes[0] (id \"osc\").format.channels: 2.5 must be an integer",
            "graph.json: nodes[0] (id \"osc\").format.interleaved: expected true or false, found a string",
        ])
    }

    // MARK: Connections

    func testConnectionProblems() {
        let nodes = #"\#(osc), { "id": "osc2", "type": "oscillator" }, { "id": "m", "type": "mixer", "inputBusCount": 2 }, \#(out)"#
        let connections = """
        { "from": "osc", "to": "m:2" }, { "from": "out", "to": "m" }, { "from": "osc", "to": "m" },
        { "from": "osc2", "to": "m:0" }, { "from": "m", "to": "osc" }, { "from": "m", "to": "out:x" }, { "from": "m" },
        { "from": "ghost", "to": "phantom:1" }, { "from": "m", "to": "out" }
        """
        XCTAssertEqual(lines(nodes, connections), [
            #"graph.json: connections[5].to: "out:x" is not a bus (write "node" or "node:N")"#,
            #"graph.json: connections[6]: missing required key "to""#,
            #"graph.json: connections[0].to: "m" has no input bus 2 (it has 2 input buses)"#,
            #"graph.json: connections[1].from: "out" has no output bus 0 (it has 0 output buses)"#,
            #"graph.json: connections[3].to: input bus 0 of "m" already has a connection (from "osc" in connections[2]); an input bus takes one connection"#,
            #"graph.json: connections[4].to: "osc" has no input bus 0 (it has 0 input buses)"#,
            #"graph.json: connections[7].from: no node has the id "ghost""#,
            #"graph.json: connections[7].to: no node has the id "phantom""#,
        ])
    }

    func testSelfLoopIsACycle() {
        XCTAssertEqual(lines(#"\#(osc), { "id": "d", "type": "delay" }, \#(out)"#,
                             #"{ "from": "d", "to": "d" }, { "from": "osc", "to": "out" }"#),
                       [#"graph.json: connections[0]: the connections form a cycle through "d""#])
    }

    func testReferencesToBrokenNodesAreNotReportedTwice() {
        XCTAssertEqual(lines(#"{ "id": "x", "type": "oscilator" }, \#(out)"#, #"{ "from": "x", "to": "out" }"#),
                       [#"graph.json: nodes[0] (id "x").type: "oscilator" is not one of oscillator, player, input, mixer, environment, eq, delay, recorder, converter, output, genericOutput, analyser, reverb, timePitch, varispeed, lv2, bufferSource, channelMerger, channelSplitter, compressor, constantSource, convolver, distortion, dynamicsProcessor, gain, iirFilter, limiter, matrixMixer, sampler, stereoPanner, waveShaper (did you mean "oscillator"?)"#])
    }

    // MARK: Many problems at once

    func testReportsEveryProblemNotJustTheFirst() {
        let text = """
        { "version": 1, "sampel": 1,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": -5, "amplitude": 2 } },
                     { "id": "echo", "type": "delay", "parameters": { "feedback": 150 } }, \(out) ],
          "connections": [ { "from": "osc", "to": "echo" }, { "from": "echo", "to": "nowhere" } ] }
        """
        XCTAssertEqual(errorLines(text), [
            #"graph.json: sampel: unknown key "sampel" (allowed: version, sampleRate, maximumFramesPerSlice, duration, nodes, connections, updates, taps)"#,
            "graph.json: nodes[0] (id \"osc\").parameters.frequency: -5 is outside 0...24000",
            "graph.json: nodes[0] (id \"osc\").parameters.amplitude: 2 is outside 0...1",
            "graph.json: nodes[1] (id \"echo\").parameters.feedback: 150 is outside -100...100",
            #"graph.json: connections[1].to: no node has the id "nowhere""#,
        ])
    }

    // MARK: Files and formats

    func testUnreadablePlayerFileNamesTheFileAndTheNode() {
        XCTAssertEqual(lines(#"{ "id": "p", "type": "player", "properties": { "file": "gone.wav" } }, \#(out)"#, #"{ "from": "p", "to": "out" }"#),
                       [#"graph.json: nodes[0] (id "p").properties.file: cannot read "gone.wav" for node "p": no such file"#])
    }

    func testPlayerSegmentBeyondTheFile() {
        XCTAssertEqual(lines(#"{ "id": "p", "type": "player", "properties": { "file": "a.wav", "segment": { "start": 2 } } }, \#(out)"#,
                             #"{ "from": "p", "to": "out" }"#, files: ["a.wav": AudioFileInfo(sampleRate: 48000, channels: 2, frames: 48000)]),
                       [#"graph.json: nodes[0] (id "p").properties.segment.start: 2 s is not before the end of "a.wav" (1 s)"#])
    }

    func testRateMismatchIntoOutputButNotIntoConvertingNodes() throws {
        let files = ["a.wav": AudioFileInfo(sampleRate: 44100, channels: 2, frames: 44100)]
        let player = #"{ "id": "p", "type": "player", "properties": { "file": "a.wav" } }"#
        // A PulseAudio output opens its stream at its input's rate; one with a declared rate does not convert.
        _ = try loadGraph(graphText(nodes: #"\#(player), { "id": "o", "type": "output" }"#, connections: #"{ "from": "p", "to": "o" }"#), files: files)
        XCTAssertEqual(lines(#"\#(player), { "id": "o", "type": "output", "format": { "sampleRate": 48000 } }"#, #"{ "from": "p", "to": "o" }"#, files: files),
                       [#"graph.json: connections[0]: "p" outputs 44100 Hz but "o" runs at 48000 Hz and does not convert rates (put a converter between them)"#])
        for converting in [#""type": "mixer""#, #""type": "environment""#,
                           #""type": "converter", "properties": { "format": { "sampleRate": 48000 } }"#] {
            _ = try loadGraph(graphText(nodes: #"\#(player), { "id": "x", \#(converting) }, { "id": "o", "type": "output" }"#,
                                        connections: #"{ "from": "p", "to": "x" }, { "from": "x", "to": "o" }"#), files: files)
        }
        _ = try loadGraph(graphText(nodes: "\(player), \(out)", connections: #"{ "from": "p", "to": "out" }"#), files: files)
    }

    func testMismatchFollowsAnEffectChain() {
        // An effect's output format is its input's: the 44.1 kHz reaches the 48 kHz eq through a delay.
        let files = ["a.wav": AudioFileInfo(sampleRate: 44100, channels: 1, frames: 44100)]
        XCTAssertEqual(lines(#"{ "id": "p", "type": "player", "properties": { "file": "a.wav" } }, { "id": "d", "type": "delay" }, { "id": "e", "type": "eq", "format": { "sampleRate": 48000, "channels": 2 } }, \#(out)"#,
                             #"{ "from": "p", "to": "d" }, { "from": "d", "to": "e" }, { "from": "e", "to": "out" }"#, files: files), [
            #"graph.json: connections[1]: "d" outputs 44100 Hz but "e" runs at 48000 Hz and does not convert rates (put a converter between them)"#,
        ])
    }

    func testDeclaredFormatConflicts() {
        let files = ["a.wav": AudioFileInfo(sampleRate: 44100, channels: 1, frames: 44100)]
        XCTAssertEqual(lines("""
        { "id": "p", "type": "player", "properties": { "file": "a.wav" }, "format": { "sampleRate": 48000 } },
        { "id": "m", "type": "mixer", "properties": { "channels": 2 }, "format": { "channels": 6, "sampleType": "int16" } },
        { "id": "c", "type": "converter", "properties": { "channelMap": [0, 3] } },
        \(out)
        """, #"{ "from": "p", "to": "m" }, { "from": "m", "to": "c" }, { "from": "c", "to": "out" }"#, files: files), [
            #"graph.json: nodes[0] (id "p").format.sampleRate: the file "a.wav" is 44100 Hz but the format declares 48000 Hz (a player outputs its file's rate; put a converter after it)"#,
            "graph.json: nodes[1] (id \"m\").format.sampleType: inside the graph samples are float32; only a converter or a genericOutput produces int16",
            "graph.json: nodes[1] (id \"m\").format.channels: format declares 6 channels but the property channels is 2",
        ])
        // A channel map naming a channel the input lacks: the converter's own rule, from the engine.
        XCTAssertEqual(lines(#"\#(osc), { "id": "c", "type": "converter", "properties": { "channelMap": [0, 3] } }, \#(out)"#,
                             #"{ "from": "osc", "to": "c" }, { "from": "c", "to": "out" }"#),
                       [#"graph.json: nodes[1] (id "c"): node "c": channelMap[1] = 3, but the input has 1 channel(s)"#])
    }

    func testInputChannelMap() throws {
        // Valid: picks of the captured channels in any order; the bus has the map's length.
        let valid = try loadGraph(graphText(nodes: """
        { "id": "in", "type": "input", "properties": { "channels": 4, "channelMap": [3, 2, 3] } },
        \(out)
        """, connections: #"{ "from": "in", "to": "out" }"#))
        XCTAssertEqual(valid.formats["in"]?.outputs.first?.channels, 3)
        // One input node per graph: one bad map per file.
        for (node, error) in [
            (#"{ "id": "a", "type": "input", "properties": { "channelMap": [1, 2] } }"#,
             "graph.json: nodes[0] (id \"a\").properties.channelMap[1]: 2 is outside 0...1"),
            (#"{ "id": "a", "type": "input", "properties": { "channelMap": [] } }"#,
             "graph.json: nodes[0] (id \"a\").properties.channelMap: a channel map has 1...256 entries, found 0"),
            (#"{ "id": "a", "type": "input", "properties": { "channels": 4, "channelMap": [3, 2] }, "format": { "channels": 1 } }"#,
             "graph.json: nodes[0] (id \"a\").format.channels: format declares 1 channels but the channelMap's length is 2"),
        ] {
            XCTAssertEqual(lines("\(node), \(out)", #"{ "from": "a", "to": "out" }"#), [error])
        }
    }

    // MARK: Taps

    func testTaps() {
        XCTAssertEqual(lines("\(osc), \(out)", #"{ "from": "osc", "to": "out" }"#, extra: """
        "taps": [ { "node": "osc", "bus": 1, "file": "a.wav" }, { "node": "out", "file": "b.wav" }, { "node": "nope", "file": "c.wav" },
                  { "node": "osc", "file": "d.mp3" }, { "node": "osc", "file": "a.wav" } ]
        """), [
            #"graph.json: taps[3].file: cannot write "d.mp3": the extension must be one of aif, aifc, aiff, au, caf, flac, oga, ogg, rf64, snd, w64, wav, wave"#,
            #"graph.json: taps[0].bus: "osc" has no output bus 1 (it has 1 output bus)"#,
            #"graph.json: taps[1].bus: "out" has no output bus 0 (it has 0 output buses)"#,
            #"graph.json: taps[2].node: no node has the id "nope""#,
            #"graph.json: taps[4].file: "a.wav" is already written by taps[0]"#,
        ])
    }

    // MARK: Structure-aware fuzzing

    /// Replaces values of valid graphs with random JSON values: the loader must report, never crash.
    func testRandomValuesInValidGraphsNeverCrash() throws {
        var generator = SeededRandom(seed: 42)
        let base = try JSONValue.parse(GraphDescriptionTests.richGraph)
        func randomValue(depth: Int) -> JSONValue {
            switch generator.next() % 9 {
            case 0: return .null
            case 1: return .bool(generator.next() % 2 == 0)
            case 2: return .number(JSONNumber(Double(Int64(bitPattern: generator.next()) % 3000) - 100))
            case 3: return .number(JSONNumber([0, -1, 1e300, -1e300, 0.5, 1e-300, 9.3e18, 1024, 1025][Int(generator.next() % 9)]))
            case 4: return .string(["", "osc", "out", "mix:1", "x:99999999999", "band.0.gain", "input.1.pan", "a.wav", "listener.x"][Int(generator.next() % 9)])
            case 5 where depth < 3: return .array((0..<Int(generator.next() % 3)).map { _ in randomValue(depth: depth + 1) })
            case 6 where depth < 3: return .object(JSONObject([JSONMember(key: "value", value: randomValue(depth: depth + 1))]))
            default: return .number(JSONNumber(Double(generator.next() % 5)))
            }
        }
        func mutate(_ value: JSONValue) -> JSONValue {
            if generator.next() % 80 == 0 { return randomValue(depth: 0) }
            switch value {
            case .array(let elements): return .array(elements.map(mutate))
            case .object(let object): return .object(JSONObject(object.members.map { JSONMember(key: $0.key, value: mutate($0.value)) }))
            default: return value
            }
        }
        var loaded = 0
        var reported = 0
        for _ in 0..<1000 {
            let mutated = mutate(base)
            let bytes = Array(JSONWriter.text(of: mutated).utf8)
            do {
                _ = try GraphDescription.parse(data: bytes, fileName: "fuzz.json", baseDirectory: ".", fileInfo: { _ in
                    AudioFileInfo(sampleRate: 44100, channels: 2, frames: 441_000)
                })
                loaded += 1
            } catch {
                XCTAssertFalse(error.errors.isEmpty)
                XCTAssertFalse(error.lines.contains { $0.contains("invalid JSON") }, "the writer produced invalid JSON: \(error.lines)")
                reported += error.errors.count
                for line in error.lines {
                    XCTAssertTrue(line.hasPrefix("fuzz.json: ") && !line.contains("\n"), line)
                }
            }
        }
        // The mutations reach the validator (not the JSON parser) and are reported.
        XCTAssertGreaterThan(reported, 500)
        XCTAssertGreaterThan(loaded, 0)
        print("structure fuzz: \(loaded) of 1000 mutated graphs loaded, \(reported) problems reported")
    }
}

/// Writes JSON values back to text (for the fuzz test).
enum JSONWriter {
    static func text(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .number(let number): return number.isInteger && number.value.magnitude < 1e15 ? String(Int64(number.value)) : "\(number.value)"
        case .string(let string): return "\"" + string + "\""
        case .array(let elements): return "[" + elements.map(text(of:)).joined(separator: ",") + "]"
        case .object(let object): return "{" + object.members.map { "\"\($0.key)\":" + text(of: $0.value) }.joined(separator: ",") + "}"
        }
    }
}
