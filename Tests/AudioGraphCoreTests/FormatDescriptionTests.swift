// Partial formats laid over complete ones, and the bus format's printed form.

import XCTest
@testable import AudioGraphCore

final class FormatDescriptionTests: XCTestCase {
    func testAppliedOverridesOnlyGivenFields() {
        let base = BusFormat(sampleRate: 48000, channels: 2)
        XCTAssertEqual(FormatDescription().applied(to: base), base)
        XCTAssertEqual(FormatDescription(sampleRate: 44100, sampleType: .int16).applied(to: base),
                       BusFormat(sampleRate: 44100, channels: 2, sampleType: .int16, interleaved: false))
        XCTAssertEqual(FormatDescription(channels: 6, interleaved: true).applied(to: base),
                       BusFormat(sampleRate: 48000, channels: 6, sampleType: .float32, interleaved: true))
        XCTAssertTrue(FormatDescription().isEmpty)
        XCTAssertFalse(FormatDescription(channels: 1).isEmpty)
    }

    func testSampleTypeSizesAndDescription() {
        XCTAssertEqual(SampleType.allCases.map(\.bytesPerSample), [4, 8, 2, 3, 4])
        XCTAssertEqual(BusFormat(sampleRate: 44100, channels: 1).description, "44100 Hz, 1 ch, float32, non-interleaved")
        XCTAssertEqual(BusFormat(sampleRate: 22050.5, channels: 2, sampleType: .int24, interleaved: true).description,
                       "22050.5 Hz, 2 ch, int24, interleaved")
    }
}
