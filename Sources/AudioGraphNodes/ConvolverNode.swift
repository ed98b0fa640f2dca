// The convolution effect (cf. Web Audio's ConvolverNode): an impulse response from a file, zero added latency.
import AudioGraphCore

#if canImport(Glibc)
import Glibc
#endif

/// The `properties` of a `convolver` node.
public struct ConvolverProperties: Hashable, Sendable {
    /// The impulse response's sound file (resolved path): 1, 2 or 4 channels, any rate.
    public var file: String
    /// Web Audio's `normalize` (default true): scale the response by its equal-power normalization.
    public var normalize: Bool
    /// The file's name as the graph file wrote it (for messages; `file` when made in code).
    public var fileName: String

    public init(file: String, normalize: Bool = true, fileName: String? = nil) {
        self.file = file
        self.normalize = normalize
        self.fileName = fileName ?? file
    }
}

/// A convolution reverb (cf. Web Audio's `ConvolverNode`; graph type `convolver`): the input
/// convolved with an impulse response read from a sound file, with no added latency
/// (``PartitionedConvolver``: a 64-tap direct head and FFT levels).
///
/// **The response.** Read when the node is made (1, 2 or 4 channels, up to
/// ``maximumResponseSeconds``); at another rate than the node's it is converted with the
/// project's libsoxr converter (very high quality) when the kernel is made. With `normalize`
/// (the default) it is scaled as Web Audio's `calculateNormalizationScale` says:
/// `0.00125 / max(sqrt(Σ h² / (channels · length)), 0.000125) · 44100 / rate`, halved for 4
/// channels.
///
/// **Channels**, as Web Audio's diagrams: an input wider than stereo is first down-mixed to
/// stereo by the speaker rules (quad: `L = (L + SL)/2`; 5.1: `L = L + √½(C + SL)`; others: the
/// first two channels). Mono in, mono response: mono out. Otherwise stereo out: mono in with a
/// stereo response `L = x∗h0, R = x∗h1`; stereo in with mono `L = xL∗h0, R = xR∗h0`; stereo with
/// stereo `L = xL∗h0, R = xR∗h1`; a 4-channel ("true stereo") response `L = xL∗h0 + xR∗h2,
/// R = xL∗h1 + xR∗h3` (a mono input as both).
///
/// No parameters. The output does not depend on slice sizes; the tail lasts the response's
/// length after the input stops. In an offline render on more than one thread the second
/// output channel is computed on a helper thread (`ConvolverKernel`), with the same bits.
///
/// Thread safety: configure on a control thread (the initializer reads the file); the kernel
/// renders on the render thread.
public final class ConvolverNode: GraphNode, @unchecked Sendable {
    /// The longest response accepted, in seconds at the file's rate.
    public static let maximumResponseSeconds = 60.0

    // MARK: Control thread only
    /// The properties it was made with.
    public let properties: ConvolverProperties
    /// The response's channels as read (at ``responseSampleRate``).
    public let response: [[Float]]
    /// The file's rate.
    public let responseSampleRate: Double

    /// Reads the response; throws `invalidProperty` ("file") for a missing, unreadable or
    /// unsuitable file.
    public init(id: String, sampleRate: Double, properties: ConvolverProperties) throws(AudioGraphError) {
        let info: AudioFileInfo
        do throws(AudioFileError) {
            info = try AudioFileReader.info(path: properties.file)
        } catch {
            throw .invalidProperty(node: id, name: "file", reason: "\(error)")
        }
        guard [1, 2, 4].contains(info.channels) else {
            throw .invalidProperty(node: id, name: "file",
                reason: "\(properties.file): an impulse response has 1, 2 or 4 channels; this one has \(info.channels)")
        }
        guard info.frames > 0, Double(info.frames) <= Self.maximumResponseSeconds * info.sampleRate else {
            throw .invalidProperty(node: id, name: "file",
                reason: "\(properties.file): an impulse response has 1 frame to \(Int(Self.maximumResponseSeconds)) s; this one has \(info.frames) frames at \(Int(info.sampleRate)) Hz")
        }
        let data: (info: AudioFileInfo, channels: [[Float]])
        do throws(AudioFileError) {
            data = try AudioFileReader.read(path: properties.file)
        } catch {
            throw .invalidProperty(node: id, name: "file", reason: "\(error)")
        }
        self.properties = properties
        response = data.channels
        responseSampleRate = data.info.sampleRate
        super.init(id: id, typeName: "convolver", inputBusCount: 1, outputBusCount: 1, parameters: [])
        requiredLibraries = [.fftw]
    }

