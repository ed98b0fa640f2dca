// The offline output: the end of a graph that an application (or the CLI) pulls.

/// The graph's output for offline rendering (cf. the GenericOutput Audio Unit): it has one input
/// bus and no output bus, and is pulled by whoever calls `AudioGraph.render(frameCount:)` — an
/// application, `OfflineRenderer`, or a test.
///
/// Its `format` property is the client format (what the application or file receives); missing
/// fields default to the input's. It accepts its input at any rate: conversion to the client
/// format happens where the audio leaves the graph — `AudioGraph.render(frameCount:)` returns
/// the graph's own rate and channels; pull through a ``GenericOutputRenderer`` to get the client
/// rate and channel count (`OfflineRenderer` does, and writes the client sample type).
///
/// Thread safety: configure on a control thread.
public final class GenericOutputNode: GraphNode, @unchecked Sendable {
    /// The client format's declared fields.
    public let clientFormatRequest: PartialStreamFormat

    public override var requestedClientFormat: PartialStreamFormat? { clientFormatRequest }

    public init(id: String, clientFormat: PartialStreamFormat = PartialStreamFormat()) {
        clientFormatRequest = clientFormat
        super.init(id: id, typeName: "genericOutput", inputBusCount: 1, outputBusCount: 0, parameters: [])
    }

    public override var isOutputNode: Bool { true }
    public override var convertsInputSampleRates: Bool { true }

    public override func processingSampleRate(inputFormats: [StreamFormat?], graphSampleRate: Double) -> Double {
        inputFormats.first??.sampleRate ?? graphSampleRate
    }

    /// No output bus; refuses a client rate the client-side conversion (a ``GenericOutputRenderer``)
    /// could not reach from the input's rate.
    /// A declared output-bus format (a graph file's node-level `format`) is refused: the node
    /// has no output bus, and the format it delivers is its client format (`properties.format`)
    /// — accepting it wrote 48 kHz float where 44.1 kHz int16 was asked.
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        if declaredFormat != PartialStreamFormat() {
            throw .formatNotSupported(node: id, reason: "it has no output bus, so a node-level \"format\" would be ignored; "
                                      + "the format it delivers goes in properties.format")
        }
        if let input = inputFormats.first ?? nil, let rate = clientFormatRequest.sampleRate, rate != input.sampleRate {
            try ResamplingInputAdapter.check(nodeID: id, sourceFormat: input, targetSampleRate: rate)
        }
        return []
    }

    /// The format of what reaches the node (after initialize), or nil when nothing is connected.
    public var inputFormat: StreamFormat? { inputFormats.first ?? nil }

    /// The client format after initialize: the declared fields over the input's format.
    public var clientFormat: StreamFormat? {
        inputFormat.map { clientFormatRequest.filled(from: $0) }
    }
}

extension GenericOutputNode {
    /// The `genericOutput` node type: the graph's output for offline rendering, whose
    /// `properties.format` (``GenericOutputProperties``) is the client format. Played live
    /// (``OutputPlacement/live(device:)``) it hands over to the PulseAudio output type.
    public static let descriptor = NodeTypeDescriptor(
        name: "genericOutput", kind: .output, inputBuses: .fixed(1), outputBusCount: 0,
        propertyKeys: ["format"], convertsInputs: true,
        decode: { reader in
            var result = GenericOutputProperties()
            if let format = reader.format("format") { result.format = format }
            return result
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            if case .live = context.placement { return try context.handOver(to: OutputPlacement.liveOutputType) }
            let p = context.options(as: GenericOutputProperties.self) ?? GenericOutputProperties()
            return GenericOutputNode(id: context.id, clientFormat: p.format.partialStreamFormat)
        })
}
