// Which time-stretch engine a timePitch node runs: the quality/CPU choice (a Linux addition).

/// The engine a `timePitch` node stretches with (its graph-file property `quality`,
/// ``AudioUnitTimePitch``'s `quality` in the engine API). AVAudioUnitTimePitch has no such
/// choice; this is a Linux addition. Figures per mode (CPU, pitch error, transient smearing,
/// output length) beside SoX's, ffmpeg's and the rubberband tool's are in Docs/Performance.md
/// ("Time-stretch").
///
/// Thread safety: a value type; safe to share between threads.
public enum TimePitchQuality: String, Sendable, Hashable, CaseIterable {
    /// librubberband's R3 ("finer") engine, real-time mode: the best quality (steady pitch at
    /// every rate, clean transients), the most CPU — the same engine as `rubberband -3`. In an
    /// offline file render each channel gets a stretcher of its own, channels 1… on a helper
    /// thread when it renders on more than one thread (``TimePitchNode/splitsChannels``). The
    /// default.
    case finer
    /// librubberband's R2 ("faster") engine, real-time mode, the engine ffmpeg's `rubberband`
    /// filter runs: about a quarter of R3's CPU; phasier, and a steady tone's spectrum spreads
    /// (its peak up to about 30 cents off, as with ffmpeg's filter; Docs/Performance.md).
    /// Two limits keep it real-time safe with librubberband 3.1.2: the pitch is taken at
    /// initialize (R2 grows its resampler's tables on the render thread for each new pitch
    /// ratio, measured by TimePitchRealTimeSafetyTests), and the rate is at most 5 times the
    /// pitch scale (beyond, R2 changes its FFT size, which reallocates).
    case faster
    /// WSOLA (waveform-similarity overlap-add, the class of SoX's `tempo`; ``WSOLAStretcher``),
    /// written here: about 1/30 of R3's CPU. The pitch stays exact and the attacks sharp (no
    /// phase vocoder), but material is repeated or skipped in pieces of 65 ms, so a transient
    /// may land up to 8 ms from its time, twice or not at all, and tones with vibrato or
    /// several voices can warble. A `pitch` other than 0 shifts as SoX's `pitch` effect does:
    /// WSOLA at tempo `rate / p` and its output resampled by `1 / p` (`p = 2^(cents/1200)`,
    /// libsamplerate's fastest sinc; ``WSOLAPitchShifter``), the pitch within a tenth of a
    /// cent. Any rate 1/32...32 and pitch -2400...2400, set, changed or automated while playing
    /// (the pitch is read per block of 256 output frames). At pitch 0 nothing is resampled: the
    /// output is WSOLA's, sample for sample, until the pitch first leaves 0 (from then on to the
    /// next start or bypass, resampled at ratio 1 when it is back at 0).
    case fastest

    /// The default: ``finer``.
    public static let `default` = TimePitchQuality.finer
}
