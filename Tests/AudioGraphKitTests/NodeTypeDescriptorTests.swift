// A node type defined only here (one descriptor beside its class) is loaded, checked and rendered from a graph file.
import AudioGraphKit
import Foundation
import XCTest

/// The test's node type: `y = gain · x`, negated when the `invert` property is true. One input,
/// one output of the input's format; `gain` a parameter (0...4, 1) from its table, `invert` a
/// property that may change while the graph runs. Everything the format and the engine need is
/// in ``descriptor``: this file is the whole node type.
final class ScaleNode: GraphNode, @unchecked Sendable {
    /// Its options (the decoded `properties`).
    struct Options: Hashable, Sendable {
        var invert = false
    }

    static let parameterTable = ParameterTable([.init(.global, "gain", .linearGain, 0, 4, 1)])

    static let descriptor = NodeTypeDescriptor(
        name: "testScale", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["invert"], runtimePropertyKeys: ["invert"], parameters: parameterTable,
        decode: { reader in
            var options = Options()
            if let invert = reader.bool("invert") { options.invert = invert }
            return options
        },
        typedProperty: { name, options in name == "invert" ? (options as? Options)?.invert : nil },
        makeNode: { context in
            ScaleNode(id: context.id, sampleRate: context.sampleRate, options: context.options(as: Options.self) ?? Options())
        })

    let sign: Atomic<Int> = Atomic(1)

    init(id: String, sampleRate: Double, options: Options) {
        super.init(id: id, typeName: "testScale", inputBusCount: 1, outputBusCount: 1,
                   parameters: Self.parameterTable.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
        sign.store(options.invert ? -1 : 1, ordering: .relaxed)
    }

    override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == "invert", value is Bool else { throw .invalidProperty(node: id, name: name, reason: "expected invert: true or false") }
    }

    override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        sign.store((value as? Bool) == true ? -1 : 1, ordering: .relaxed)
        return nil
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ScaleKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``ScaleNode``.
final class ScaleKernel: NodeKernel, @unchecked Sendable {
    private unowned let node: ScaleNode

    init(node: ScaleNode, maximumFramesPerSlice: Int) {
        self.node = node
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let gain = parameterValues(0, context)
        let sign = Float(node.sign.load(ordering: .relaxed))
        let out = outputs[0]
        guard let input = inputs.pull(0), !input.isSilent else { return outputSilence(frameCount: n) }
        for c in 0..<out.channelCount {
            let x = input.buffer.channel(min(c, input.channelCount - 1)), y = out.channel(c)
            for i in 0..<n { y[i] = sign * gain[i] * x[i] }
        }
        outputIsSilent[0] = false
    }
}

import Synchronization

final class NodeTypeDescriptorTests: XCTestCase {
    override func setUp() {
        NodeTypeRegistry.register(ScaleNode.descriptor)
    }

    override func tearDown() {
        NodeTypeRegistry.unregister(named: ScaleNode.descriptor.name)
    }

    func graph(scale: String, updates: String = "[]") -> String {
        """
        {
          "version": 1, "sampleRate": 48000, "duration": 0.1,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 }, "properties": { "channels": 1 } },
            { "id": "scale", "type": "testScale"\(scale) },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [ { "from": "osc", "to": "scale" }, { "from": "scale", "to": "out" } ],
          "updates": \(updates)
        }
        """
    }

    func render(_ text: String) throws -> [Float] {
        let validated = try GraphLoader.parse(text: text)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scale-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try OfflineRenderer(validated, outputPath: path, sampleType: .float32).render(to: path)
        return try AudioFileReader.read(path: path).channels[0]
    }