    /// The `convolver` node type: one input, one output, `properties.file` (required) and
    /// `normalize`.
    package static let descriptor = NodeTypeDescriptor(
        name: "convolver", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, propertyKeys: ["file", "normalize"],
        decode: { reader in
            var result = ConvolverProperties(file: "")
            if let file = reader.requiredFile("file") {
                result.file = file.path
                result.fileName = file.name
            }
            if let n = reader.bool("normalize") { result.normalize = n }
            return result
        },
        checkFiles: { options, context in
            // With the other file checks: readable, 1, 2 or 4 channels, at most 60 s.
            guard let p = options as? ConvolverProperties, !p.file.isEmpty,
                  let info = context.audioFileInfo(path: p.file, file: p.fileName, key: "file") else { return }
            if ![1, 2, 4].contains(info.channels) {
                context.reportInvalid(["file"], "\"\(p.fileName)\" has \(info.channels) channels; an impulse response has 1, 2 or 4")
            } else if info.frames < 1 || Double(info.frames) > maximumResponseSeconds * info.sampleRate {
                context.reportInvalid(["file"], "\"\(p.fileName)\" is \(info.frames) frames at \(Int(info.sampleRate)) Hz; an impulse response has 1 frame to \(Int(maximumResponseSeconds)) s")
            }
        },
        makeNode: { context throws(AudioGraphError) in
            guard let p = context.options(as: ConvolverProperties.self), !p.file.isEmpty else {
                throw .invalidProperty(node: context.id, name: "file", reason: "an impulse response file is needed")
            }
            return try ConvolverNode(id: context.id, sampleRate: context.sampleRate, properties: p)
        })

    /// Output: mono for a mono input and a mono response, stereo otherwise (Web Audio's rule).
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        let inputChannels = inputFormats.compactMap { $0 }.first?.channelCount ?? 2
        let channels = inputChannels == 1 && response.count == 1 ? 1 : 2
        if let declared = declaredFormat.channelCount, declared != channels {
            throw .formatNotSupported(node: id, reason: "a convolver outputs \(channels) channel(s) here (Web Audio's rule), not \(declared)")
        }
        return [StreamFormat.canonical(sampleRate: rate, channelCount: channels)]
    }

    /// The response at `rate`, normalized when asked. Control thread (converts with libsoxr).
    func preparedResponse(rate: Double) throws(AudioGraphError) -> [[Float]] {
        var h = response
        if rate != responseSampleRate {
            let length = response[0].count
            let frames = Int((Double(length) * rate / responseSampleRate).rounded(.up))
            var position = 0
            let source = response
            let resampler: Resampler
            do {
                resampler = try Resampler(channelCount: source.count, inputSampleRate: responseSampleRate, outputSampleRate: rate,
                                          quality: .best) { channels, count in
                    let m = min(count, length - position)
                    for c in 0..<channels.count {
                        source[c].withUnsafeBufferPointer { channels[c].update(from: $0.baseAddress! + position, count: m) }
                    }
                    position += m
                    return m
                }
            } catch {
                throw .invalidProperty(node: id, name: "file", reason: "\(properties.file): cannot convert \(Int(responseSampleRate)) Hz to \(Int(rate)) Hz: \(error)")
            }
            let storage = ChannelBufferStorage(channelCount: source.count, capacity: frames)
            let pointers = (0..<source.count).map { storage.list.channel($0) }
            pointers.withUnsafeBufferPointer { _ = resampler.read(into: $0, frameCount: frames) }
            h = (0..<source.count).map { Array(UnsafeBufferPointer(start: storage.list.channel($0), count: frames)) }
        }
        if properties.normalize {
            let scale = Float(Self.normalizationScale(h, sampleRate: rate))
            h = h.map { $0.map { $0 * scale } }
        }
        return h
    }

    /// Web Audio's `calculateNormalizationScale` for a response at `sampleRate`.
    public static func normalizationScale(_ h: [[Float]], sampleRate: Double) -> Double {
        let length = h.first?.count ?? 0
        var power = 0.0
        for channel in h { for s in channel { power += Double(s) * Double(s) } }
        power = (power / Double(max(1, h.count * length))).squareRoot()
        if !power.isFinite || power < 0.000125 { power = 0.000125 }
        var scale = 0.00125 / power
        scale *= 44100 / sampleRate
        if h.count == 4 { scale *= 0.5 }
        return scale
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let format = outputFormats[0], rate = format.sampleRate
        let stereoIn = inputFormats.first.flatMap { $0 }.map { $0.channelCount >= 2 } ?? true
        let paths = Self.paths(try preparedResponse(rate: rate), stereoIn: stereoIn)
        // Made again (control thread) if the kernel changes its layout for two threads; not kept.
        let again: () -> [PartitionedConvolver.Path]? = { [weak self] in
            guard let self, let h = try? self.preparedResponse(rate: rate) else { return nil }
            return Self.paths(h, stereoIn: stereoIn)
        }
        return ConvolverKernel(node: self, paths: paths, pathsAgain: again, inputCount: stereoIn ? 2 : 1,
                               outputCount: format.channelCount, inputChannels: inputFormats.first.flatMap { $0 }?.channelCount ?? 2,
                               maximumFramesPerSlice: maximumFramesPerSlice)
    }

    /// The convolution paths (input channel → output channel, response) of Web Audio's diagrams
    /// for response channels `h`.
    static func paths(_ h: [[Float]], stereoIn: Bool) -> [PartitionedConvolver.Path] {
        typealias Path = PartitionedConvolver.Path
        switch (stereoIn, h.count) {
        case (false, 1): return [Path(input: 0, output: 0, response: h[0])]
        case (false, 2): return [Path(input: 0, output: 0, response: h[0]), Path(input: 0, output: 1, response: h[1])]
        case (false, _):
            return [Path(input: 0, output: 0, response: zip(h[0], h[2]).map { $0 + $1 }),
                    Path(input: 0, output: 1, response: zip(h[1], h[3]).map { $0 + $1 })]
        case (true, 1): return [Path(input: 0, output: 0, response: h[0]), Path(input: 1, output: 1, response: h[0])]
        case (true, 2): return [Path(input: 0, output: 0, response: h[0]), Path(input: 1, output: 1, response: h[1])]
        default:
            return [Path(input: 0, output: 0, response: h[0]), Path(input: 0, output: 1, response: h[1]),
                    Path(input: 1, output: 0, response: h[2]), Path(input: 1, output: 1, response: h[3])]
        }
    }

    /// The response's spectra and the convolver's buffers (about 3 × the response's samples at
    /// the node's rate × 4 bytes per path, plus input history).
    public override func stateMemoryEstimate(outputFormat: StreamFormat) -> (bytes: Int64, reason: String)? {
        let frames = Double(response.first?.count ?? 0) * outputFormat.sampleRate / max(1, responseSampleRate)
        let bytes = Int64(frames * 4 * 3 * Double(max(2, response.count))) + (1 << 20)
        return (bytes, "an impulse response of \(Int(frames)) frames")
    }
}

