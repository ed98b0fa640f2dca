// AudioUnitDistortion through the engine API in manual rendering (presets, preGain, wetDryMix,
// bypass, the parameter names) and the `distortion` node type in graph files.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitDistortionTests: XCTestCase {
    func engine(with distortion: AudioUnitDistortion, amplitude: Double = 0.8) throws -> AudioEngine {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 330, amplitude: amplitude)
        engine.attach(source)
        engine.attach(distortion)
        engine.connect(source, to: distortion, format: nil)
        engine.connect(distortion, to: engine.mainMixerNode, format: nil)
        return engine
    }

    /// The graph's distortion node with `parameters` on the same sine, rendered directly; with
    /// `from`, the defaults until that frame and `parameters` from it (steps through automation).
    func direct(_ parameters: [String: Double], frames: Int, from: Int = 0, amplitude: Double = 0.8) throws -> [[Float]] {
        let src = formulaSource("x", channels: 2) { _, n in sineSample(n, frequency: 330, rate: 48000, amplitude: amplitude) }
        let node = DistortionNode(id: "dist", sampleRate: 48000)
        for (name, value) in parameters {
            if from == 0 {
                try node.setParameter(name, value)
            } else {
                try node.setAutomation(try AutomationTimeline(events: [.setValue(value: value, time: Double(from) / 48000)],
                                                              defaultValue: node.parameter(name)!.value), for: name)
            }
        }
        let g = try startedGraph([src, node], "x -> dist -> out", slice: 512)
        return renderFrames(g, frames: frames, channels: 2)
    }

    func testDefaultsAreAUDistortionsAndSettersClampAsAnAudioUnit() {
        let d = AudioUnitDistortion()
        XCTAssertEqual(d.name, "distortion")
        XCTAssertEqual(d.preGain, -6)
        XCTAssertEqual(d.wetDryMix, 50)
        XCTAssertEqual(AudioUnitDistortion.parameterNames.map { d.value(forParameter: $0) },
                       [0.1, 1, 50, 50, 0, 50, 1, 0, 0, 50, 100, 100, 50, 0, -6, 50])
        d.preGain = -100
        XCTAssertEqual(d.preGain, -80)
        d.preGain = .nan
        XCTAssertEqual(d.preGain, -80)
        d.wetDryMix = 150
        XCTAssertEqual(d.wetDryMix, 100)
        d.setValue(9000, forParameter: "ringModFreq1")
        XCTAssertEqual(d.value(forParameter: "ringModFreq1"), 8000)
        XCTAssertEqual(AudioUnitDistortionPreset.allCases.count, 22)
        XCTAssertEqual(AudioUnitDistortionPreset.speechWaves.rawValue, 21)
    }

    /// Every preset loaded on a running engine gives exactly the graph node with the preset's
    /// values; preGain and wetDryMix set after it are its softClipGain and finalMix.
    func testEveryPresetThroughTheEngineIsTheNodeWithThePresetsValues() throws {
        for preset in AudioUnitDistortionPreset.allCases {
            let d = AudioUnitDistortion()
            let engine = try engine(with: d)
            try engine.start()
            _ = try render(engine, frames: 1000)   // running with the defaults first
            d.loadFactoryPreset(preset)
            d.preGain = -3
            d.wetDryMix = 70
            let out = try render(engine, frames: 4800)
            var values = Dictionary(uniqueKeysWithValues: zip(AudioUnitDistortion.parameterNames, DistortionPreset.allCases[preset.rawValue].values))
            values["softClipGain"] = -3
            values["finalMix"] = 70
            let expected = try direct(values, frames: 5800, from: 1000)
            for c in 0..<2 {
                let differing = zip(out[c], expected[c][1000...]).filter { $0 != $1 }.count
                XCTAssertEqual(differing, 0, "\(preset) channel \(c): \(differing) of 4800 samples differ")
            }
            engine.stop()
        }
    }

    func testBypassPassesTheInputExactlyAndKeepsTheMix() throws {
        let d = AudioUnitDistortion()
        d.loadFactoryPreset(.multiDistortedCubed)
        let engine = try engine(with: d)
        try engine.start()
        d.bypass = true
        XCTAssertEqual(d.wetDryMix, 100)
        var out = try render(engine, frames: 2400)
        for n in 0..<2400 { XCTAssertEqual(out[0][n], sineSample(Int64(n), frequency: 330, rate: 48000, amplitude: 0.8)) }
        d.bypass = false
        out = try render(engine, frames: 2400)
        let dryError = (0..<2400).map { abs(out[0][$0] - sineSample(Int64(2400 + $0), frequency: 330, rate: 48000, amplitude: 0.8)) }.max()!
        XCTAssertGreaterThan(dryError, 0.05)
    }

    /// A graph file: the preset sets the parameters, the file's own parameter wins, and the
    /// render equals the node with those values; an unknown preset is reported by name.
    func testGraphFileDistortionNode() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(#"""
        { "version": 1, "sampleRate": 48000, "duration": 0.1,
          "nodes": [
            { "id": "tone", "type": "oscillator", "parameters": { "frequency": 330, "amplitude": 0.8 } },
            { "id": "dist", "type": "distortion", "properties": { "preset": "speechRadioTower" },
              "parameters": { "cubicTerm": 12 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "tone", "to": "dist" }, { "from": "dist", "to": "out" } ] }
        """#, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("o.wav").path, sampleType: .float32).channels
        var values = Dictionary(uniqueKeysWithValues: zip(AudioUnitDistortion.parameterNames, DistortionPreset.speechRadioTower.values))
        values["cubicTerm"] = 12
        let osc = OscillatorNode(id: "tone", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 1))
        try osc.setParameter("frequency", 330)
        try osc.setParameter("amplitude", 0.8)
        let node = DistortionNode(id: "dist", sampleRate: 48000)
        for (name, value) in values { try node.setParameter(name, value) }
        let g = try startedGraph([osc, node], "tone -> dist -> out", slice: 512)
        let expected = renderFrames(g, frames: 4800, channels: 1)[0]
        XCTAssertEqual(y[0].count, 4800)
        let w = zip(y[0], expected).enumerated().max { abs($0.element.0 - $0.element.1) < abs($1.element.0 - $1.element.1) }!
        XCTAssertEqual(y[0], expected, "worst at \(w.offset): \(w.element)")

        XCTAssertThrowsError(try GraphLoader.parse(text: #"""
        { "version": 1, "nodes": [
            { "id": "d", "type": "distortion", "properties": { "preset": "fuzzBox" }, "parameters": { "delay": 900 } },
            { "id": "out", "type": "genericOutput" } ], "connections": [] }
        """#, fileName: "graph.json", baseDirectory: "/tmp")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("fuzzBox"), text)
            XCTAssertTrue(text.contains("delay"), text)
        }
    }
}