    /// The file's parameter value and the property reach the node: 0.5 sin(2π 1000 n / 48000) · 3 · (-1).
    func testAGraphFileWithTheTypeRendersItsFormula() throws {
        let y = try render(graph(scale: #", "parameters": { "gain": 3 }, "properties": { "invert": true }"#))
        XCTAssertEqual(y.count, 4800)
        for n in 0..<4800 { XCTAssertEqual(Double(y[n]), -1.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000), accuracy: 1e-5, "frame \(n)") }
    }

    /// A `setProperty` update goes through the descriptor's typed conversion to the node: the
    /// sign flips at frame 2400.
    func testASetPropertyUpdateReachesTheNodeTyped() throws {
        let y = try render(graph(scale: "", updates: #"[ { "frame": 2400, "actions": [ { "setProperty": { "node": "scale", "name": "invert", "value": true } } ] } ]"#))
        for n in [100, 1000, 2399] { XCTAssertEqual(Double(y[n]), 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000), accuracy: 1e-5) }
        for n in [2400, 3000, 4799] { XCTAssertEqual(Double(y[n]), -0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000), accuracy: 1e-5) }
    }

    /// The format's checks apply to the new type with the same messages as to stock types: the
    /// table's range, an unknown key, a property of the wrong type.
    func testTheFormatsChecksApplyWithLocations() {
        XCTAssertThrowsError(try GraphLoader.parse(text: graph(scale: #", "parameters": { "gain": 5 }, "properties": { "invert": 1, "colour": 2 }"#))) { error in
            let lines = (error as! GraphDescriptionErrors).lines
            XCTAssertEqual(lines.sorted(), [
                #"graph.json: nodes[1] (id "scale").parameters.gain: 5 is outside 0...4"#,
                #"graph.json: nodes[1] (id "scale").properties.colour: unknown key "colour" (allowed: invert)"#,
                #"graph.json: nodes[1] (id "scale").properties.invert: expected true or false, found a number"#,
            ].sorted(), "\(lines)")
        }
    }

    /// An unregistered name is still refused, naming the registered type among the choices.
    func testEachModulesListNamesItsTypesAsTheirDescriptorsDo() {
        // The lists register names with makers (descriptors are made on first use): a name that
        // differs from its descriptor's would stop the process at the first lookup.
        let lists = [("StockNodeTypes", StockNodeTypes.types), ("PulseNodeTypes", PulseNodeTypes.types), ("PluginNodeTypes", PluginNodeTypes.types)]
        var all: [String] = []
        for (list, types) in lists {
            for type in types {
                XCTAssertEqual(type.make().name, type.name, list)
                all.append(type.name)
            }
        }
        XCTAssertEqual(Set(all).count, all.count, "no name is listed twice")
        GraphLoader.registerNodeTypes()
        for name in all {
            XCTAssertEqual(NodeTypeRegistry.descriptor(named: name)?.name, name)
        }
    }

    func testAnUnknownTypeListsTheRegisteredOnes() {
        XCTAssertThrowsError(try GraphLoader.parse(text: graph(scale: "").replacingOccurrences(of: "testScale", with: "testScales"))) { error in
            let line = (error as! GraphDescriptionErrors).lines.joined(separator: "\n")
            XCTAssertEqual(line, #"graph.json: nodes[1] (id "scale").type: "testScales" is not one of oscillator, player, input, mixer, environment, eq, delay, recorder, converter, output, genericOutput, analyser, reverb, timePitch, varispeed, lv2, bufferSource, channelMerger, channelSplitter, compressor, constantSource, convolver, distortion, dynamicsProcessor, gain, iirFilter, limiter, matrixMixer, sampler, stereoPanner, testScale, waveShaper (did you mean "testScale"?)"#)
        }
    }

    /// The third front door: `AudioEngine(contentsOf:)` makes an engine of the same file, the
    /// registered node inside it, and renders the same formula in manual rendering.
    func testTheEngineAPILoadsAndRendersTheTypeFromAGraphFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scale-engine-\(getpid()).json")
        try graph(scale: #", "parameters": { "gain": 2 }, "properties": { "invert": true }"#)
            .replacingOccurrences(of: #""channels": 1"#, with: #""channels": 2"#)
            .write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        let engine = try AudioEngine(contentsOf: url)
        XCTAssertNotNil(engine.node(named: "scale"))
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 1024)
        try engine.start()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1024))
        XCTAssertEqual(try engine.renderOffline(1024, to: buffer), .success)
        for c in 0..<2 {
            for n in 0..<1024 {
                XCTAssertEqual(Double(buffer.floatChannelData![c][n]), -1.0 * sin(2 * Double.pi * 1000 * Double(n) / 48000),
                               accuracy: 1e-5, "channel \(c) frame \(n)")
            }
        }
        engine.stop()
    }
}
