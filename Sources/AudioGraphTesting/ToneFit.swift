// Least-squares fit of sinusoids at known frequencies: amplitude and phase per tone, DC, residual, THD+N.
import Foundation

/// A least-squares fit of `dc + Σ amplitude·sin(2π·f·n/sampleRate + phase)` at known frequencies,
/// the measurement the conformance suite uses for resampled signals (`tone_fit` / `check_tones`
/// in shared/conformance/lib/agcheck.py): each tone contributes a cosine and a sine column, the
/// columns are fitted by Householder QR in `Double`, and whatever the fit does not explain is the
/// residual (noise plus distortion plus any tone not listed).
///
/// `n` counts from 0 at the first sample given, so the phases are those of the window analysed.
///
/// Thread safety: an immutable value; `Sendable`.
public struct ToneFit: Sendable {
    /// One fitted sinusoid: `amplitude·sin(2π·frequency·n/sampleRate + phase)`.
    public struct Tone: Sendable, Equatable {
        /// The frequency the fit was asked for, Hz.
        public let frequency: Double
        /// Peak amplitude (≥ 0).
        public let amplitude: Double
        /// Phase in radians, −π...π, of a sine starting at the window's first sample.
        public let phase: Double
    }

    /// The tones, in the order of the `frequencies` given.
    public let tones: [Tone]
    /// The fitted constant offset (0 when the fit had no DC term).
    public let dc: Double
    /// samples − fitted model, one value per sample.
    public let residual: [Double]
    /// RMS of `residual`.
    public let residualRMS: Double
    /// RMS of the fitted model (tones and DC), i.e. of samples − residual.
    public let fittedRMS: Double

    /// THD+N in dB: 20·log10(residualRMS / fittedRMS), as agcheck's `check_tones` computes it.
    /// −infinity for an exact fit.
    public var thdPlusNoiseDB: Double { 20 * log10(residualRMS / fittedRMS) }

    /// Fits tones at `frequencies` (Hz, distinct, below sampleRate/2) to `samples`.
    ///
    /// - Parameter includeDC: fit a constant offset too (agcheck does, by default).
    /// - Precondition: at least as many samples as fitted coefficients (2 per tone, plus DC).
    public init<S: Collection>(_ samples: S, sampleRate: Double, frequencies: [Double], includeDC: Bool = true)
    where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let count = x.count
        var columns: [[Double]] = []
        if includeDC { columns.append([Double](repeating: 1, count: count)) }
        for frequency in frequencies {
            let w = 2 * Double.pi * frequency / sampleRate
            columns.append((0..<count).map { cos(w * Double($0)) })
            columns.append((0..<count).map { sin(w * Double($0)) })
        }
        let coefficients = LeastSquares.solve(columns: columns, rightHandSide: x)

        var residual = x
        for (column, coefficient) in zip(columns, coefficients) where coefficient != 0 {
            for n in 0..<count { residual[n] -= coefficient * column[n] }
        }
        let offset = includeDC ? 1 : 0
        self.dc = includeDC ? coefficients[0] : 0
        // a·cos θ + b·sin θ = A·sin(θ + φ) with A = hypot(a, b), φ = atan2(a, b).
        self.tones = frequencies.enumerated().map { index, frequency in
            let a = coefficients[offset + 2 * index], b = coefficients[offset + 2 * index + 1]
            return Tone(frequency: frequency, amplitude: (a * a + b * b).squareRoot(), phase: atan2(a, b))
        }
        self.residual = residual
        self.residualRMS = SignalMeasurement.rms(residual)
        self.fittedRMS = SignalMeasurement.rms(zip(x, residual).map { $0 - $1 })
    }

    /// Fits the dominant sinusoid of `samples`: its frequency is estimated first by
    /// `SignalMeasurement.estimateFrequency` (exact to about 1e-6 Hz for a clean sine), then the
    /// tone at that frequency is fitted as by `init(_:sampleRate:frequencies:includeDC:)`, so
    /// `tones[0]` holds the frequency, amplitude and phase found. Nil when no frequency can be
    /// estimated (fewer than two upward zero crossings).
    public init?<S: Collection>(dominantToneOf samples: S, sampleRate: Double, includeDC: Bool = true)
    where S.Element: BinaryFloatingPoint {
        guard let frequency = SignalMeasurement.estimateFrequency(samples, sampleRate: sampleRate) else { return nil }
        self.init(samples, sampleRate: sampleRate, frequencies: [frequency], includeDC: includeDC)
    }

    /// The fitted amplitude of the tone asked for at `frequency`, nil if none was.
    public func amplitude(at frequency: Double) -> Double? {
        tones.first { $0.frequency == frequency }?.amplitude
    }
}
