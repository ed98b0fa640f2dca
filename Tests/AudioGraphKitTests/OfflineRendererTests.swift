// Tests of OfflineRenderer: samples against formulas, sample-exact updates, taps, atomic output, determinism.
@testable import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class OfflineRendererTests: XCTestCase {
    let sr = 48000.0

    func testSineGraphRendersTheFormula() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.25,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, in: dir)
        let path = dir.appendingPathComponent("sine.wav").path
        let r = try OfflineRenderer(v, outputPath: path)
        XCTAssertEqual(r.frameCount, 12000, "the graph's duration")
        XCTAssertEqual(r.fileFormat, StreamFormat(sampleRate: 48000, channelCount: 1))
        try r.render(to: path)
        let read = try AudioFileReader.read(path: path)
        XCTAssertEqual(read.info, AudioFileInfo(sampleRate: 48000, channels: 1, frames: 12000))
        let e = SignalMeasurement.worstError(read.channels[0]) { n in 0.5 * sin(2 * Double.pi * 440 * Double(n) / self.sr) }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
        XCTAssertEqual(Double(r.peak), 0.5, accuracy: 1e-4)
        XCTAssertEqual(r.rms, 0.5 / 2.0.squareRoot(), accuracy: 1e-4)
    }

    /// The Web Audio behaviours end to end from a graph file: an eq band at exactly
    /// sampleRate/2 (lowShelf: the constant A² = 10^(6/20)), a listener turned by its forward
    /// vector (+X: the source at -Z is hard left), a cone facing away (coneOuterGain), an
    /// exponential ramp from 0 (holds 0 until its end) and a cancel that removes a curve in
    /// progress (the gain stays 1).
    func testWebAudioSemanticsFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 333,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
                         { "id": "eq", "type": "eq", "properties": { "bands": [ { "type": "lowShelf", "frequency": 24000, "gain": 6 } ] } },
                         { "id": "env", "type": "environment",
                           "parameters": { "input.0.z": -2, "input.0.orientationX": 0, "input.0.orientationZ": -1,
                                           "input.0.coneInnerAngle": 90, "input.0.coneOuterAngle": 180,
                                           "listener.forwardX": 1, "listener.forwardZ": 0 },
                           "automation": {
                             "input.0.coneOuterGain": [ { "setValueAtTime": { "value": 0, "time": 0 } },
                                                        { "exponentialRampToValueAtTime": { "value": 0.8, "time": 0.5 } } ],
                             "input.0.gain": [ { "setValueCurveAtTime": { "values": [0.1, 0.2], "startTime": 0.2, "duration": 0.6 } },
                                               { "cancelScheduledValues": { "cancelTime": 0.4 } } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "eq" }, { "from": "eq", "to": "env" }, { "from": "env", "to": "out" } ] }
            """, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("w.wav").path, frames: 48000, slice: 333).channels
        let gain = pow(10, 6.0 / 20) * 0.5   // shelf A², inverse distance at 2 m
        let e = SignalMeasurement.worstError(y[0]) { n in
            (n < 24000 ? 0 : Double(Float(0.8)) * gain) * 0.5 * sin(2 * Double.pi * 440 * Double(n) / self.sr)
        }
        XCTAssertLessThan(e.error, 1e-5, "left at \(e.at)")
        XCTAssertLessThan(SignalMeasurement.worstError(y[1]) { _ in 0 }.error, 1e-6, "right")
    }

    func testUpdatesApplyAtExactFramesInsideSlices() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        // Slices of 512; updates at frames 1000 (step), 2000 (10 ms ramp to 0) and 3001 (re-patch to a new oscillator).
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 512,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ],
              "updates": [
                { "frame": 1000, "actions": [ { "setParameter": { "node": "osc", "address": "amplitude", "value": 0.25 } } ] },
                { "frame": 2000, "actions": [ { "setParameter": { "node": "osc", "address": "amplitude", "value": 0, "rampDuration": 0.01 } } ] },
                { "frame": 3001, "actions": [
                    { "addNode": { "id": "osc2", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.125 } } },
                    { "disconnect": { "to": "out" } },
                    { "connect": { "from": "osc2", "to": "out" } } ] } ] }
            """, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("u.wav").path, frames: 4000, slice: 512).channels[0]
        XCTAssertEqual(y.count, 4000)
        let e = SignalMeasurement.worstError(y) { n in
            let s = sin(2 * Double.pi * 440 * Double(n) / self.sr)
            switch n {
            case ..<1000: return 0.5 * s
            case ..<2000: return 0.25 * s
            case ..<2480: return 0.25 * (1 - Double(n - 2000) / 480) * s
            case ..<3001: return 0
            default: return 0.125 * sin(2 * Double.pi * 1000 * Double(n - 3001) / self.sr)  // counts from the frame it was added
            }
        }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
    }

    func testTapsRecordEveryFrameOfABus() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
              "nodes": [ { "id": "a", "type": "oscillator", "parameters": { "frequency": 300, "amplitude": 0.5 } },
                         { "id": "b", "type": "oscillator", "parameters": { "frequency": 700, "amplitude": 0.25 } },
                         { "id": "mix", "type": "mixer", "inputBusCount": 2, "properties": { "channels": 1 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:1" }, { "from": "mix", "to": "out" } ],
              "updates": [ { "frame": 1000, "actions": [ { "disconnect": { "to": "mix:1" } } ] } ],
              "taps": [ { "node": "b", "bus": 0, "file": "b-tap.wav" }, { "node": "mix", "file": "taps/mix.flac" } ] }
            """, in: dir)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("taps"), withIntermediateDirectories: true)
        let y = try renderToFile(v, dir.appendingPathComponent("out.wav").path, frames: 2000).channels[0]
        let b = try AudioFileReader.read(path: dir.appendingPathComponent("b-tap.wav").path)
        let m = try AudioFileReader.read(path: dir.appendingPathComponent("taps/mix.flac").path)
        XCTAssertEqual(b.info.frames, 2000)
        XCTAssertEqual(m.info.frames, 2000)
        // b renders while connected, then is silent (not pulled).
        let eb = SignalMeasurement.worstError(b.channels[0]) { n in n < 1000 ? 0.25 * sin(2 * Double.pi * 700 * Double(n) / self.sr) : 0 }
        XCTAssertLessThan(eb.error, 1e-6, "at \(eb.at)")
        // The mixer tap (24-bit FLAC) is the output.
        let em = SignalMeasurement.worstError(m.channels[0]) { Double(y[$0]) }
        XCTAssertLessThan(em.error, 1.5 / 8_388_608)
        let ey = SignalMeasurement.worstError(y) { n in
            0.5 * sin(2 * Double.pi * 300 * Double(n) / self.sr) + (n < 1000 ? 0.25 * sin(2 * Double.pi * 700 * Double(n) / self.sr) : 0)
        }
        XCTAssertLessThan(ey.error, 2e-6, "at \(ey.at)")
    }

    /// A `recorder` node between a mixer and the output, rendered offline in slices of 256 with
    /// an update moving the mix: its float32 WAV equals the rendered output bit for bit, and only
    /// the final files remain.
    func testRecorderNodeWritesWhatPassesBitForBit() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
              "nodes": [ { "id": "a", "type": "oscillator", "parameters": { "frequency": 300, "amplitude": 0.5 } },
                         { "id": "b", "type": "oscillator", "properties": { "waveform": "sawtooth" }, "parameters": { "frequency": 701, "amplitude": 0.25 } },
                         { "id": "mix", "type": "mixer", "inputBusCount": 2, "properties": { "channels": 2 } },
                         { "id": "rec", "type": "recorder", "properties": { "file": "take.wav" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:1" },
                               { "from": "mix", "to": "rec" }, { "from": "rec", "to": "out" } ],
              "updates": [ { "frame": 1000, "actions": [ { "disconnect": { "to": "mix:1" } } ] } ] }
            """, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("out.wav").path, frames: 5000)
        let rec = try AudioFileReader.read(path: dir.appendingPathComponent("take.wav").path)
        XCTAssertEqual(rec.info, AudioFileInfo(sampleRate: 48000, channels: 2, frames: 5000))
        XCTAssertEqual(rec.channels, y.channels, "the recording is the output, bit for bit")
        XCTAssertNotEqual(y.channels[0][500], 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["out.wav", "take.wav"])
    }

    /// A cancelled render leaves neither the recorder's file nor its temporary (nor the output's).
    func testCancelledRenderLeavesNoRecording() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 2,
              "nodes": [ { "id": "a", "type": "oscillator" },
                         { "id": "rec", "type": "recorder", "properties": { "file": "take.flac", "sampleType": "int16" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "rec" }, { "from": "rec", "to": "out" } ] }
            """, in: dir)
        let r = try OfflineRenderer(v, outputPath: dir.appendingPathComponent("out.wav").path)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".take.partial-") }.count, 1)
        var asked = 0
        XCTAssertThrowsError(try r.render(to: dir.appendingPathComponent("out.wav").path, isCancelled: {
            asked += 1
            return asked > 20
        })) { error in
            XCTAssertEqual("\(error)", "\(RenderError.interrupted)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// A recorder may not write the render's output file, nor a file a tap writes.
    func testRecorderFileClashesAreRefused() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let text = """
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "a", "type": "oscillator" },
                         { "id": "rec", "type": "recorder", "properties": { "file": "./x.wav" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "rec" }, { "from": "rec", "to": "out" } ] TAPS }
            """
        let v = try parseGraph(text.replacingOccurrences(of: "TAPS", with: ""), in: dir)
        XCTAssertThrowsError(try OfflineRenderer(v, outputPath: dir.appendingPathComponent("x.wav").path)) { error in
            XCTAssertEqual("\(error)", #"graph.json: node "rec" properties.file: "./x.wav" is the render's output file \#(dir.path)/x.wav"#)
        }
        XCTAssertThrowsError(try GraphLoader.parse(text: text.replacingOccurrences(of: "TAPS", with: #", "taps": [ { "node": "a", "file": "x.wav" } ]"#),
                                                   fileName: "graph.json", baseDirectory: dir.path)) { error in
            XCTAssertEqual("\(error)", #"graph.json: taps[0].file: "x.wav" is already written by nodes[1] (id "rec").properties.file"#)
        }
        XCTAssertThrowsError(try GraphLoader.parse(text: text.replacingOccurrences(of: "./x.wav", with: "x.mp3").replacingOccurrences(of: "TAPS", with: ""),
                                                   fileName: "graph.json", baseDirectory: dir.path)) { error in
            XCTAssertTrue("\(error)".hasPrefix(#"graph.json: nodes[1] (id "rec").properties.file: cannot write "x.mp3": the extension must be one of"#), "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// A tap on a node that runs at its own rate (a 44.1 kHz player behind the mixer's converter)
    /// records what that bus produced, at its rate.
    func testTapOfANodeAtAnotherRate() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let samples = (0..<4410).map { Float(0.5 * sin(Double($0) * 0.07)) }
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, [samples], sampleRate: 44100)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 512, "duration": 0.1,
              "nodes": [ { "id": "p", "type": "player", "properties": { "file": "in.wav" } },
                         { "id": "mix", "type": "mixer" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "mix" }, { "from": "mix", "to": "out" } ],
              "taps": [ { "node": "p", "file": "p-tap.wav" } ] }
            """, in: dir)
        try renderToFile(v, dir.appendingPathComponent("out.wav").path)
        let tap = try AudioFileReader.read(path: dir.appendingPathComponent("p-tap.wav").path)
        XCTAssertEqual(tap.info.sampleRate, 44100)
        // The converter may pull a little ahead; at least the 0.1 s rendered must be there, as played.
        XCTAssertGreaterThanOrEqual(tap.info.frames, 4410)
        let n = min(4410, tap.channels[0].count)
        let e = SignalMeasurement.worstError(Array(tap.channels[0][0..<n])) { Double(samples[$0]) }
        XCTAssertEqual(e.error, 0, "tap sample \(e.at)")
        if e.error != 0 {
            let zeros = tap.channels[0].indices.filter { tap.channels[0][$0] == 0 && $0 < n && samples[$0] != 0 }
            print("tap: \(tap.info.frames) frames; \(zeros.count) frames wrongly silent, first runs: \(zeros.prefix(3)) ... \(zeros.suffix(3))")
        }
    }

    func testClientFormatOfTheGenericOutput() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        // A stereo oscillator into a mono int16 client format: the file is mono, 16 bits.
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 100, "amplitude": 0.5 }, "properties": { "channels": 2 } },
                         { "id": "out", "type": "genericOutput", "properties": { "format": { "channels": 1, "sampleType": "int16" } } } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, in: dir)
        let path = dir.appendingPathComponent("client.wav").path
        let r = try OfflineRenderer(v, outputPath: path, frames: 480)
        XCTAssertEqual(r.fileFormat, StreamFormat(sampleRate: 48000, channelCount: 1, sampleType: .int16))
        try r.render(to: path)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        XCTAssertEqual(size, 44 + 480 * 2)
        let y = try AudioFileReader.read(path: path).channels[0]
        // Stereo to mono by the speakers rule: (L + R) / 2 = the oscillator's value.
        let e = SignalMeasurement.worstError(y) { n in 0.5 * sin(2 * Double.pi * 100 * Double(n) / self.sr) }
        XCTAssertLessThan(e.error, 1.01 / 32768)
    }

    /// Spec, genericOutput: "converts when its `format` names another rate".
    func testClientFormatRateIsConverted() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 1,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
                         { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleRate": 44100 } } } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, in: dir)
        let path = dir.appendingPathComponent("rate.wav").path
        let read = try renderToFile(v, path)
        XCTAssertEqual(read.sampleRate, 44100, "the client format's rate")
        XCTAssertEqual(read.channels[0].count, 44100, "1 s at the client rate")
        // The 1 kHz tone keeps its level and its place on the timeline: fit frames 4410...44099.
        var s = 0.0, c = 0.0
        for n in 4410..<44100 {
            let w = 2 * Double.pi * 1000 * Double(n) / 44100
            s += Double(read.channels[0][n]) * sin(w)
            c += Double(read.channels[0][n]) * cos(w)
        }
        let a = 2 * s / 39690, b = 2 * c / 39690
        XCTAssertEqual(20 * log10((a * a + b * b).squareRoot() / 0.5), 0, accuracy: 0.05)
        XCTAssertEqual(atan2(b, a), 0, accuracy: 0.01)
    }

    func testOutputFileAppearsOnlyWhenComplete() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let input = dir.appendingPathComponent("in.wav").path
        try TestFiles.writeSoundFile(input, [[Float](repeating: 0.5, count: 100)], sampleRate: 48000)
        // The update adds a player whose file is gone by the time the render reaches it.
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ],
              "updates": [ { "frame": 24000, "actions": [
                  { "addNode": { "id": "p", "type": "player", "properties": { "file": "in.wav" } } },
                  { "disconnect": { "to": "out" } }, { "connect": { "from": "p", "to": "out" } } ] } ],
              "taps": [ { "node": "osc", "file": "tap.wav" } ] }
            """, in: dir)
        try FileManager.default.removeItem(atPath: input)
        let path = dir.appendingPathComponent("out.wav").path
        let r = try OfflineRenderer(v, outputPath: path, frames: 48000)
        XCTAssertThrowsError(try r.render(to: path)) {
            guard case .graph(.nodeSetupFailed(node: "p", _)) = $0 as? RenderError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(fileNames(dir), [], "neither the output, the tap nor a partial file remains")

        // A folder that does not exist: nothing is created.
        let missing = dir.appendingPathComponent("no/such/folder/out.wav").path
        let v2 = try parseGraph("""
            { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, in: dir)
        XCTAssertThrowsError(try OfflineRenderer(v2, outputPath: missing, frames: 10).render(to: missing)) {
            guard case .file = $0 as? RenderError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(fileNames(dir), [])
    }

    func testRenderLengthRules() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("short.wav").path, [[Float](repeating: 0.5, count: 4410)], sampleRate: 44100)
        func graph(_ extra: String, player: String) -> String {
            """
            { "version": 1, "sampleRate": 48000\(extra),
              "nodes": [ { "id": "osc", "type": "oscillator" }, \(player)
                         { "id": "mix", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """
        }
        let player = #"{ "id": "p", "type": "player", "properties": { "file": "short.wav", "startTime": 0.25, "segment": { "start": 0.02 } } },"#
        let looping = #"{ "id": "p", "type": "player", "properties": { "file": "short.wav", "loop": true } },"#
        let out = dir.appendingPathComponent("len.wav").path
        // The graph's duration wins over players.
        XCTAssertEqual(try OfflineRenderer(try parseGraph(graph(#", "duration": 0.5"#, player: player), in: dir), outputPath: out).frameCount, 24000)
        // Else the longest non-looping player: 0.25 s + (0.1 - 0.02) s = 0.33 s.
        XCTAssertEqual(try OfflineRenderer(try parseGraph(graph("", player: player), in: dir), outputPath: out).frameCount, 15840)
        // Else 10 s (a looping player has no end).
        XCTAssertEqual(try OfflineRenderer(try parseGraph(graph("", player: looping), in: dir), outputPath: out).frameCount, 480000)
        XCTAssertEqual(try OfflineRenderer(try parseGraph(graph("", player: ""), in: dir), outputPath: out).frameCount, 480000)
        // --duration and --frames override everything.
        let v = try parseGraph(graph(#", "duration": 0.5"#, player: player), in: dir)
        XCTAssertEqual(try OfflineRenderer(v, outputPath: out, duration: 0.01).frameCount, 480)
        XCTAssertEqual(try OfflineRenderer(v, outputPath: out, frames: 7).frameCount, 7)
    }

    func testAGraphWithAPulseAudioOutputRendersOffline() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 32000, "duration": 0.05,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 500, "amplitude": 0.5 } },
                         { "id": "speakers", "type": "output" } ],
              "connections": [ { "from": "osc", "to": "speakers" } ] }
            """, in: dir)
        let read = try renderToFile(v, dir.appendingPathComponent("live.wav").path)
        XCTAssertEqual(read.sampleRate, 32000)
        XCTAssertEqual(read.channels[0].count, 1600)
        let e = SignalMeasurement.worstError(read.channels[0]) { n in 0.5 * sin(2 * Double.pi * 500 * Double(n) / 32000) }
        XCTAssertLessThan(e.error, 1e-6)
    }

    func testTemporaryPathIsBesideTheOutputWithItsExtension() {
        let t = OfflineRenderer.temporaryPath(for: "/a/b/song.flac")
        XCTAssertTrue(t.hasPrefix("/a/b/.song.partial-"), t)
        XCTAssertTrue(t.hasSuffix(".flac"), t)
        XCTAssertTrue(OfflineRenderer.temporaryPath(for: "x.wav").hasPrefix(".x.partial-"))
    }

    // MARK: Determinism

    /// A graph with every kind of per-sample behaviour: oscillators, noise, a player, a mixer,
    /// automation, ramps and structural updates at frames that are not slice boundaries.
    private func determinismGraph(playerRate: Int, volumeChange: String) -> String {
        """
        { "version": 1, "sampleRate": 48000, "duration": 0.5,
          "nodes": [
            { "id": "sine", "type": "oscillator", "parameters": { "frequency": 441.3, "amplitude": 0.3 },
              "automation": { "frequency": [ { "setValueAtTime": { "value": 220, "time": 0.05 } },
                                             { "exponentialRampToValueAtTime": { "value": 880, "time": 0.3 } } ] } },
            { "id": "sq", "type": "oscillator", "parameters": { "frequency": 1500, "amplitude": 0.2 },
              "properties": { "waveform": "square", "startTime": 0.0101 } },
            { "id": "noise", "type": "oscillator", "parameters": { "amplitude": 0.1 }, "properties": { "waveform": "noise", "seed": 42 } },
            { "id": "p", "type": "player", "properties": { "file": "loop\(playerRate).wav", "loop": true, "startTime": 0.003 } },
            { "id": "mix", "type": "mixer", "inputBusCount": 5,
              "parameters": { "input.0.pan": -0.5, "input.1.pan": 0.7, "input.3.volume": 0.8 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "sine", "to": "mix:0" }, { "from": "sq", "to": "mix:1" },
                           { "from": "noise", "to": "mix:2" }, { "from": "p", "to": "mix:3" }, { "from": "mix", "to": "out" } ],
          "updates": [
            { "frame": 4567, "actions": [ { "setParameter": { "node": "mix", "address": "input.2.volume", "value": 2, "rampDuration": 0.0333 } } ] },
            { "frame": 9001, "actions": [ { "disconnect": { "to": "mix:1" } }, { "connect": { "from": "sq", "to": "mix:4" } },
                                          { "setParameter": { "node": "mix", "address": "input.4.pan", "value": -0.9 } } ] },
            { "time": 0.2501, "actions": [
                { "addNode": { "id": "tri", "type": "oscillator", "parameters": { "frequency": 330 }, "properties": { "waveform": "triangle" } } },
                { "connect": { "from": "tri", "to": "mix:1" } },
                { "setParameter": { "node": "sine", "address": "amplitude", "value": 0.1, "rampDuration": 0.01 } } ] },
            { "frame": 20000, "actions": [ { "removeNode": "noise" }, { "setParameter": { \(volumeChange), "value": 0.5, "rampDuration": 0.002 } } ] } ] }
        """
    }

    private func assertBitIdenticalAcrossSlices(playerRate: Int, changeUpstreamOfTheResampler: Bool = true) throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let rate = Double(playerRate)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("loop\(playerRate).wav").path,
                     [(0..<777).map { Float(0.4 * sin(Double($0) * 0.05)) }, (0..<777).map { Float(0.3 * cos(Double($0) * 0.021)) }],
                     sampleRate: rate)
        let volumeChange = changeUpstreamOfTheResampler ? #""node": "p", "address": "volume""# : #""node": "mix", "address": "input.3.volume""#
        let v = try parseGraph(determinismGraph(playerRate: playerRate, volumeChange: volumeChange), in: dir)
        var files: [Int: Data] = [:]
        for slice in [4096, 512, 64, 1] {
            let path = dir.appendingPathComponent("out-\(slice).wav").path
            let r = try OfflineRenderer(v, outputPath: path, sliceSize: slice)
            try r.render(to: path)
            files[slice] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let reference = try XCTUnwrap(files[4096])
        XCTAssertGreaterThan(reference.count, 24000 * 2 * 4, "0.5 s of stereo float32")
        let samples = try AudioFileReader.read(path: dir.appendingPathComponent("out-4096.wav").path)
        XCTAssertGreaterThan(samples.channels[0].map(abs).max()!, 0.1, "not silent")
        for slice in [512, 64, 1] {
            let data = try XCTUnwrap(files[slice])
            if data != reference {
                let other = try AudioFileReader.read(path: dir.appendingPathComponent("out-\(slice).wav").path)
                var where_: [String] = []
                for c in 0..<2 {
                    if let first = zip(other.channels[c], samples.channels[c]).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
                        where_.append("channel \(c) from frame \(first.offset): \(first.element.0) vs \(first.element.1)")
                    }
                }
                XCTFail("slice \(slice) differs from slice 4096: " + where_.joined(separator: "; "))
            }
        }
    }

    func testBitIdenticalForEverySliceSize() throws {
        try assertBitIdenticalAcrossSlices(playerRate: 48000)
    }

    /// A 44.1 kHz player into the 48 kHz mixer, with every update downstream of the rate converter.
    func testBitIdenticalForEverySliceSizeWithAResampledPlayer() throws {
        try assertBitIdenticalAcrossSlices(playerRate: 44100, changeUpstreamOfTheResampler: false)
    }

    /// The same with a volume ramp on the resampled player itself (upstream of the converter): the
    /// converter's look-ahead must not depend on the slice size (it pulls fixed blocks), or the
    /// source frame at which a change list reaches the player would differ between slice sizes.
    func testBitIdenticalWithAChangeUpstreamOfAResampledInput() throws {
        try assertBitIdenticalAcrossSlices(playerRate: 44100, changeUpstreamOfTheResampler: true)
    }
}

extension OfflineRendererTests {
    /// An analyser node (made by GraphAssembly.makeNode from a graph file) passes its input through unchanged.
    func testAnalyserInAGraphFileRendersItsInputUnchanged() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let with = try renderToFile(try parseGraph(Self.analyserGraph, in: dir), dir.appendingPathComponent("with.wav").path)
        let without = Self.analyserGraph
            .replacingOccurrences(of: #"{ "id": "an", "type": "analyser", "properties": { "fftSize": 512, "smoothingTimeConstant": 0.5, "minDecibels": -90, "maxDecibels": -10 } },"#, with: "")
            .replacingOccurrences(of: #"{ "from": "osc", "to": "an" }, { "from": "an", "to": "out" }"#, with: #"{ "from": "osc", "to": "out" }"#)
        let plain = try renderToFile(try parseGraph(without, in: dir), dir.appendingPathComponent("without.wav").path)
        XCTAssertEqual(with.channels.count, 2)
        XCTAssertEqual(with.channels[0].count, 24000)
        XCTAssertEqual(with.channels, plain.channels)
        XCTAssertGreaterThan(with.channels[0].map(abs).max()!, 0.69)
    }

    static let analyserGraph = """
    { "version": 1, "sampleRate": 48000, "duration": 0.5, "nodes": [
      { "id": "osc", "type": "oscillator", "parameters": { "frequency": 997, "amplitude": 0.7 }, "properties": { "channels": 2 } },
      { "id": "an", "type": "analyser", "properties": { "fftSize": 512, "smoothingTimeConstant": 0.5, "minDecibels": -90, "maxDecibels": -10 } },
      { "id": "out", "type": "genericOutput" } ],
      "connections": [ { "from": "osc", "to": "an" }, { "from": "an", "to": "out" } ] }
    """
}
