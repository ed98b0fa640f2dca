// Small nodes for the core tests: a counting source, a gain effect, a two-input sum and a test output.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore

/// What a test node's kernel observed on the render thread, readable from the test thread.
final class RenderProbe: Sendable {
    /// Render calls so far.
    let renderCount = Atomic<Int>(0)
    /// The sample time of the last slice rendered.
    let lastSampleTime = Atomic<Int64>(-1)
    /// The graph frame the kernel was started at (`start(atSampleTime:)`).
    let startSampleTime = Atomic<Int64>(-1)

    var renders: Int { renderCount.load(ordering: .acquiring) }
    var started: Int64 { startSampleTime.load(ordering: .acquiring) }
}

/// A source: `value` (parameter, a-rate) on every channel, or its own frame count since it
/// started (`localTime`), or silence. Counts its renders.
final class CountingSourceNode: GraphNode, @unchecked Sendable {
    enum Mode { case constant, localTime, silent }
    let mode: Mode
    let probe = RenderProbe()
    let channels: Int

    init(_ id: String, value: Double = 1, mode: Mode = .constant, channels: Int = 1, sampleRate: Double? = nil) {
        self.mode = mode
        self.channels = channels
        super.init(id: id, typeName: "countingSource", inputBusCount: 0, outputBusCount: 1,
                   parameters: [ParameterInfo(address: ParameterAddress(name: "value"), unit: .generic,
                                              minValue: -1000, maxValue: 1000, defaultValue: 1)],
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: channels))
        try! parameters[0].setValue(value)
    }

    override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: declaredFormat.sampleRate ?? graphSampleRate, channelCount: channels)]
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        CountingSourceKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

final class CountingSourceKernel: NodeKernel, @unchecked Sendable {
    let mode: CountingSourceNode.Mode
    let probe: RenderProbe

    init(node: CountingSourceNode, maximumFramesPerSlice: Int) {
        mode = node.mode
        probe = node.probe
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        probe.startSampleTime.store(sampleTime, ordering: .releasing)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        probe.renderCount.wrappingAdd(1, ordering: .acquiringAndReleasing)
        probe.lastSampleTime.store(context.sampleTime, ordering: .releasing)
        let v = parameterValues(0, context)
        let out = outputs[0]
        switch mode {
        case .silent:
            outputSilence(frameCount: context.frameCount)
            return
        case .constant:
            for c in 0..<out.channelCount {
                for i in 0..<context.frameCount { out.channel(c)[i] = v[i] }
            }
        case .localTime:
            for c in 0..<out.channelCount {
                for i in 0..<context.frameCount { out.channel(c)[i] = Float(context.sampleTime + Int64(i) - startSampleTime) }
            }
        }
        outputIsSilent[0] = false
    }
}

/// An effect: output = input * `gain` (0...10, 1); silent (flagged) when its input is.
/// `pulledEverySlice` makes it a sink the graph renders each slice without a consumer.
final class GainNode: GraphNode, @unchecked Sendable {
    let probe = RenderProbe()
    var pulledEverySlice = false
    override var isPulledEverySlice: Bool { pulledEverySlice }

