// The format converter: sample rate (libsoxr or libsamplerate), channel count or map, and sample type.

/// A format converter (cf. AUConverter): its output format is the `format` property's fields
/// over its input's format.
///
/// - Sample rate: converted with the `quality` property's converter (`best` = libsoxr very high
///   quality; `sincBest` = libsamplerate's SRC_SINC_BEST_QUALITY, `medium`, `fastest`, `linear`,
///   `zeroOrderHold` = libsamplerate's), pulling the input on its own timeline (see
///   ``ResamplingInputAdapter`` and ``Resampler``).
/// - Channels: `channelMap[i]` is the input channel output channel i takes (-1: silence);
///   without a map the channel count changes by the up/down-mix rules (Web Audio "speakers"
///   for 1, 2, 4, 6 channels, "discrete" otherwise; see ``ChannelMixing``).
/// - Sample type and interleaving: inside the graph samples stay non-interleaved float; an
///   integer `sampleType` quantizes them to that type's grid (exactly what the type can carry,
///   see ``SampleConversion/quantize(_:count:to:)``), and the output format carries the type and
///   the interleaving, so a generic output after it delivers them in that form.
///
/// `quality` may change while the graph runs (the new converter starts from the current input
/// frame; the switch is not seamless).
///
/// Thread safety: configure on a control thread.
public final class ConverterNode: GraphNode, @unchecked Sendable {
    /// The configuration (quality is updated by `setProperty("quality", ...)`).
    // MARK: Control thread only
    public private(set) var properties: ConverterProperties
    /// The adapters made for rate-converting inputs (to re-create their resamplers).
    private var adapters: [WeakAdapter] = []
    private struct WeakAdapter { weak var adapter: ResamplingInputAdapter? }

    public init(id: String, properties: ConverterProperties = ConverterProperties()) {
        self.properties = properties
        let f = properties.format
        super.init(id: id, typeName: "converter", inputBusCount: 1, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: f.sampleRate,
                                                       channelCount: properties.channelMap?.count ?? f.channels,
                                                       sampleType: f.sampleType, isInterleaved: f.interleaved))
    }

    /// The `converter` node type: one input at any rate and channel count, `properties`
    /// ``ConverterProperties`` (`quality` may change while the graph runs).
    public static let descriptor = NodeTypeDescriptor(
        name: "converter", kind: .converter, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["format", "quality", "channelMap"], runtimePropertyKeys: ["quality"], convertsInputs: true,
        decode: { reader in
            var result = ConverterProperties()
            if let format = reader.format("format") { result.format = format }
            if let quality = reader.choice("quality", as: ConverterQuality.self) { result.quality = quality }
            if let map = reader.channelMap("channelMap", channels: -1...(FormatDescription.maximumChannelCount - 1)) { result.channelMap = map }
            return result
        },
        typedProperty: { name, options in name == "quality" ? (options as? ConverterProperties)?.quality : nil },
        checkFormat: { options, context in
            guard let properties = options as? ConverterProperties else { return }
            let declared = context.declaredFormat
            for (field, propertyValue, nodeValue) in [
                ("sampleRate", properties.format.sampleRate.map { ParameterInfo.format($0) }, declared.sampleRate.map { ParameterInfo.format($0) }),
                ("channels", properties.format.channels.map(String.init), declared.channels.map(String.init)),
                ("sampleType", properties.format.sampleType?.rawValue, declared.sampleType?.rawValue),
                ("interleaved", properties.format.interleaved.map { String($0) }, declared.interleaved.map { String($0) }),
            ] {
                if let propertyValue, let nodeValue, propertyValue != nodeValue {
                    context.reportFormatConflict(formatField: field, "\(nodeValue) contradicts properties.format.\(field) \(propertyValue)")
                }
            }
            if let map = properties.channelMap, let wanted = properties.format.channels ?? declared.channels, wanted != map.count {
                context.reportFormatConflict(property: "channelMap",
                                             "the channel map has \(map.count) entries but the output format has \(wanted) channels")
            }
        },
        makeNode: { context in
            ConverterNode(id: context.id, properties: context.options(as: ConverterProperties.self) ?? ConverterProperties())
        })

    public override var convertsInputSampleRates: Bool { true }

    public override func processingSampleRate(inputFormats: [StreamFormat?], graphSampleRate: Double) -> Double {
        declaredFormat.sampleRate ?? inputFormats.first??.sampleRate ?? graphSampleRate
    }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        let input = inputFormats.first ?? nil
        let base = StreamFormat(sampleRate: rate, channelCount: input?.channelCount ?? 2,
                                sampleType: input?.sampleType ?? .float32, isInterleaved: input?.isInterleaved ?? false)
        let out = declaredFormat.filled(from: base)
        if let map = properties.channelMap, let input {
            for (i, c) in map.enumerated() where c < -1 || c >= input.channelCount {
                throw .formatNotSupported(node: id, reason: "channelMap[\(i)] = \(c), but the input has \(input.channelCount) channel(s)")
            }
        }
        guard out.isValid else { throw .formatNotSupported(node: id, reason: "invalid output format \(out)") }
        return [out]
    }

    public override func checkInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double) throws(AudioGraphError) -> Bool {
        try ResamplingInputAdapter.check(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate)
        return true
    }

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        let a = try ResamplingInputAdapter(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                           maximumFramesPerSlice: maximumFramesPerSlice, quality: properties.quality)
        adapters.removeAll { $0.adapter == nil }
        adapters.append(WeakAdapter(adapter: a))
        return a
    }

    /// Test hook: the quality of the resampler the input adapter uses now (nil: no adapter).
    /// Read it only while nothing renders.
    var testOnly_inputQuality: ConverterQuality? { adapters.last?.adapter?.resampler?.quality }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ConverterKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    private static func quality(_ value: any Sendable) -> ConverterQuality? {
        if let q = value as? ConverterQuality { return q }
        if let s = value as? String { return ConverterQuality(rawValue: s) }
        return nil
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == "quality" else {
            throw .invalidProperty(node: id, name: name, reason: "cannot be changed once the node is set up (only quality can)")
        }
        guard Self.quality(value) != nil else {
            throw .invalidProperty(node: id, name: name,
                                   reason: "expected one of " + ConverterQuality.allCases.map(\.rawValue).joined(separator: ", "))
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        guard name == "quality", let q = Self.quality(value) else { return nil }
        properties.quality = q
        // One input bus: the most recent live adapter is the one in use.
        adapters.removeAll { $0.adapter == nil }
        guard let a = adapters.last?.adapter, let r = try? a.makeResampler(quality: q) else { return nil }
        return ConverterKernel.QualityChange(adapter: a, resampler: r)
    }
}

