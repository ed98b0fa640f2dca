// A graph file's environment with variableRate: input.N.rate from the file against the formula.
@testable import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

extension OfflineRendererTests {
    /// `"variableRate": true` and `"input.0.rate": 2` on a 1000 Hz oscillator one metre ahead:
    /// both channels `cos(π/4)·0.5·sin(2π·2000·n/48000)`; without `variableRate` the parameter
    /// is not applied (1000 Hz).
    func testEnvironmentRateFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        func graph(_ variable: Bool) -> String {
            """
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 333,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
                         { "id": "env", "type": "environment", "properties": { "variableRate": \(variable) },
                           "parameters": { "input.0.z": -1, "input.0.rate": 2 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "env" }, { "from": "env", "to": "out" } ] }
            """
        }
        for variable in [true, false] {
            let v = try parseGraph(graph(variable), in: dir)
            let y = try renderToFile(v, dir.appendingPathComponent("rate-\(variable).wav").path, frames: 12000, slice: 333).channels
            let f = variable ? 2000.0 : 1000.0
            for c in 0..<2 {
                let e = SignalMeasurement.worstError(y[c], 300..<12000) { n in cos(Double.pi / 4) * 0.5 * sin(2 * Double.pi * f * Double(n) / 48000) }
                XCTAssertLessThan(e.error, 1e-4, "variableRate \(variable), channel \(c) at \(e.at)")
            }
        }
    }

    /// A source feeding both an environment input at rate 2 and a mixer (fan-out): the mixer's
    /// input must get exactly the unmodified oscillator (the mixer's equal-power centre pan,
    /// cos(π/4); the environment's input is muted), with and without `variableRate` (the
    /// environment keeps such an input at rate 1, as for a live source).
    func testEnvironmentRateWithAFannedOutSource() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for variable in [false, true] {
        let text = """
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 333,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
                         { "id": "env", "type": "environment", "properties": { "variableRate": \(variable) },
                           "parameters": { "input.0.z": -1, "input.0.rate": 2, "input.0.gain": 0 } },
                         { "id": "mix", "type": "mixer", "inputBusCount": 2 },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "env" }, { "from": "env", "to": "mix:0" },
                               { "from": "osc", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
            """
        let v = try parseGraph(text, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("fan-\(variable).wav").path, frames: 12000, slice: 333).channels
        let e = SignalMeasurement.worstError(y[0], 0..<12000) { n in cos(Double.pi / 4) * 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000) }
        print("fan-out, variableRate \(variable): worst error \(e.error) at \(e.at); first samples \(Array(y[0].prefix(4)))")
        XCTAssertLessThan(e.error, 1e-4, "variableRate \(variable): the mixer's copy of the fanned-out oscillator at \(e.at)")
        }
    }
}
