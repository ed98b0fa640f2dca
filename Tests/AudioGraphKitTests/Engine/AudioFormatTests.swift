// AudioFormat: initializers, equality, settings round trip and the core StreamFormat conversion.
import AudioGraphKit
import Foundation
import XCTest

final class AudioFormatTests: XCTestCase {
    func testStandardFormat() throws {
        let f = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 44100, channels: 2))
        XCTAssertEqual(f.sampleRate, 44100)
        XCTAssertEqual(f.channelCount, 2)
        XCTAssertEqual(f.commonFormat, .pcmFormatFloat32)
        XCTAssertFalse(f.isInterleaved)
        XCTAssertTrue(f.isStandard)
        XCTAssertEqual(f.description, "<AudioFormat: 2 ch, 44100 Hz, Float32, deinterleaved>")
    }

    func testCommonFormats() throws {
        for common in [AudioCommonFormat.pcmFormatFloat32, .pcmFormatFloat64, .pcmFormatInt16, .pcmFormatInt32] {
            for interleaved in [false, true] {
                let f = try XCTUnwrap(AudioFormat(commonFormat: common, sampleRate: 48000, channels: 3, interleaved: interleaved))
                XCTAssertEqual(f.commonFormat, common)
                XCTAssertEqual(f.isInterleaved, interleaved)
                XCTAssertEqual(f.isStandard, common == .pcmFormatFloat32 && !interleaved)
            }
        }
    }

    func testInvalidFormatsAreNil() {
        XCTAssertNil(AudioFormat(commonFormat: .otherFormat, sampleRate: 48000, channels: 2, interleaved: false))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: 48000, channels: 0))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: 0, channels: 2))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: -1, channels: 2))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: .nan, channels: 2))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: .infinity, channels: 2))
        XCTAssertNil(AudioFormat(standardFormatWithSampleRate: 48000, channels: 1025))
        XCTAssertNotNil(AudioFormat(standardFormatWithSampleRate: 48000, channels: 8))
    }

    func testEqualityComparesEveryField() throws {
        let a = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: true))
        let same = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: true))
        XCTAssertEqual(a, same)
        XCTAssertEqual(a.hashValue, same.hashValue)
        XCTAssertEqual(Set([a, same]).count, 1)
        let others = [
            AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 44100, channels: 2, interleaved: true),
            AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 1, interleaved: true),
            AudioFormat(commonFormat: .pcmFormatInt32, sampleRate: 48000, channels: 2, interleaved: true),
            AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: false),
        ]
        for other in others { XCTAssertNotEqual(a, try XCTUnwrap(other)) }
    }

    func testSettingsHoldAVFAudioKeysAndRoundTrip() throws {
        let f = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 22050, channels: 2, interleaved: true))
        let s = f.settings
        XCTAssertEqual(s["AVFormatIDKey"] as? UInt32, 0x6C70_636D)   // 'lpcm'
        XCTAssertEqual(s[AVFormatIDKey] as? AudioFormatID, kAudioFormatLinearPCM)
        XCTAssertEqual(s["AVSampleRateKey"] as? Double, 22050)
        XCTAssertEqual(s["AVNumberOfChannelsKey"] as? AudioChannelCount, 2)
        XCTAssertEqual(s["AVLinearPCMBitDepthKey"] as? Int, 16)
        XCTAssertEqual(s["AVLinearPCMIsFloatKey"] as? Bool, false)
        XCTAssertEqual(s["AVLinearPCMIsNonInterleaved"] as? Bool, false)
        XCTAssertEqual(s["AVLinearPCMIsBigEndianKey"] as? Bool, false)

        for common in [AudioCommonFormat.pcmFormatFloat32, .pcmFormatFloat64, .pcmFormatInt16, .pcmFormatInt32] {
            for interleaved in [false, true] {
                let f = try XCTUnwrap(AudioFormat(commonFormat: common, sampleRate: 96000, channels: 6, interleaved: interleaved))
                let back = try XCTUnwrap(AudioFormat(settings: f.settings), "\(f)")
                XCTAssertEqual(back, f)
            }
        }
    }

    func testSettingsDefaultsAndNumberTypes() throws {
        // AVAudioFormat's defaults: integer samples, 16 bits, interleaved.
        let plain = try XCTUnwrap(AudioFormat(settings: [AVSampleRateKey: 44100, AVNumberOfChannelsKey: 1]))
        XCTAssertEqual(plain.commonFormat, .pcmFormatInt16)
        XCTAssertTrue(plain.isInterleaved)
        // NSNumber values, as Objective-C settings carry them.
        let ns = try XCTUnwrap(AudioFormat(settings: [AVFormatIDKey: NSNumber(value: kAudioFormatLinearPCM),
                                                      AVSampleRateKey: NSNumber(value: 48000.0),
                                                      AVNumberOfChannelsKey: NSNumber(value: 2),
                                                      AVLinearPCMIsFloatKey: NSNumber(value: true),
                                                      AVLinearPCMIsNonInterleaved: NSNumber(value: true)]))
        XCTAssertTrue(ns.isStandard)
        XCTAssertEqual(ns.sampleRate, 48000)
        let f64 = try XCTUnwrap(AudioFormat(settings: [AVSampleRateKey: 8000.0, AVNumberOfChannelsKey: UInt32(1),
                                                       AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 64]))
        XCTAssertEqual(f64.commonFormat, .pcmFormatFloat64)
        let i24 = try XCTUnwrap(AudioFormat(settings: [AVSampleRateKey: 8000, AVNumberOfChannelsKey: 1, AVLinearPCMBitDepthKey: 24]))
        XCTAssertEqual(i24.commonFormat, .otherFormat)
        XCTAssertEqual(i24.settings[AVLinearPCMBitDepthKey] as? Int, 24)
    }

    func testBadSettingsAreNil() {
        XCTAssertNil(AudioFormat(settings: [AVNumberOfChannelsKey: 2]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: "48000", AVNumberOfChannelsKey: 2]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2.5]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2, AVFormatIDKey: kAudioFormatFLAC]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2, AVLinearPCMBitDepthKey: 8]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2, AVLinearPCMIsFloatKey: true,
                                            AVLinearPCMBitDepthKey: 16]))
        XCTAssertNil(AudioFormat(settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2, AVLinearPCMIsBigEndianKey: true]))
    }

    func testStreamFormatConversion() throws {
        let core = StreamFormat(sampleRate: 32000, channelCount: 4, sampleType: .int32, isInterleaved: true)
        let f = AudioFormat(streamFormat: core)
        XCTAssertEqual(f.commonFormat, .pcmFormatInt32)
        XCTAssertEqual(f.channelCount, 4)
        XCTAssertEqual(f.sampleRate, 32000)
        XCTAssertTrue(f.isInterleaved)
        XCTAssertEqual(f.streamFormat, core)
        XCTAssertEqual(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)?.streamFormat,
                       StreamFormat.canonical(sampleRate: 48000, channelCount: 2))
        let packed = AudioFormat(streamFormat: StreamFormat(sampleRate: 48000, channelCount: 1, sampleType: .int24))
        XCTAssertEqual(packed.commonFormat, .otherFormat)
        XCTAssertEqual(packed.description, "<AudioFormat: 1 ch, 48000 Hz, Int24, deinterleaved>")
    }
}
