// The stock nodes' C libraries that are opened on first use (FFTW, RubberBand, libmysofa, fluidsynth, libsoxr, libsamplerate, libsndfile), as LazyLibrary values.
import AudioGraphCore
import CFFTWLazy
import CFluidSynthLazy
import CMySofaLazy
import CRubberBandLazy
import CSampleRateLazy
import CSndFileLazy
import CSoxrLazy

extension LazyLibrary {
    /// FFTW, single precision (`libfftw3f.so.3`): the convolver's, the analyser's, the HRTF
    /// sets' and the plots' transforms (every plan is made by `FFTWPlanner`).
    package static let fftw = LazyLibrary(name: "libfftw3f", load: ag_fftw_load)
    /// RubberBand (`librubberband.so.2`): the timePitch node's stretcher.
    package static let rubberBand = LazyLibrary(name: "librubberband", load: ag_rubberband_load)
    /// libmysofa (`libmysofa.so.1`): the environment node's HRTF sets (SOFA files).
    package static let mysofa = LazyLibrary(name: "libmysofa", load: ag_mysofa_load)
    /// fluidsynth (`libfluidsynth.so.3`): the sampler's SoundFont and audio-file instruments.
    package static let fluidSynth = LazyLibrary(name: "libfluidsynth", load: ag_fluidsynth_load)
    /// libsoxr (`libsoxr.so.0`, with libgomp): the `best`/`medium` rate conversions (``Resampler``,
    /// the engine API's `AudioConverter`).
    package static let soxr = LazyLibrary(name: "libsoxr", load: ag_soxr_load)
    /// libsamplerate (`libsamplerate.so.0`): the other rate-conversion qualities.
    package static let samplerate = LazyLibrary(name: "libsamplerate", load: ag_samplerate_load)
    /// libsndfile (`libsndfile.so.1`, with its FLAC, Ogg, Vorbis, Opus, mpg123 and LAME codecs):
    /// every sound file read, and every file written but a plain WAV (``WAVFileWriter``).
    package static let sndfile = LazyLibrary(name: "libsndfile", load: ag_sndfile_load)
}
