// Tests of the eq presets (AudioGraphCore.EQPreset) against the DSP: every curve exists and is stable.

import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class EQPresetDSPTests: XCTestCase {
    /// The spec's preset names all resolve.
    func testSpecNamesResolve() {
        let names = ["flat", "bassBooster", "bassReducer", "trebleBooster", "trebleReducer", "vocalBooster",
                     "loudness", "acoustic", "dance", "electronic", "hipHop", "jazz", "piano", "pop", "rock",
                     "smallSpeakers", "spokenWord"]
        for name in names { XCTAssertNotNil(EQPreset(rawValue: name), name) }
        XCTAssertEqual(EQPreset.flat.bands, [])
    }

    /// Cascade magnitude in dB at f (44.1 and 48 kHz), from the cookbook coefficients.
    func responseDB(_ preset: EQPreset, _ f: Double, sr: Double = 48000) -> Double {
        preset.bands.reduce(0.0) { $0 + SignalMeasurement.dBFS(BiquadCoefficients.cookbook($1, sampleRate: sr).magnitude(atFrequency: f, sampleRate: sr)) }
    }

    /// The cascades' responses have the shapes their names promise, measured with `responseDB`
    /// (the cookbook magnitudes) at 48 and 44.1 kHz: boosters lift and reducers cut their region
    /// against 1 kHz, flat is 0 dB everywhere, spoken word cuts the lows.
    func testResponsesFollowThePresetNames() {
        for sr in [48000.0, 44100] {
            XCTAssertEqual(responseDB(.flat, 1000, sr: sr), 0, accuracy: 1e-9)
            XCTAssertGreaterThan(responseDB(.bassBooster, 60, sr: sr) - responseDB(.bassBooster, 1000, sr: sr), 3)
            XCTAssertLessThan(responseDB(.bassReducer, 60, sr: sr) - responseDB(.bassReducer, 1000, sr: sr), -3)
            XCTAssertGreaterThan(responseDB(.trebleBooster, 12000, sr: sr) - responseDB(.trebleBooster, 1000, sr: sr), 3)
            XCTAssertLessThan(responseDB(.trebleReducer, 12000, sr: sr) - responseDB(.trebleReducer, 1000, sr: sr), -3)
            XCTAssertLessThan(responseDB(.spokenWord, 40, sr: sr) - responseDB(.spokenWord, 1000, sr: sr), -6)
        }
    }

    func testEveryBandIsValidAndStable() {
        for preset in EQPreset.allCases {
            for band in preset.bands {
                XCTAssertGreaterThanOrEqual(band.frequency, 10, "\(preset)")
                XCTAssertLessThan(band.frequency, 22050)
                XCTAssertTrue((0.05...100).contains(band.q))
                XCTAssertTrue((-96...24).contains(band.gain))
                for sr in [44100.0, 48000.0] {
                    let c = BiquadCoefficients.cookbook(band, sampleRate: sr)
                    // Stability triangle of a second-order denominator 1 + a1 z^-1 + a2 z^-2.
                    XCTAssertLessThan(abs(c.a2), 1, "\(preset)")
                    XCTAssertLessThan(abs(c.a1), 1 + c.a2, "\(preset)")
                }
            }
        }
    }
}