/// Render side of ``ConvolverNode``.
///
/// **Engines.** When the two outputs read different inputs (stereo in, a mono or stereo
/// response) there is one ``PartitionedConvolver`` per output. When they share an input (mono in
/// with a stereo response, or a true-stereo response) one engine serves both, transforming each
/// input once, unless the graph renders on more than one thread (offline) before the first slice:
/// then one engine per output, each transforming the inputs it reads. Either way each output
/// sums the same terms in the same order, so the output is bit-identical whatever the layout.
///
/// **Threads.** With one engine per output and ``AudioGraph/renderThreadCount`` above 1 (offline
/// only), the second output's engine runs on a ``RenderHelperThread`` while the render thread
/// computes the first: the same engines, so the same bits as computing them in turn. Live renders
/// (one render thread) compute the engines in turn and wait for nothing.
final class ConvolverKernel: NodeKernel, @unchecked Sendable {
    typealias Path = PartitionedConvolver.Path

    /// An engine and the channel pointers it reads and writes.
    final class Part: @unchecked Sendable {
        let engine: PartitionedConvolver
        fileprivate let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
        fileprivate let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

        /// `paths` (in this order) from the kernel's input channels into its output channels.
        init(paths: [Path], input: ChannelBufferList, output: ChannelBufferList) {
            var ins: [Int] = [], outs: [Int] = []
            for p in paths {
                if !ins.contains(p.input) { ins.append(p.input) }
                if !outs.contains(p.output) { outs.append(p.output) }
            }
            engine = PartitionedConvolver(inputCount: ins.count, outputCount: outs.count, paths: paths.map {
                Path(input: ins.firstIndex(of: $0.input)!, output: outs.firstIndex(of: $0.output)!, response: $0.response)
            })
            inputPointers = .allocate(capacity: max(1, ins.count))
            for (i, c) in ins.enumerated() { (inputPointers + i).initialize(to: UnsafePointer(input.channel(c))) }
            outputPointers = .allocate(capacity: max(1, outs.count))
            for (i, c) in outs.enumerated() { (outputPointers + i).initialize(to: output.channel(c)) }
        }

