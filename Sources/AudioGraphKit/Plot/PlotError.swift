// The errors of drawing a picture of a sound file (`audiograph plot`, ``AudioPlot``).
import AudioGraphCore

/// Why a picture could not be drawn. Each description is one line naming the file.
///
/// Thread safety: a value type; safe to share between threads.
package enum PlotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The picture's file name ends neither in `.png` nor in `.svg`.
    case unknownImageType(path: String)
    /// A library the picture needs (cairo; FFTW for spectra) cannot be loaded; `reason` is the
    /// loader's (naming the shared object).
    case libraryMissing(library: String, reason: String)
    /// Width or height outside 64...16384 pixels.
    case invalidSize(width: Int, height: Int)
    /// `--channel` names a channel the file does not have (0-based).
    case noSuchChannel(path: String, channel: Int, channelCount: Int)
    /// The sound file could not be read.
    case file(AudioFileError)
    /// cairo failed (for instance the picture could not be written).
    case cairo(path: String, reason: String)
    /// Drawing the picture would take more memory than a plot may use
    /// (``AudioPlot/maximumMemory``): the surface, its encoding and the analysis.
    case tooLarge(width: Int, height: Int, bytes: Int64)

    package var description: String {
        switch self {
        case .unknownImageType(let path): return "\(path): unknown picture type (use .png or .svg)"
        case let .libraryMissing(library, reason): return "cannot load \(library): \(reason)"
        case let .invalidSize(w, h): return "invalid picture size \(w)x\(h) (width and height are 64...16384 pixels)"
        case let .noSuchChannel(path, channel, count):
            return "\(path): no channel \(channel) (the file has \(count) channel\(count == 1 ? "" : "s"), numbered from 0)"
        case .file(let e): return e.description
        case let .cairo(path, reason): return "\(path): cannot draw: \(reason)"
        case let .tooLarge(w, h, bytes):
            return "a \(w)x\(h) picture needs about \(MemoryBudget.describe(bytes)) while drawing, more than the "
                + "\(MemoryBudget.describe(AudioPlot.maximumMemory)) a plot may use; draw a smaller one"
        }
    }
}
