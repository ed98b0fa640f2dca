// The analyser node (cf. Web Audio's AnalyserNode): audio passes unchanged; apps read its spectrum.
import AudioGraphRealtime
import AudioGraphCore
import Glibc
import Synchronization

/// A pass-through node whose latest frames an application analyses from any thread, as the Web
/// Audio `AnalyserNode` (`fftSize`, `smoothingTimeConstant`, `minDecibels`, `maxDecibels`).
///
/// Its one input passes to its one output bit for bit. The render side only appends the mean of
/// the input's channels (the mono down-mix; silence counts as zeros) to a ring
/// (``AnalyserRing``); the FFT (FFTW), the Blackman window, the smoothing over time and the dB
/// conversion run on the thread that asks, on a lock-free snapshot of the last `fftSize` frames
/// (see ``AnalyserSpectrum`` for the formulas). As in Web Audio, asking for the frequency data
/// again before another frame has been rendered returns the same values without smoothing
/// again. Before the graph renders, the frames are zeros (so the dB values are -infinity).
///
/// Thread safety: the getters (``getFloatFrequencyData(into:)``, ``getFloatTimeDomainData(into:)``,
/// the byte variants, ``rms``, ``peak``) may be called from any thread except the render thread;
/// they take a lock that only readers contend for (never the render thread) and never make the
/// render thread wait. Configure and connect on a control thread as any node.
public final class AnalyserNode: GraphNode, @unchecked Sendable {
    /// Frames analysed (fixed at creation).
    public let fftSize: Int
    /// Values of the frequency data: `fftSize / 2`.
    public var frequencyBinCount: Int { fftSize / 2 }

    /// The current properties (`fftSize` fixed; the others set by ``setSmoothingTimeConstant(_:)``
    /// and ``setDecibelRange(minDecibels:maxDecibels:)``).
    public var properties: AnalyserProperties { reader.withLock { $0.settings } }

    // MARK: Reader threads (under `reader`)
    private struct ReaderState {
        var settings: AnalyserProperties
        var ring: AnalyserRing?
        var spectrum: AnalyserSpectrum?
        var frames: [Float]
        var analysedEnd: UInt64?
    }
    private let reader: ControlLock<ReaderState>

    /// An analyser with `properties` (invalid ones throw ``AudioGraphError/invalidProperty(node:name:reason:)``).
    public init(id: String, properties: AnalyserProperties = AnalyserProperties()) throws(AudioGraphError) {
        if let problem = properties.problem {
            throw .invalidProperty(node: id, name: problem.property, reason: problem.reason)
        }
        fftSize = properties.fftSize
        reader = ControlLock(ReaderState(settings: properties, ring: nil, spectrum: nil,
                                         frames: [Float](repeating: 0, count: properties.fftSize), analysedEnd: nil))
        super.init(id: id, typeName: "analyser", inputBusCount: 1, outputBusCount: 1, parameters: [])
        requiredLibraries = [.fftw]
    }

