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

// MARK: init(pcmFormat:bufferListNoCopy:deallocator:)

extension AudioPCMBufferTests {
    /// A caller's deinterleaved list of 2 × 256 floats: the buffer reads and writes that memory
    /// (no copy), holds 256 frames, and calls the deallocator once, with the caller's list, when
    /// it goes away.
    func testNoCopyBufferUsesTheCallersMemoryAndCallsTheDeallocator() throws {
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        let list = AudioBufferList.allocate(maximumBuffers: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        for i in 0..<256 { left[i] = Float(i); right[i] = -Float(i) }
        list[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: left)
        list[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: right)
        final class Released: @unchecked Sendable { var lists: [UnsafePointer<AudioBufferList>] = [] }
        let released = Released()
        do {
            let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, bufferListNoCopy: list.unsafePointer) { released.lists.append($0) })
            XCTAssertEqual(buffer.frameCapacity, 256)
            XCTAssertEqual(buffer.frameLength, 256)
            XCTAssertEqual(buffer.floatChannelData![0], left)
            XCTAssertEqual(buffer.floatChannelData![1][255], -255)
            buffer.floatChannelData![0][7] = 0.5
            XCTAssertEqual(left[7], 0.5)
            buffer.frameLength = 100
            XCTAssertEqual(buffer.audioBufferList.pointee.mBuffers.mDataByteSize, 400)
            XCTAssertEqual(list[0].mDataByteSize, 1024, "the caller's list is not changed")
            // It converts like any buffer.
            let mono = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 1, interleaved: true)!
            let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: mono, frameCapacity: 100))
            try XCTUnwrap(AudioConverter(from: format, to: mono)).convert(to: out, from: buffer)
            XCTAssertEqual(out.int16ChannelData![0][7], 16384)
            XCTAssertEqual(out.int16ChannelData![0][3], 32767)
            XCTAssertTrue(released.lists.isEmpty)
        }
        XCTAssertEqual(released.lists, [list.unsafePointer])
        left.deallocate(); right.deallocate(); free(list.unsafeMutablePointer)
    }

    /// An interleaved Int16 list is one buffer; lists that do not fit the format give nil.
    func testNoCopyBufferChecksTheListAgainstTheFormat() throws {
        let interleaved = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16000, channels: 2, interleaved: true)!
        let samples = UnsafeMutablePointer<Int16>.allocate(capacity: 20)
        for i in 0..<20 { samples[i] = Int16(i) }
        defer { samples.deallocate() }
        var one = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 40, mData: samples))
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: interleaved, bufferListNoCopy: &one))
        XCTAssertEqual(b.frameCapacity, 10)
        XCTAssertEqual(b.stride, 2)
        XCTAssertEqual(b.int16ChannelData![0][5], 5)
        // 40 bytes are not a whole number of 3-channel Int16 frames.
        XCTAssertNil(AudioPCMBuffer(pcmFormat: AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16000, channels: 3, interleaved: true)!,
                                    bufferListNoCopy: &one))
        // A deinterleaved stereo format needs two buffers.
        XCTAssertNil(AudioPCMBuffer(pcmFormat: AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16000, channels: 2, interleaved: false)!,
                                    bufferListNoCopy: &one))
        var empty = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 40, mData: nil))
        XCTAssertNil(AudioPCMBuffer(pcmFormat: interleaved, bufferListNoCopy: &empty))
        let uneven = AudioBufferList.allocate(maximumBuffers: 2)
        defer { free(uneven.unsafeMutablePointer) }
        uneven[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 8, mData: samples)
        uneven[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 4, mData: samples + 4)
        XCTAssertNil(AudioPCMBuffer(pcmFormat: AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16000, channels: 2, interleaved: false)!,
                                    bufferListNoCopy: uneven.unsafePointer))
    }
}