/// Render side of ``ConverterNode``.
final class ConverterKernel: NodeKernel, @unchecked Sendable {
    /// A new resampler for the node's input adapter (made on the control thread). After delivery
    /// it holds the replaced one, released with the render plan off the render thread. No
    /// generic containers: nothing to instantiate on the render thread.
    final class QualityChange: KernelMessage, @unchecked Sendable {
        let adapter: ResamplingInputAdapter
        var resampler: Resampler?
        init(adapter: ResamplingInputAdapter, resampler: Resampler) {
            self.adapter = adapter
            self.resampler = resampler
        }
    }

    // MARK: Fixed at creation
    private let outputChannels: Int
    private let sampleType: SampleType
    /// The channel map (output channel -> input channel, -1 silence), or nil for up/down-mixing.
    private let channelMap: UnsafeMutablePointer<Int>?

    // MARK: Render thread only (pointer tables)
    private let inPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(node: ConverterNode, maximumFramesPerSlice: Int) {
        let format = node.outputFormats[0]
        outputChannels = format.channelCount
        sampleType = format.sampleType
        if let map = node.properties.channelMap {
            let p = UnsafeMutablePointer<Int>.allocate(capacity: max(1, map.count))
            p.initialize(from: map, count: map.count)
            channelMap = p
        } else {
            channelMap = nil
        }
        inPointers = .allocate(capacity: 1024)
        outPointers = .allocate(capacity: max(1, format.channelCount))
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: [])
    }

    deinit {
        channelMap?.deallocate()
        inPointers.deallocate()
        outPointers.deallocate()
    }

    override func receive(_ message: KernelMessage) {
        guard let change = message as? QualityChange, let new = change.resampler else { return }
        // The old one goes back with the message.
        change.resampler = change.adapter.replaceResampler(new)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        guard let input = inputs.pull(0), !input.isSilent else {
            outputSilence(frameCount: n)
            return
        }
        let inChannels = min(input.channelCount, 1024)
        if let map = channelMap {
            for c in 0..<outputChannels {
                let source = map[c]
                if source >= 0 && source < inChannels {
                    out.channel(c).update(from: input.buffer.channel(source), count: n)
                } else {
                    out.channel(c).update(repeating: 0, count: n)
                }
            }
        } else if inChannels == outputChannels {
            out.copy(from: input.buffer, frameCount: n)
        } else {
            for c in 0..<inChannels { inPointers[c] = UnsafePointer(input.buffer.channel(c)) }
            for c in 0..<outputChannels { outPointers[c] = out.channel(c) }
            ChannelMixing.mix(input: UnsafeBufferPointer(start: inPointers, count: inChannels),
                              output: UnsafeBufferPointer(start: outPointers, count: outputChannels), frameCount: n)
        }
        for c in 0..<outputChannels { SampleConversion.quantize(out.channel(c), count: n, to: sampleType) }
        outputIsSilent[0] = false
    }
}
