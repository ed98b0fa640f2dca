// Helpers for the node tests: build a graph ending in a generic output, render it offline, measure.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes



/// Least-squares fit of a tone at frequency `f` plus DC (AudioGraphTesting's `ToneFit`): returns the
/// tone's amplitude and the RMS of the residual.
func toneFit(_ x: [Float], frequency f: Double, sampleRate sr: Double) -> (amplitude: Double, residualRMS: Double) {
    let fit = ToneFit(x, sampleRate: sr, frequencies: [f])
    return (fit.tones[0].amplitude, fit.residualRMS)
}

/// Magnitude of the DFT of `x` at `frequency` (Hz), normalized so a sine of amplitude A gives A.
func dftMagnitude(_ x: [Float], frequency: Double, sampleRate: Double) -> Double {
    var re = 0.0, im = 0.0
    for (n, y) in x.enumerated() {
        let w = 2 * Double.pi * frequency * Double(n) / sampleRate
        re += Double(y) * cos(w)
        im -= Double(y) * sin(w)
    }
    return 2 * (re * re + im * im).squareRoot() / Double(x.count)
}


/// The Fourier series of the unit band-limited waves, written out term by term with libm's sin:
/// every harmonic k <= min(512, floor(sampleRate / 2 / frequency)) of sin(k theta), weighted
/// 4/(pi k) (square, odd k), 2/(pi k) alternating (sawtooth), 8/(pi^2 k^2) alternating (triangle,
/// odd k). The independent reference for the oscillator and BandLimitedSeries tests.
func fourierSeries(_ w: Waveform, theta: Double, frequency f: Double, sampleRate sr: Double) -> Double {
    let top = min(512, Int(sr / 2 / f))
    if top < 1 { return 0 }
    var sum = 0.0
    for k in 1...top {
        let kd = Double(k)
        switch w {
        case .square where k % 2 == 1: sum += 4 / Double.pi * sin(kd * theta) / kd
        case .sawtooth: sum += 2 / Double.pi * (k % 2 == 1 ? 1 : -1) * sin(kd * theta) / kd
        case .triangle where k % 2 == 1: sum += 8 / (Double.pi * Double.pi) * (k % 4 == 1 ? 1 : -1) * sin(kd * theta) / (kd * kd)
        default: break
        }
    }
    return sum
}

extension XCTestCase: TeardownRegistering {}
