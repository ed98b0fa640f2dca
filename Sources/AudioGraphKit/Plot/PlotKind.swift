// What a picture of a sound shows: waveform, averaged spectrum or spectrogram.

/// The kind of picture ``AudioPlot`` draws.
///
/// Thread safety: a value type; safe to share between threads.
package enum PlotKind: String, Sendable, CaseIterable {
    /// Min/max envelope per pixel column against time, one lane per channel.
    case waveform
    /// The averaged power spectrum (Hann window), dBFS against a log frequency axis.
    case spectrum
    /// Time × log frequency, the level in dBFS as a colour.
    case spectrogram
}