        deinit {
            inputPointers.deallocate()
            outputPointers.deallocate()
        }

        /// Convolves `frameCount` frames. Real-time safe.
        @inline(__always)
        func process(_ frameCount: Int) {
            engine.process(inputs: inputPointers, outputs: outputPointers, frameCount: frameCount)
        }
    }

    // MARK: Fixed at creation
    private let inputCount: Int
    private let inputChannels: Int
    /// Makes the paths again, while the layout may still change (outputs sharing an input,
    /// nothing rendered yet); nil otherwise.
    private var pathsAgain: (() -> [Path]?)?

    // MARK: Control thread (changed only while no render is in progress)
    private var parts: [Part]
    /// Runs `parts[1]` beside the render thread (offline renders on more than one thread only).
    private var helper: RenderHelperThread?

    // MARK: Render thread only
    /// The down-mixed (or copied) input the engines read.
    private let input: ChannelBufferStorage
    /// Whether a slice was rendered (the layout is then kept).
    private var hasRendered = false

    init(node: ConvolverNode, paths: [Path], pathsAgain: @escaping () -> [Path]?, inputCount: Int, outputCount: Int,
         inputChannels: Int, maximumFramesPerSlice: Int) {
        self.inputCount = inputCount
        self.inputChannels = inputChannels
        input = ChannelBufferStorage(channelCount: inputCount, capacity: maximumFramesPerSlice)
        parts = []
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
        let shared = (0..<outputCount).map { o in Set(paths.filter { $0.output == o }.map(\.input)) }
        if outputCount > 1 && !shared[0].isDisjoint(with: shared[1]) {
            parts = [Part(paths: paths, input: input.list, output: outputs[0])]
            self.pathsAgain = pathsAgain
        } else {
            parts = Self.perOutput(paths, outputCount: outputCount, input: input.list, output: outputs[0])
        }
    }

    private static func perOutput(_ paths: [Path], outputCount: Int, input: ChannelBufferList, output: ChannelBufferList) -> [Part] {
        (0..<outputCount).map { o in Part(paths: paths.filter { $0.output == o }, input: input, output: output) }
    }

    /// Jobs the helper thread ran (tests: proves the parallel path was taken).
    var helperJobsRun: Int { helper?.jobsRun ?? 0 }
    /// Engines (tests).
    var engineCount: Int { parts.count }

    override var usesRenderThreads: Bool { true }

    override func renderThreadCountDidChange(_ count: Int) {
        if count > 1, !hasRendered, let again = pathsAgain, let paths = again() {
            // Nothing rendered yet: one engine per output costs an input transform more per
            // output but lets the outputs run in parallel.
            parts = Self.perOutput(paths, outputCount: outputs[0].channelCount, input: input.list, output: outputs[0])
            pathsAgain = nil
        }
        if count > 1 && parts.count > 1 {
            guard helper == nil else { return }
            let second = parts[1]
            // No thread (the system refuses one): the outputs are computed in turn, the same bits.
            helper = try? RenderHelperThread(name: "ag-convolver") { n in second.process(n) }
        } else {
            helper = nil
        }
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        for p in 0..<parts.count { parts[p].engine.reset() }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        hasRendered = true
        let x = input.list
        if let pulled = inputs.pull(0), !pulled.isSilent {
            let b = pulled.buffer, m = b.channelCount
            if inputCount == 1 || m <= 2 {
                for c in 0..<inputCount { x.channel(c).update(from: b.channel(min(c, m - 1)), count: n) }
            } else if m == 4 {
                for c in 0..<2 {
                    let front = b.channel(c), surround = b.channel(c + 2), y = x.channel(c)
                    for i in 0..<n { y[i] = 0.5 * (front[i] + surround[i]) }
                }
            } else if m == 6 {
                let center = b.channel(2)
                for c in 0..<2 {
                    let front = b.channel(c), surround = b.channel(c + 4), y = x.channel(c)
                    for i in 0..<n { y[i] = front[i] + 0.70710677 * (center[i] + surround[i]) }
                }
            } else {
                for c in 0..<2 { x.channel(c).update(from: b.channel(c), count: n) }
            }
        } else {
            x.clear(frameCount: n)
        }
        if let helper {
            helper.post(n)
            parts[0].process(n)
            helper.collect()
        } else {
            for p in 0..<parts.count { parts[p].process(n) }
        }
        outputIsSilent[0] = ChannelPointers.isAllZero(outputs[0], frameCount: n)
    }
}
