// AudioPlayer's render side allocates, frees and locks nothing while the control side seeks, fades, pauses and loops.
import AudioGraphRealtime
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioPlayerRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    func testRenderingWhileTheControlThreadSeeksFadesPausesAndLoops() throws {
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        let sound = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 4800))
        sound.frameLength = 4800
        for c in 0..<2 { for i in 0..<4800 { sound.floatChannelData![c][i] = Float(i % 100) / 100 } }
        let state = AudioPlayerRenderState(buffer: sound)
        state.loopsRemaining.store(-1, ordering: .relaxed)
        state.isPlaying.store(true, ordering: .relaxed)

        final class Results: @unchecked Sendable {
            let stop = Atomic<Bool>(false), slices = Atomic<Int>(0), audible = Atomic<Int>(0)
        }
        let results = Results()
        let list = AudioBufferList.allocate(maximumBuffers: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let silence = UnsafeMutablePointer<ObjCBool>.allocate(capacity: 1)
        defer { free(list.unsafeMutablePointer); left.deallocate(); right.deallocate(); silence.deallocate() }
        list[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: left)
        list[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: right)
        let listBits = Int(bitPattern: list.unsafeMutablePointer), leftBits = Int(bitPattern: left), silenceBits = Int(bitPattern: silence)
        let abl: @Sendable () -> UnsafeMutableAudioBufferListPointer = { UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer<AudioBufferList>(bitPattern: listBits)!) }
        let isSilence: @Sendable () -> UnsafeMutablePointer<ObjCBool> = { UnsafeMutablePointer<ObjCBool>(bitPattern: silenceBits)! }
        let until = Date().addingTimeInterval(2)
        let run = RealTimeScaffold.runRenderThread(warmUp: {
            for _ in 0..<8 { _ = state.render(isSilence: isSilence(), hostTime: 1, frameCount: 256, output: abl()) }
        }, render: {
            let output = abl(), silent = isSilence()
            let l = UnsafeMutablePointer<Float>(bitPattern: leftBits)!
            while !results.stop.load(ordering: .acquiring) {
                _ = state.render(isSilence: silent, hostTime: 1, frameCount: 256, output: output)
                results.slices.wrappingAdd(1, ordering: .relaxed)
                // (A plain test of a few frames: `contains(where:)` allocates in a debug build.)
                if l[17] != 0 || l[100] != 0 || l[200] != 0 { results.audible.wrappingAdd(1, ordering: .relaxed) }
                usleep(200)
            }
        }, whileRendering: { step in
            if Date() >= until {
                state.isPlaying.store(true, ordering: .releasing)
                usleep(20_000)
                results.stop.store(true, ordering: .releasing)
                return
            }
            if step % 3 == 0 { state.seek(to: (step * 37) % 4800) }
            if step % 5 == 0 { state.fade(to: Float(step % 4) / 3, frames: step % 2 == 0 ? 0 : 1000) }
            if step % 7 == 0 { state.isPlaying.store(step % 14 != 0, ordering: .releasing) }
            usleep(1000)
        })
        print("AudioPlayer render: \(results.slices.load(ordering: .relaxed)) slices, \(results.audible.load(ordering: .relaxed)) audible; "
              + "\(run.counts)")
        XCTAssertGreaterThan(results.slices.load(ordering: .relaxed), 100)
        XCTAssertGreaterThan(results.audible.load(ordering: .relaxed), 50)
        XCTAssertNil(run.counts.violation)
    }
}