    init(_ id: String, gain: Double = 1, declaredFormat: PartialStreamFormat = PartialStreamFormat()) {
        super.init(id: id, typeName: "gain", inputBusCount: 1, outputBusCount: 1,
                   parameters: [ParameterInfo(address: ParameterAddress(name: "gain"), unit: .linearGain,
                                              minValue: 0, maxValue: 10, defaultValue: 1)],
                   declaredFormat: declaredFormat)
        try! parameters[0].setValue(gain)
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        GainKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

final class GainKernel: NodeKernel, @unchecked Sendable {
    let probe: RenderProbe

    init(node: GainNode, maximumFramesPerSlice: Int) {
        probe = node.probe
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        probe.renderCount.wrappingAdd(1, ordering: .acquiringAndReleasing)
        let g = parameterValues(0, context)
        guard let input = inputs.pull(0), !input.isSilent else {
            outputSilence(frameCount: context.frameCount)
            return
        }
        let out = outputs[0]
        for c in 0..<out.channelCount {
            let x = input.buffer.channel(min(c, input.channelCount - 1))
            for i in 0..<context.frameCount { out.channel(c)[i] = x[i] * g[i] }
        }
        outputIsSilent[0] = false
    }
}

/// Two inputs summed channel by channel (missing or silent inputs count as zero).
final class SumNode: GraphNode, @unchecked Sendable {
    init(_ id: String, declaredFormat: PartialStreamFormat = PartialStreamFormat()) {
        super.init(id: id, typeName: "sum", inputBusCount: 2, outputBusCount: 1, parameters: [],
                   declaredFormat: declaredFormat)
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        SumKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice, parameters: [])
    }
}

final class SumKernel: NodeKernel, @unchecked Sendable {
    override func render(context: RenderContext, inputs: RenderInputs) {
        let out = outputs[0]
        out.clear(frameCount: context.frameCount)
        var silent = true
        for bus in 0..<inputs.count {
            guard let input = inputs.pull(bus), !input.isSilent else { continue }
            silent = false
            for c in 0..<out.channelCount {
                let x = input.buffer.channel(min(c, input.channelCount - 1))
                for i in 0..<context.frameCount { out.channel(c)[i] += x[i] }
            }
        }
        outputIsSilent[0] = silent
    }
}

/// The graph's output for the core tests (one input, no outputs), pulled by `render(frameCount:)`.
final class TestOutputNode: GraphNode, @unchecked Sendable {
    init(_ id: String = "out") {
        super.init(id: id, typeName: "testOutput", inputBusCount: 1, outputBusCount: 0, parameters: [])
    }

    override var isOutputNode: Bool { true }
}

// MARK: Helpers

/// Builds an open graph from nodes and "a -> b:1" connection lines (the topology as text).
func makeGraph(_ nodes: [GraphNode], _ topology: String, sampleRate: Double = 48000,
               maximumFramesPerSlice: Int = 64) throws -> AudioGraph {
    let g = AudioGraph(sampleRate: sampleRate, maximumFramesPerSlice: maximumFramesPerSlice)
    for n in nodes { try g.addNode(n) }
    for c in parseConnections(topology) {
        try g.connect(c.source, outputBus: c.sourceBus, to: c.destination, inputBus: c.destinationBus)
    }
    return g
}

/// Parses connection lines: `a -> b`, `a:1 -> b:2`, several per line separated by `;` or newlines.
/// Chains work too: `a -> g -> out`.
func parseConnections(_ text: String) -> [Connection] {
    func bus(_ s: Substring) -> (String, Int) {
        let parts = s.trimmingCharacters(in: .whitespaces).split(separator: ":")
        return (String(parts[0]), parts.count > 1 ? Int(parts[1])! : 0)
    }
    var result: [Connection] = []
    for line in text.split(whereSeparator: { $0 == "\n" || $0 == ";" }) {
        let hops = line.components(separatedBy: "->").map { Substring($0) }
        guard hops.count >= 2 else { continue }
        for i in 0..<(hops.count - 1) {
            let (s, sb) = bus(hops[i])
            let (d, db) = bus(hops[i + 1])
            result.append(Connection(source: s, sourceBus: sb, destination: d, destinationBus: db))
        }
    }
    return result
}

/// The connections of a graph as sorted text lines (`a:0 -> b:0`).
func topologyText(_ g: AudioGraph) -> String {
    g.connections.map(\.description).sorted().joined(separator: "\n")
}

/// Channel `channel` of one rendered slice as an array (empty when nothing reached the output).
func renderSlice(_ g: AudioGraph, frames: Int, channel: Int = 0) -> [Float] {
    precondition(frames <= g.maximumFramesPerSlice, "a slice longer than the graph renders")
    guard let r = g.render(frameCount: frames) else { return [] }
    return Array(UnsafeBufferPointer(start: r.buffer.channel(channel), count: frames))
}
