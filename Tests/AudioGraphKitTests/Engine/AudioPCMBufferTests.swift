// AudioPCMBuffer: channel pointers by sample type, stride, frameLength and the CoreAudio buffer list.
import AudioGraphKit
import AudioGraphTesting
import XCTest

final class AudioPCMBufferTests: XCTestCase {
    func testDeinterleavedFloatBuffer() throws {
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 100))
        XCTAssertTrue(b.format === format)
        XCTAssertEqual(b.frameCapacity, 100)
        XCTAssertEqual(b.frameLength, 0)
        XCTAssertEqual(b.stride, 1)
        XCTAssertNil(b.int16ChannelData)
        XCTAssertNil(b.int32ChannelData)
        let data = try XCTUnwrap(b.floatChannelData)
        // Zeroed at allocation, one 100-frame block per channel.
        for c in 0..<2 { for i in 0..<100 { XCTAssertEqual(data[c][i], 0) } }
        XCTAssertNotEqual(data[0], data[1])
        XCTAssertGreaterThanOrEqual(abs(data[1] - data[0]), 100)

        let list = UnsafeMutableAudioBufferListPointer(b.mutableAudioBufferList)
        XCTAssertEqual(list.count, 2)
        XCTAssertEqual(b.audioBufferList.pointee.mNumberBuffers, 2)
        for c in 0..<2 {
            XCTAssertEqual(list[c].mNumberChannels, 1)
            XCTAssertEqual(list[c].mData, UnsafeMutableRawPointer(data[c]))
            XCTAssertEqual(list[c].mDataByteSize, 0)
        }
        b.frameLength = 50
        XCTAssertEqual(b.frameLength, 50)
        for c in 0..<2 { XCTAssertEqual(list[c].mDataByteSize, 50 * 4) }

        // What is written through the channel pointers is what the list's memory holds.
        for i in 0..<100 { data[0][i] = Float(i); data[1][i] = -Float(i) }
        let ch1 = try XCTUnwrap(list[1].mData).assumingMemoryBound(to: Float.self)
        XCTAssertEqual(ch1[37], -37)
    }

    func testInterleavedInt16Buffer() throws {
        let format = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 44100, channels: 3, interleaved: true))
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 64))
        XCTAssertNil(b.floatChannelData)
        XCTAssertNil(b.int32ChannelData)
        XCTAssertEqual(b.stride, 3)
        let data = try XCTUnwrap(b.int16ChannelData)
        let list = UnsafeMutableAudioBufferListPointer(b.mutableAudioBufferList)
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list[0].mNumberChannels, 3)
        XCTAssertEqual(list[0].mData, UnsafeMutableRawPointer(data[0]))
        b.frameLength = 64
        XCTAssertEqual(list[0].mDataByteSize, 64 * 3 * 2)
        // Frame i, channel c is at i * stride + c.
        for i in 0..<64 { for c in 0..<3 { data[0][i * b.stride + c] = Int16(i * 10 + c) } }
        let raw = try XCTUnwrap(list[0].mData)
        XCTAssertEqual(raw.load(fromByteOffset: (5 * 3 + 2) * 2, as: Int16.self), 52)
        b.frameLength = 0
        XCTAssertEqual(list[0].mDataByteSize, 0)
    }

    func testInt32AndFloat64Buffers() throws {
        let i32 = try XCTUnwrap(AudioPCMBuffer(pcmFormat: try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt32,
            sampleRate: 8000, channels: 2, interleaved: false)), frameCapacity: 10))
        XCTAssertNotNil(i32.int32ChannelData)
        XCTAssertNil(i32.floatChannelData)
        i32.frameLength = 10
        XCTAssertEqual(i32.audioBufferList.pointee.mBuffers.mDataByteSize, 40)

        // AVFAudio has no pointer accessor for doubles: only the buffer list reaches them.
        let f64 = try XCTUnwrap(AudioPCMBuffer(pcmFormat: try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatFloat64,
            sampleRate: 8000, channels: 1, interleaved: false)), frameCapacity: 10))
        XCTAssertNil(f64.floatChannelData)
        XCTAssertNil(f64.int16ChannelData)
        XCTAssertNil(f64.int32ChannelData)
        f64.frameLength = 3
        XCTAssertEqual(f64.audioBufferList.pointee.mBuffers.mDataByteSize, 24)
    }

    func testNonPCMFormatHasNoBuffer() {
        let packed = AudioFormat(streamFormat: StreamFormat(sampleRate: 48000, channelCount: 2, sampleType: .int24))
        XCTAssertNil(AudioPCMBuffer(pcmFormat: packed, frameCapacity: 16))
    }

    func testZeroCapacity() throws {
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)),
                                             frameCapacity: 0))
        XCTAssertEqual(b.frameCapacity, 0)
        b.frameLength = 0
        XCTAssertEqual(b.frameLength, 0)
    }

    func testFrameLengthAboveCapacityStopsTheProgramWithOneLine() throws {
        if TrapCheck.isChild {
            let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 1))
            let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 100))
            b.frameLength = 101
            return XCTFail("frameLength above the capacity was accepted")
        }
        let r = try TrapCheck.rerun("AudioGraphKitTests.AudioPCMBufferTests/testFrameLengthAboveCapacityStopsTheProgramWithOneLine")
        XCTAssertTrue(r.stoppedBySignal, r.standardError)
        // The message, once (the runtime's backtrace, when on, names the setter without it).
        let lines = r.lines(containing: "exceeds frameCapacity")
        XCTAssertEqual(lines.count, 1, r.standardError)
        XCTAssertTrue(lines.first?.hasSuffix("Fatal error: AudioPCMBuffer.frameLength: 101 exceeds frameCapacity 100") ?? false,
                      r.standardError)
    }
}
