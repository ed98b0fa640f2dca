// AudioPCMBuffer's package helpers: copying to and from the core's float ChannelBufferList with conversion.
import AudioGraphKit
import XCTest

final class AudioPCMBufferChannelBufferListTests: XCTestCase {
    /// Independent reference for float -> int16: round half to even of x·32768, clipped.
    private func int16(_ x: Float) -> Int16 {
        Int16(max(-32768, min(32767, (Double(x) * 32768).rounded(.toNearestOrEven))))
    }

    func testCopyIntoInterleavedInt16AndBack() throws {
        let source = ChannelBufferStorage(channelCount: 2, capacity: 32)
        let values: [Float] = [0, 0.5, -0.5, 1.0, -1.0, 0.25, 1e-5, -0.999, 2.0, -3.0]
        for i in 0..<32 {
            source.list.channel(0)[i] = values[i % values.count]
            source.list.channel(1)[i] = -values[(i + 3) % values.count]
        }
        let format = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 3, interleaved: true))
        // 10 frames from frame 5; the third channel, which the source lacks, is silence.
        let b = try XCTUnwrap(AudioPCMBuffer(copying: source.list, sourceFrame: 5, frameCount: 10, format: format))
        XCTAssertEqual(b.frameLength, 10)
        let d = try XCTUnwrap(b.int16ChannelData)[0]
        for i in 0..<10 {
            XCTAssertEqual(d[i * 3], int16(source.list.channel(0)[i + 5]), "frame \(i)")
            XCTAssertEqual(d[i * 3 + 1], int16(source.list.channel(1)[i + 5]), "frame \(i)")
            XCTAssertEqual(d[i * 3 + 2], 0)
        }
        // Back into floats at frame 4 of a one-channel destination: x = int / 32768.
        let back = ChannelBufferStorage(channelCount: 1, capacity: 20)
        b.copyFrames(to: back.list, destinationFrame: 4, fromFrame: 2, frameCount: 8)
        for i in 0..<8 { XCTAssertEqual(back.list.channel(0)[4 + i], Float(Double(d[(i + 2) * 3]) / 32768)) }
        XCTAssertEqual(back.list.channel(0)[3], 0)
    }

    func testFloatRoundTripIsExactAndMissingChannelsAreZeroed() throws {
        let source = ChannelBufferStorage(channelCount: 1, capacity: 16)
        for i in 0..<16 { source.list.channel(0)[i] = Float(i) * 0.1 - 0.7 }
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 1))
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 16))
        b.copyFrames(from: source.list, sourceFrame: 0, toFrame: 0, frameCount: 16)
        let out = ChannelBufferStorage(channelCount: 2, capacity: 16)
        for i in 0..<16 { out.list.channel(1)[i] = 9 }
        b.copyFrames(to: out.list, destinationFrame: 0, fromFrame: 0, frameCount: 16)
        for i in 0..<16 {
            XCTAssertEqual(out.list.channel(0)[i], source.list.channel(0)[i])
            XCTAssertEqual(out.list.channel(1)[i], 0)
        }
    }

    func testInt32AndFloat64Conversions() throws {
        let source = ChannelBufferStorage(channelCount: 1, capacity: 4)
        let xs: [Float] = [0.5, -0.25, 1.0, -1.0]
        for i in 0..<4 { source.list.channel(0)[i] = xs[i] }
        let i32 = try XCTUnwrap(AudioPCMBuffer(copying: source.list, sourceFrame: 0, frameCount: 4,
            format: try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt32, sampleRate: 8000, channels: 1, interleaved: false))))
        XCTAssertEqual(Array(UnsafeBufferPointer(start: try XCTUnwrap(i32.int32ChannelData)[0], count: 4)),
                       [1_073_741_824, -536_870_912, Int32.max, Int32.min])
        let f64 = try XCTUnwrap(AudioPCMBuffer(copying: source.list, sourceFrame: 0, frameCount: 4,
            format: try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatFloat64, sampleRate: 8000, channels: 1, interleaved: false))))
        let doubles = try XCTUnwrap(f64.audioBufferList.pointee.mBuffers.mData).assumingMemoryBound(to: Double.self)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: doubles, count: 4)), xs.map(Double.init))
    }
}
