// Tests of decoding node objects: an eq preset in a graph file becomes its bands' parameters.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class DescriptionReaderNodesTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testEveryPresetLoadsAtCommonAndLowRates() throws {
        for rate in [8000.0, 16000, 22050, 44100, 48000, 96000] {
            for preset in EQPreset.allCases {
                let text = """
                { "version": 1, "sampleRate": \(Int(rate)), "nodes": [ { "id": "osc", "type": "oscillator" },
                  { "id": "eq", "type": "eq", "properties": { "preset": "\(preset.rawValue)" } }, { "id": "out", "type": "genericOutput" } ],
                  "connections": [ { "from": "osc", "to": "eq" }, { "from": "eq", "to": "out" } ] }
                """
                let graph = try loadGraph(text)
                let node = try XCTUnwrap(graph.description.node("eq"))
                // The loaded eq's band.N.frequency defaults are the preset's design frequencies, those
                // above 0.45 × the file's rate lowered to it (one band.N.frequency per band).
                let frequencies = node.parameterInfos(sampleRate: rate)
                    .filter { $0.address.group == "band" && $0.address.name == "frequency" }
                    .sorted { $0.address.element < $1.address.element }.map(\.defaultValue)
                XCTAssertEqual(frequencies, preset.bands.map { min($0.frequency, 0.45 * rate) }, "\(preset) at \(rate)")
                // Every band's fields are in the range of its band.N parameters.
                for info in node.parameterInfos(sampleRate: rate) {
                    XCTAssertTrue(info.contains(info.defaultValue), "\(preset) at \(rate): \(info.address) = \(info.defaultValue)")
                }
            }
        }
    }
}
