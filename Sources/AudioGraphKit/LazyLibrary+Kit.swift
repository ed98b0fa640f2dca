// The Kit's C libraries that are opened on first use (cairo for plots, FFmpeg for AAC files), as LazyLibrary values.
import AudioGraphCore
import CAVCodecLazy
import CCairoLazy

extension LazyLibrary {
    /// cairo (`libcairo.so.2`): the pictures of `audiograph plot` (``AudioPlot``).
    package static let cairo = LazyLibrary(name: "cairo", load: ag_cairo_load)
    /// FFmpeg (libavformat, libavcodec and what they load): AAC files (`AACFileWriter`).
    package static let ffmpeg = LazyLibrary(name: "FFmpeg (libavformat)", load: ag_avcodec_load)
}
