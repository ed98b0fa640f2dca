// The engine API's analyser (Web Audio's AnalyserNode surface, a Linux addition) with an EZAudioFFT-style dominant frequency.
import AudioGraphNodes
import Foundation

/// A pass-through node that analyses what flows through it, with Web Audio's `AnalyserNode`
/// surface (a Linux addition; AVFAudio has none): ``fftSize``, ``frequencyBinCount``,
/// ``smoothingTimeConstant``, ``minDecibels``, ``maxDecibels``, ``getFloatFrequencyData(_:)``,
/// ``getByteFrequencyData(_:)``, ``getFloatTimeDomainData(_:)``, ``getByteTimeDomainData(_:)``
/// — and, as EZAudioFFT offers, the strongest frequency (``maxFrequency``,
/// ``maxFrequencyMagnitude``, ``maxFrequencyIndex``, ``frequency(atIndex:)``) and a finer
/// ``dominantFrequency()``.
///
/// Over the graph's `analyser` node (``AnalyserNode``): its input passes to its output bit for
/// bit; the render thread only appends the channels' mean to a ring; the FFT (FFTW, Blackman
/// window), the smoothing over time and the dB conversion run on the thread that asks, by the
/// W3C formulas (Docs/Nodes.md). Before the engine renders, the data is that of silence (-∞ dB,
/// time-domain zeros).
///
/// Thread safety: the getters may be called from any thread but the render thread (a tap
/// block, a UI timer); the properties from control threads. Where Web Audio throws, a smoothing
/// outside 0...1 is clamped and a decibel range that is not finite or not increasing is ignored
/// and an `fftSize` that is not a power of two in 32...32768 is clamped to that range and rounded
/// to the nearest power of two (in octaves: 1000 → 1024, 3000 → 4096): a value never stops the
/// program.
public final class AudioAnalyserNode: AudioNode, @unchecked Sendable {
    private var settings: AnalyserProperties

    /// An analyser with Web Audio's defaults (fftSize 2048, smoothing 0.8, -100...-30 dB).
    public init() {
        settings = AnalyserProperties()
        super.init(kindName: "analyser")
    }

    /// An analyser of `fftSize` frames.
    public convenience init(fftSize: Int) {
        self.init()
        self.fftSize = fftSize
    }

    /// Frames analysed: a power of two, 32...32768 (2048). Setting it makes a new analysis
    /// (the history restarts). Another value is clamped to 32...32768 and rounded to the nearest
    /// power of two in octaves (Web Audio throws instead).
    public var fftSize: Int {
        get { settings.fftSize }
        set {
            var s = settings
            s.fftSize = Self.nearestFFTSize(newValue)
            check(s, "fftSize")
            settings = s
            // The graph node's size is fixed: a new one is made (as for an EQ band's shape).
            needsNewGraphNode = true
            if graphNode != nil { engine?.applyEdit("fftSize") }
        }
    }

    /// `n` clamped to 32...32768 and rounded to the nearest power of two in octaves.
    static func nearestFFTSize(_ n: Int) -> Int {
        let clamped = min(max(n, 32), 32768)
        return 1 << Int(log2(Double(clamped)).rounded())
    }

    /// Values of the frequency data: `fftSize / 2`.
    public var frequencyBinCount: Int { fftSize / 2 }

    /// Averaging with the previous analysis, 0...1 (0.8). A value outside is clamped to the
    /// range (NaN is ignored), as an Audio Unit's parameter, where Web Audio throws.
    public var smoothingTimeConstant: Double {
        get { settings.smoothingTimeConstant }
        set {
            guard !newValue.isNaN else { return }
            let newValue = min(1, max(0, newValue))
            var s = settings
            s.smoothingTimeConstant = newValue
            check(s, "smoothingTimeConstant")
            settings = s
            try? analyser?.setSmoothingTimeConstant(newValue)
        }
    }

    /// The dB value byte 0 stands for (-100).
    public var minDecibels: Double {
        get { settings.minDecibels }
        set { setDecibels(min: newValue, max: settings.maxDecibels, "minDecibels") }
    }

    /// The dB value byte 255 stands for (-30).
    public var maxDecibels: Double {
        get { settings.maxDecibels }
        set { setDecibels(min: settings.minDecibels, max: newValue, "maxDecibels") }
    }

    /// A range Web Audio would refuse (not finite, or `minDecibels` not below `maxDecibels`) is
    /// ignored: the setter cannot throw, and a value is no reason to stop the program.
    private func setDecibels(min: Double, max: Double, _ name: String) {
        guard min.isFinite, max.isFinite, min < max else { return }
        var s = settings
        s.minDecibels = min
        s.maxDecibels = max
        check(s, name)
        settings = s
        try? analyser?.setDecibelRange(minDecibels: min, maxDecibels: max)
    }

