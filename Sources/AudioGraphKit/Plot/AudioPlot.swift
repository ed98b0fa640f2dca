// Pictures of a sound file drawn with cairo: waveform, averaged spectrum, spectrogram (PNG or SVG).
import AudioGraphCore
import AudioGraphNodes
import CCairo
#if canImport(Glibc)
import Glibc
#endif

/// Draws a picture of a sound file — its waveform, averaged spectrum or spectrogram — with axes,
/// tick labels and a title, into a PNG or SVG file, with cairo (the library call behind
/// `audiograph plot`).
///
/// - Waveform: the min/max envelope of each pixel column
///   (``AudioFileReader/waveform(path:pointCount:)``, one streaming pass), one lane per channel,
///   amplitude −1...1 against time.
/// - Spectrum: the power spectrum averaged over Hann-windowed frames of ``spectrumSize`` points
///   (half overlapping, FFTW), in dBFS (a full-scale sine reads 0 dB) against a log frequency
///   axis from ``lowestFrequency`` to half the sample rate.
/// - Spectrogram: one Hann-windowed frame of ``spectrogramSize`` points centred on each pixel
///   column's time, log frequency upwards, the level (−120...0 dBFS) as a colour.
///
/// Without a channel the spectra average the channels' power; the waveform shows every channel.
/// The picture is written aside and renamed into place: a failure leaves no half-written file.
///
/// Thread safety: the functions are reentrant (each call has its own cairo surfaces and FFTW
/// buffers; plans are made through ``FFTWPlanner``); call them from any thread but the render
/// thread (they do file I/O and allocate).
package enum AudioPlot {
    /// The lowest frequency of the log frequency axes, in Hz.
    package static let lowestFrequency = 20.0
    /// The bottom of the dB scales (spectrum axis and spectrogram colours), in dBFS.
    package static let floorDecibels = -120.0
    /// Points of the averaged spectrum's frames.
    package static let spectrumSize = 8192
    /// Points of the spectrogram's frames.
    package static let spectrogramSize = 2048

    /// The most memory drawing one picture may take: 2 GiB (a 16384 x 16384 spectrogram took
    /// 2.24 GB at its peak).
    package static let maximumMemory: Int64 = 2 << 30

    /// What drawing a `width` x `height` picture of `kind` takes at its peak, bytes: the ARGB
    /// surface and as much again while it is encoded, plus a spectrogram's dB columns.
    package static func memoryNeeded(kind: PlotKind, width: Int, height: Int) -> Int64 {
        let surface = Int64(width) * Int64(height) * 4
        let analysis = kind == .spectrogram ? Int64(plotArea(width: width, height: height).width) * Int64(spectrogramSize / 2 + 1) * 8 : 0
        return 2 * surface + analysis
    }

    /// The most FFT frames a spectrogram computes (columns x channels analysed): its cost is
    /// bounded by its size, whatever the channel count (a 1024-channel file took 22-29 s).
    /// Beyond it, every k-th channel is averaged (k the smallest that fits).
    package static let spectrogramFrameBudget = 16384

    /// The plot area (inside the axes) of a picture of `width` × `height` pixels, in pixels from
    /// the top left corner; whole pixels.
    package static func plotArea(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let left = 64, right = 16, top = 30, bottom = 42
        return (left, top, max(1, width - left - right), max(1, height - top - bottom))
    }

    /// The x coordinate (pixels from the picture's left edge) of `frequency` on the log
    /// frequency axis of a spectrum of a file at `sampleRate`, in a picture `width` pixels wide.
    package static func x(frequency: Double, sampleRate: Double, width: Int, height: Int) -> Double {
        let a = plotArea(width: width, height: height)
        return Double(a.x) + Double(a.width) * logPosition(frequency, sampleRate: sampleRate)
    }

    /// Draws a `kind` picture of the sound file at `path` into `output` (`.png` or `.svg`),
    /// `width` × `height` pixels; `channel` (0-based) picks one channel, nil shows them all.
    /// `title` names the sound in the picture's title (nil: the file's name).
    /// - Throws: ``PlotError``.
    package static func draw(file path: String, to output: String, kind: PlotKind = .waveform,
                            width: Int = 1200, height: Int = 400, channel: Int? = nil,
                            title: String? = nil) throws(PlotError) {
        let isSVG: Bool
        switch output.split(separator: ".").last?.lowercased() {
        case "png" where output.contains("."): isSVG = false
        case "svg" where output.contains("."): isSVG = true
        default: throw .unknownImageType(path: output)
        }
        guard (64...16384).contains(width), (64...16384).contains(height) else {
            throw .invalidSize(width: width, height: height)
        }
        let needed = memoryNeeded(kind: kind, width: width, height: height)
        guard needed <= maximumMemory else { throw .tooLarge(width: width, height: height, bytes: needed) }
        let info: AudioFileInfo
        do { info = try AudioFileReader.info(path: path) } catch { throw .file(error) }
        if let channel, !(0..<info.channels).contains(channel) {
            throw .noSuchChannel(path: path, channel: channel, channelCount: info.channels)
        }
        let channels = channel.map { [$0] } ?? Array(0..<info.channels)
        let name = title ?? path.split(separator: "/").last.map(String.init) ?? path
        let which = channel.map { " (channel \($0))" } ?? ""

        // Analyse first: a read error leaves no picture behind.
        let content: Content
        switch kind {
        case .waveform:
            let area = plotArea(width: width, height: height)
            let points: [[WaveformPoint]]
            do { points = try AudioFileReader.waveform(path: path, pointCount: area.width) } catch { throw .file(error) }
            content = .waveform(channels.map { points[$0] })
        case .spectrum:
            content = .spectrum(try averagedSpectrum(path: path, info: info, channels: channels))
        case .spectrogram:
            let area = plotArea(width: width, height: height)
            content = .spectrogram(try spectrogram(path: path, info: info, channels: channels, columns: area.width))
        }

        if let reason = LazyLibrary.cairo.loadFailure { throw .libraryMissing(library: LazyLibrary.cairo.name, reason: reason) }
        let temporary = output + ".part-\(getpid())"
        PartialFiles.register(temporary)
        let surface: OpaquePointer = isSVG
            ? cairo_svg_surface_create(temporary, Double(width), Double(height))
            : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        let title = "\(name)\(which): \(kind.rawValue)"
        drawFrame(cr, width: width, height: height, title: title)
        switch content {
        case .waveform(let lanes): drawWaveform(cr, lanes: lanes, info: info, width: width, height: height)
        case .spectrum(let db): drawSpectrum(cr, decibels: db, sampleRate: info.sampleRate, width: width, height: height)
        case .spectrogram(let columns): drawSpectrogram(cr, columns: columns, info: info, width: width, height: height)
        }
        cairo_destroy(cr)
        if isSVG {
            cairo_surface_finish(surface)
        } else {
            let status = cairo_surface_write_to_png(surface, temporary)
            if status != CAIRO_STATUS_SUCCESS {
                unlink(temporary)
                throw .cairo(path: output, reason: String(cString: cairo_status_to_string(status)))
            }
        }
        let status = cairo_surface_status(surface)
        if status != CAIRO_STATUS_SUCCESS {
            unlink(temporary)
            throw .cairo(path: output, reason: String(cString: cairo_status_to_string(status)))
        }
        let moved = FileSystemPath.moveIntoPlace(temporary, output)
        if moved != 0 {
            let reason = String(cString: strerror(moved))
            unlink(temporary)
            throw .cairo(path: output, reason: reason)
        }
    }

    /// What is drawn inside the plot area.
    private enum Content {
        case waveform([[WaveformPoint]])
        case spectrum([Double])
        case spectrogram([[Double]])
    }

    /// 0...1 along the log frequency axis (``lowestFrequency`` ... `sampleRate / 2`).
    static func logPosition(_ frequency: Double, sampleRate: Double) -> Double {
        let top = sampleRate / 2
        return log(frequency / lowestFrequency) / log(top / lowestFrequency)
    }

    /// The frequency at position `t` (0...1) along the log frequency axis.
    static func frequency(atLogPosition t: Double, sampleRate: Double) -> Double {
        lowestFrequency * pow(sampleRate / 2 / lowestFrequency, t)
    }
}
