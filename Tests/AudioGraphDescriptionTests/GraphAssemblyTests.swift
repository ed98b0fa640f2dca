// Tests of GraphAssembly.makeNode: graph-file node types become the engine's node classes.
import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class GraphAssemblyTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    let analyserGraph = """
    { "version": 1, "sampleRate": 48000, "duration": 0.5, "nodes": [
      { "id": "osc", "type": "oscillator", "parameters": { "frequency": 997, "amplitude": 0.7 }, "properties": { "channels": 2 } },
      { "id": "an", "type": "analyser", "properties": { "fftSize": 512, "smoothingTimeConstant": 0.5, "minDecibels": -90, "maxDecibels": -10 } },
      { "id": "out", "type": "genericOutput" } ],
      "connections": [ { "from": "osc", "to": "an" }, { "from": "an", "to": "out" } ] }
    """

    func testAnalyserFromAGraphFile() throws {
        let v = try loadGraph(analyserGraph)
        let node = try GraphAssembly.makeNode(v.description.nodes[1], sampleRate: 48000)
        let analyser = try XCTUnwrap(node as? AnalyserNode)
        XCTAssertEqual(analyser.properties,
                       AnalyserProperties(fftSize: 512, smoothingTimeConstant: 0.5, minDecibels: -90, maxDecibels: -10))
        XCTAssertEqual(analyser.typeName, "analyser")
    }
}