    private func check(_ s: AnalyserProperties, _ name: String) {
        if let problem = s.problem { engineProgrammerError(name, self, problem.reason) }
    }

    /// The graph's analyser while the engine has a graph.
    private var analyser: AnalyserNode? {
        guard let engine else { return graphNode as? AnalyserNode }
        return engine.withLock { graphNode as? AnalyserNode }
    }

    // MARK: Web Audio's getters

    /// The smoothed spectrum in dB (bin k at k·sampleRate/fftSize Hz) into the first
    /// `min(array.count, frequencyBinCount)` elements.
    public func getFloatFrequencyData(_ array: inout [Float]) {
        guard let analyser else { return fill(&array, -.infinity, frequencyBinCount) }
        analyser.getFloatFrequencyData(into: &array)
    }

    /// The spectrum as bytes: `⌊255 / (maxDecibels - minDecibels) · (dB - minDecibels)⌋`, clamped to 0...255.
    public func getByteFrequencyData(_ array: inout [UInt8]) {
        guard let analyser else { return fill(&array, 0, frequencyBinCount) }
        analyser.getByteFrequencyData(into: &array)
    }

    /// The last `fftSize` frames (the channels' mean), oldest first.
    public func getFloatTimeDomainData(_ array: inout [Float]) {
        guard let analyser else { return fill(&array, 0, fftSize) }
        analyser.getFloatTimeDomainData(into: &array)
    }

    /// The last `fftSize` frames as bytes: `⌊128 · (1 + x)⌋`, clamped to 0...255.
    public func getByteTimeDomainData(_ array: inout [UInt8]) {
        guard let analyser else { return fill(&array, 128, fftSize) }
        analyser.getByteTimeDomainData(into: &array)
    }

    private func fill<T>(_ array: inout [T], _ value: T, _ count: Int) {
        for i in 0..<min(array.count, count) { array[i] = value }
    }

    // MARK: EZAudioFFT's strongest frequency

    /// The rate the analysed frames run at (the node's input format; the engine's before it is connected).
    private var sampleRate: Double { inputFormat(forBus: 0).sampleRate }

    /// The centre frequency of bin `index`: `index · sampleRate / fftSize` (EZAudioFFT's `frequencyAtIndex:`).
    public func frequency(atIndex index: Int) -> Double {
        Double(index) * sampleRate / Double(fftSize)
    }

    /// The bin with the largest magnitude in the current frequency data (bin 0, DC, excluded);
    /// 0 when all are silent.
    public var maxFrequencyIndex: Int { strongestBin().index }

    /// The centre frequency of ``maxFrequencyIndex`` (EZAudioFFT's `maxFrequency`).
    public var maxFrequency: Double { frequency(atIndex: maxFrequencyIndex) }

    /// The magnitude (linear, smoothed) of ``maxFrequencyIndex`` (EZAudioFFT's `maxFrequencyMagnitude`).
    public var maxFrequencyMagnitude: Float {
        let db = strongestBin().decibels
        return db.isFinite ? Float(pow(10, Double(db) / 20)) : 0
    }

    /// The strongest frequency to a fraction of a bin: the peak of the parabola through the
    /// dB values of the strongest bin and its two neighbours (with the Blackman window, within
    /// about 1% of a bin for a steady tone). Nil when the data is silent.
    public func dominantFrequency() -> Double? {
        var data = [Float](repeating: -.infinity, count: frequencyBinCount)
        getFloatFrequencyData(&data)
        let (k, peak) = Self.strongest(data)
        guard peak.isFinite, k > 0 else { return nil }
        var offset = 0.0
        if k + 1 < data.count, data[k - 1].isFinite, data[k + 1].isFinite {
            let a = Double(data[k - 1]), b = Double(peak), c = Double(data[k + 1])
            let denominator = a - 2 * b + c
            if denominator < 0 { offset = 0.5 * (a - c) / denominator }
        }
        return (Double(k) + offset) * sampleRate / Double(fftSize)
    }

    private func strongestBin() -> (index: Int, decibels: Float) {
        var data = [Float](repeating: -.infinity, count: frequencyBinCount)
        getFloatFrequencyData(&data)
        let (k, db) = Self.strongest(data)
        return db.isFinite ? (k, db) : (0, -.infinity)
    }

    private static func strongest(_ data: [Float]) -> (Int, Float) {
        var best = 0
        var value = -Float.infinity
        for k in 1..<max(1, data.count) where data[k] > value {
            best = k
            value = data[k]
        }
        return (best, value)
    }

    // MARK: The engine's hooks

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try AnalyserNode(id: graphID, properties: settings)
        return declaring(outputFormat, on: node)
    }
}
