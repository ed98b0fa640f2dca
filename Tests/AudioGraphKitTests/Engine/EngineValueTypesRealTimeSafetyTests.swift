// Proves the engine value types' render-path members allocate nothing and take no lock.
import AudioGraphKit
import AudioGraphTesting
import XCTest

final class EngineValueTypesRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// What a render callback does with the value types, for every common format and layout:
    /// set frameLength, take the channel pointers and the buffer list, walk and rewrite the list,
    /// copy core float channels in and out (with conversion), read the host clock.
    func testRenderPathMembersAllocateNothingAndTakeNoLock() throws {
        let core = ChannelBufferStorage(channelCount: 2, capacity: 512)
        for i in 0..<512 { core.list.channel(0)[i] = Float(i) / 512; core.list.channel(1)[i] = -Float(i) / 512 }
        var buffers: [AudioPCMBuffer] = []
        for common in [AudioCommonFormat.pcmFormatFloat32, .pcmFormatFloat64, .pcmFormatInt16, .pcmFormatInt32] {
            for interleaved in [false, true] {
                let format = try XCTUnwrap(AudioFormat(commonFormat: common, sampleRate: 48000, channels: 2, interleaved: interleaved))
                buffers.append(try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 512)))
            }
        }
        let list = AudioBufferList.allocate(maximumBuffers: 2)
        defer { free(list.unsafeMutablePointer) }

        var checksum: Float = 0, bytes: UInt32 = 0, host: UInt64 = 0
        func slice(_ round: Int) {
            let n = 64 + round % 400
            for index in 0..<buffers.count {   // not `for b in buffers`: its debug-build iterator allocates
                let b = buffers[index]
                b.copyFrames(from: core.list, sourceFrame: 0, toFrame: 0, frameCount: n)
                b.frameLength = AudioFrameCount(n)
                if let f = b.floatChannelData { checksum += f[0][1] }
                if let s = b.int16ChannelData { checksum += Float(s[0][2]) }
                if let s = b.int32ChannelData { checksum += Float(s[0][3] >> 16) }
                let abl = UnsafeMutableAudioBufferListPointer(b.mutableAudioBufferList)
                for buffer in abl { bytes &+= buffer.mDataByteSize }
                b.copyFrames(to: core.list, destinationFrame: 0, fromFrame: 0, frameCount: n)
            }
            list.point(at: core.list, frame: 8, frameCount: n, maximumBuffers: 2)
            for i in list.indices { bytes &+= list[i].mDataByteSize }
            host &+= AudioTime.currentHostTime
        }
        for round in 0..<4 { slice(round) }   // warm up (first-touch witness tables of the test's own loops)
        let counts = RealTimeScaffold.count { for round in 0..<200 { slice(round) } }.counts
        XCTAssertNil(counts.violation)
        XCTAssertNotEqual(checksum, 0)
        XCTAssertGreaterThan(bytes, 0)
        XCTAssertGreaterThan(host, 0)
    }
}
