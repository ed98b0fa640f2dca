// AudioCommonFormat: AVAudioCommonFormat's raw values and the mapping to the core's sample types.
import AudioGraphKit
import XCTest

final class AudioCommonFormatTests: XCTestCase {
    func testRawValuesAreAVFAudios() {
        XCTAssertEqual(AudioCommonFormat.otherFormat.rawValue, 0)
        XCTAssertEqual(AudioCommonFormat.pcmFormatFloat32.rawValue, 1)
        XCTAssertEqual(AudioCommonFormat.pcmFormatFloat64.rawValue, 2)
        XCTAssertEqual(AudioCommonFormat.pcmFormatInt16.rawValue, 3)
        XCTAssertEqual(AudioCommonFormat.pcmFormatInt32.rawValue, 4)
    }

    func testSampleTypeMapping() {
        for type in SampleType.allCases {
            let common = AudioCommonFormat(type)
            if type == .int24 {
                XCTAssertEqual(common, .otherFormat)
                XCTAssertNil(common.sampleType)
            } else {
                XCTAssertEqual(common.sampleType, type)
            }
        }
        XCTAssertEqual(AudioCommonFormat.allCases.map(\.description), ["other", "Float32", "Float64", "Int16", "Int32"])
    }
}
