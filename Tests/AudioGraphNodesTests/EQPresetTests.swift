// The eq presets: every preset loads, its bands are valid parameters, low rates stay valid.

import XCTest
@testable import AudioGraphNodes

final class EQPresetTests: XCTestCase {
    func testLowRatesLowerOnlyFrequenciesAboveTheLimit() {
        let bands = EQPreset.loudness.bands(sampleRate: 16000)
        XCTAssertEqual(bands.map(\.frequency), [80, 1000, 7200])  // 10 kHz -> 0.45 * 16000
        XCTAssertEqual(EQPreset.loudness.bands(sampleRate: 48000).map(\.frequency), [80, 1000, 10000])
        XCTAssertEqual(EQPreset.flat.bands, [])
    }

    func testPresetDefaultsFollowTheBandTypes() {
        XCTAssertEqual(EQPreset.loudness.bands, [EQBand(type: .lowShelf, frequency: 80, gain: 6, q: 0.70710678),
                                                 EQBand(type: .peak, frequency: 1000, gain: -1.5, q: 0.7),
                                                 EQBand(type: .highShelf, frequency: 10000, gain: 4, q: 0.70710678)])
        XCTAssertEqual(EQPreset.spokenWord.bands.map(\.type), [.highPass, .peak, .peak, .lowPass])
    }
}