    /// The `analyser` node type: one input passed through, `properties` ``AnalyserProperties``
    /// (fftSize a power of two, smoothingTimeConstant 0...1, minDecibels below maxDecibels).
    package static let descriptor = NodeTypeDescriptor(
        name: "analyser", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["fftSize", "smoothingTimeConstant", "minDecibels", "maxDecibels"],
        decode: { reader in
            var result = AnalyserProperties()
            if let size = reader.integer("fftSize", in: AnalyserProperties.minimumFFTSize...AnalyserProperties.maximumFFTSize) {
                if size & (size - 1) == 0 { result.fftSize = size } else {
                    reader.reportInvalid("fftSize", "fftSize \(size) is not a power of two")
                }
            }
            if let tau = reader.number("smoothingTimeConstant", in: 0...1) { result.smoothingTimeConstant = tau }
            if let db = reader.number("minDecibels") { result.minDecibels = db }
            if let db = reader.number("maxDecibels") {
                if db > result.minDecibels { result.maxDecibels = db } else {
                    reader.reportInvalid("maxDecibels", "maxDecibels \(ParameterInfo.format(db)) must be above minDecibels \(ParameterInfo.format(result.minDecibels))")
                }
            } else if result.minDecibels >= result.maxDecibels, reader.has("minDecibels") {
                reader.reportInvalid("minDecibels", "minDecibels \(ParameterInfo.format(result.minDecibels)) must be below maxDecibels \(ParameterInfo.format(result.maxDecibels))")
            }
            return result
        },
        makeNode: { context throws(AudioGraphError) -> GraphNode in
            try AnalyserNode(id: context.id, properties: context.options(as: AnalyserProperties.self) ?? AnalyserProperties())
        })

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let ring = AnalyserRing(maximumSnapshot: fftSize, maximumFramesPerSlice: maximumFramesPerSlice)
        reader.withLock { state in
            state.ring = ring
            state.analysedEnd = nil
        }
        return AnalyserKernel(node: self, ring: ring, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    /// Sets the averaging with the previous analysis (0...1; others throw
    /// ``AudioGraphError/invalidProperty(node:name:reason:)``), used from the next analysis on.
    public func setSmoothingTimeConstant(_ tau: Double) throws(AudioGraphError) {
        var p = properties
        p.smoothingTimeConstant = tau
        try apply(p)
    }

    /// Sets the dB range of ``getByteFrequencyData(into:)`` (`minDecibels` below `maxDecibels`,
    /// both finite; others throw ``AudioGraphError/invalidProperty(node:name:reason:)``).
    public func setDecibelRange(minDecibels: Double, maxDecibels: Double) throws(AudioGraphError) {
        var p = properties
        p.minDecibels = minDecibels
        p.maxDecibels = maxDecibels
        try apply(p)
    }

    private func apply(_ p: AnalyserProperties) throws(AudioGraphError) {
        if let problem = p.problem { throw .invalidProperty(node: id, name: problem.property, reason: problem.reason) }
        reader.withLock { $0.settings = p }
    }

    /// The last `fftSize` frames (the channels' mean), oldest first, into `array`'s first
    /// `min(array.count, fftSize)` elements (as Web Audio's `getFloatTimeDomainData`).
    public func getFloatTimeDomainData(into array: inout [Float]) {
        reader.withLock { state in
            _ = Self.takeSnapshot(&state)
            for i in 0..<min(array.count, state.frames.count) { array[i] = state.frames[i] }
        }
    }

    /// The smoothed magnitude spectrum of the last `fftSize` frames in dB (`frequencyBinCount`
    /// values, bin k at k·sampleRate/fftSize Hz) into `array`'s first
    /// `min(array.count, frequencyBinCount)` elements (as Web Audio's `getFloatFrequencyData`).
    public func getFloatFrequencyData(into array: inout [Float]) {
        reader.withLock { state in
            let spectrum = Self.analyse(&state)
            for k in 0..<min(array.count, spectrum.smoothed.count) {
                array[k] = Float(20 * log10(spectrum.smoothed[k]))
            }
        }
    }

    /// The frequency data scaled as Web Audio's `getByteFrequencyData`:
    /// `⌊255 / (maxDecibels - minDecibels) · (Y[k] - minDecibels)⌋` clamped to 0...255.
    public func getByteFrequencyData(into array: inout [UInt8]) {
        reader.withLock { state in
            let p = state.settings
            let spectrum = Self.analyse(&state)
            for k in 0..<min(array.count, spectrum.smoothed.count) {
                let db = 20 * log10(spectrum.smoothed[k])
                let scaled = (255 / (p.maxDecibels - p.minDecibels) * (db - p.minDecibels)).rounded(.down)
                array[k] = scaled.isNaN ? 0 : UInt8(min(255, max(0, scaled)))
            }
        }
    }

    /// The time-domain data scaled as Web Audio's `getByteTimeDomainData`: `⌊128 (1 + x[k])⌋`
    /// clamped to 0...255.
    public func getByteTimeDomainData(into array: inout [UInt8]) {
        reader.withLock { state in
            _ = Self.takeSnapshot(&state)
            for i in 0..<min(array.count, state.frames.count) {
                let scaled = (128 * (1 + Double(state.frames[i]))).rounded(.down)
                array[i] = scaled.isNaN ? 0 : UInt8(min(255, max(0, scaled)))
            }
        }
    }

    /// The root mean square of the last `fftSize` frames (the channels' mean).
    public var rms: Float {
        reader.withLock { state in
            _ = Self.takeSnapshot(&state)
            var sum = 0.0
            for x in state.frames { sum += Double(x) * Double(x) }
            return Float((sum / Double(state.frames.count)).squareRoot())
        }
    }

    /// The largest absolute value of the last `fftSize` frames (the channels' mean).
    public var peak: Float {
        reader.withLock { state in
            _ = Self.takeSnapshot(&state)
            var largest: Float = 0
            for x in state.frames { largest = max(largest, abs(x)) }
            return largest
        }
    }

    /// Refreshes `state.frames` from the ring; returns the frame count they end at (0 before a kernel exists).
    private static func takeSnapshot(_ state: inout ReaderState) -> UInt64 {
        guard let ring = state.ring else { return 0 }
        return state.frames.withUnsafeMutableBufferPointer { ring.snapshot(into: $0.baseAddress!, count: $0.count) }
    }

    /// Analyses the latest frames unless nothing was rendered since the last analysis.
    private static func analyse(_ state: inout ReaderState) -> AnalyserSpectrum {
        let spectrum = state.spectrum ?? AnalyserSpectrum(fftSize: state.frames.count)
        state.spectrum = spectrum
        let end = takeSnapshot(&state)
        if state.analysedEnd != end {
            state.frames.withUnsafeBufferPointer { spectrum.analyse($0.baseAddress!, smoothingTimeConstant: state.settings.smoothingTimeConstant) }
            state.analysedEnd = end
        }
        return spectrum
    }
}

/// Render side of ``AnalyserNode``: copies its input to its output and appends it to the ring.
final class AnalyserKernel: NodeKernel, @unchecked Sendable {
    // MARK: Render thread only (writes the ring)
    private let ring: AnalyserRing

    init(node: AnalyserNode, ring: AnalyserRing, maximumFramesPerSlice: Int) {
        self.ring = ring
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        ring.write(inputSilent ? nil : out, frameCount: n)
        outputIsSilent[0] = inputSilent
    }
}
