// The spectra behind AudioPlot's spectrum and spectrogram: Hann-windowed FFTW frames of a file.
import AudioGraphCore
import AudioGraphNodes
#if canImport(Glibc)
import Glibc
#endif

extension AudioPlot {
    /// One FFT size's transform and Hann window, reading frames of a file.
    private final class FrameAnalyser {
        let size: Int
        let channels: [Int]
        let channelCount: Int
        let reader: SeekableAudioFileReader
        let fft: RealForwardFFT
        var window: [Float]
        var interleaved: [Float]
        /// Power → dBFS of a full-scale sine: 4 / (Σ window)².
        let scale: Double

        init(path: String, size: Int, channels: [Int], channelCount: Int) throws(PlotError) {
            if let reason = LazyLibrary.fftw.loadFailure { throw .libraryMissing(library: LazyLibrary.fftw.name, reason: reason) }
            do { reader = try SeekableAudioFileReader(path: path) } catch { throw .file(error) }
            self.size = size
            self.channels = channels
            self.channelCount = channelCount
            fft = RealForwardFFT(size: size)
            window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
            interleaved = [Float](repeating: 0, count: size * channelCount)
            let sum = window.reduce(0.0) { $0 + Double($1) }
            scale = 4 / (sum * sum)
        }

        /// Adds the power spectrum (bins 0...size/2, averaged over the channels) of the frame
        /// starting at file frame `start` (zeros outside the file) to `power`.
        func addPower(at start: Int64, to power: inout [Double]) throws(PlotError) {
            for i in interleaved.indices { interleaved[i] = 0 }
            let first = max(start, 0)
            let skip = Int(first - start)
            let end = min(start + Int64(size), reader.info.frames)
            if end > first {
                let wanted = Int(end - first)
                let got = interleaved.withUnsafeMutableBufferPointer {
                    reader.read(into: $0.baseAddress! + skip * channelCount, atFrame: first, frameCount: wanted)
                }
                if got < 0 { throw .file(.ioFailed(path: reader.path, reason: "cannot read at frame \(first)")) }
            }
            let weight = scale / Double(channels.count)
            for c in channels {
                let input = fft.input, output = fft.output
                for i in 0..<size { input[i] = interleaved[i * channelCount + c] * window[i] }
                fft.transform()
                for k in 0...(size / 2) {
                    let re = Double(output[2 * k]), im = Double(output[2 * k + 1])
                    power[k] += (re * re + im * im) * weight
                }
            }
        }
    }

    /// dBFS per bin (0...spectrumSize/2) of the power averaged over half-overlapping frames.
    static func averagedSpectrum(path: String, info: AudioFileInfo, channels: [Int]) throws(PlotError) -> [Double] {
        let size = spectrumSize
        let analyser = try FrameAnalyser(path: path, size: size, channels: channels, channelCount: info.channels)
        var power = [Double](repeating: 0, count: size / 2 + 1)
        var start: Int64 = 0
        var frames = 0
        repeat {
            try analyser.addPower(at: start, to: &power)
            frames += 1
            start += Int64(size / 2)
        } while start + Int64(size) <= info.frames
        return power.map { decibels($0 / Double(frames)) }
    }

    /// dBFS per bin (0...spectrogramSize/2) of one frame centred on each of `columns` times
    /// spread evenly over the file.
    ///
    /// The cost is bounded by the picture, not the file: columns whose frame starts at the same
    /// file frame (a file shorter than the picture is wide) share one analysis, and when the
    /// distinct frames times the channels exceed ``spectrogramFrameBudget``, every k-th channel
    /// is averaged instead of all of them.
    static func spectrogram(path: String, info: AudioFileInfo, channels: [Int], columns: Int) throws(PlotError) -> [[Double]] {
        let size = spectrogramSize
        let starts = (0..<columns).map { Int64((Double($0) + 0.5) * Double(info.frames) / Double(columns)) - Int64(size / 2) }
        var distinct = 1
        for k in 1..<max(1, starts.count) where starts[k] != starts[k - 1] { distinct += 1 }
        let stride = max(1, (distinct * channels.count + spectrogramFrameBudget - 1) / spectrogramFrameBudget)
        let analysed = Swift.stride(from: 0, to: channels.count, by: stride).map { channels[$0] }
        let analyser = try FrameAnalyser(path: path, size: size, channels: analysed, channelCount: info.channels)
        var result: [[Double]] = []
        result.reserveCapacity(columns)
        for column in 0..<columns {
            if column > 0 && starts[column] == starts[column - 1] {
                result.append(result[column - 1])
                continue
            }
            var power = [Double](repeating: 0, count: size / 2 + 1)
            try analyser.addPower(at: starts[column], to: &power)
            result.append(power.map(decibels))
        }
        return result
    }

    /// 10·log10(power), no lower than ``floorDecibels``.
    static func decibels(_ power: Double) -> Double {
        power > 0 ? max(floorDecibels, 10 * log10(power)) : floorDecibels
    }
}
