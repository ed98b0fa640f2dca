// The engine API's render path allocates, frees and locks nothing while a control thread edits the engine.
import AudioGraphRealtime
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioEngineRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// A `.realtime` manual engine rendered by its block on a tracked, marked thread (as an
    /// application's audio callback would) while this thread changes volumes and pans, re-patches
    /// with `performChanges`, installs and removes a tap, and schedules buffers on a player: the
    /// render thread must allocate, free and lock nothing (pthread locks and ControlLocks).
    func testManualRealtimeRenderWhileTheControlThreadEditsTheEngine() throws {
        let engine = AudioEngine()
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        try engine.enableManualRenderingMode(.realtime, format: format, maximumFrameCount: 256)
        let a = makeSineSource(frequency: 300), b = makeSineSource(frequency: 500, channels: 1)
        let player = AudioPlayerNode(), delay = AudioUnitDelay(), eq = AudioUnitEQ(numberOfBands: 2)
        let sink = AudioSinkNode { _, frames, _ in frames > 0 ? noErr : -1 }
        let timePitch = AudioUnitTimePitch()
        [a, b, player, delay, eq, sink, timePitch].forEach(engine.attach)
        engine.connect(a, to: timePitch, format: nil)
        engine.connect(timePitch, to: delay, format: nil)
        engine.connect(delay, to: engine.mainMixerNode, format: nil)
        engine.connect(player, to: engine.mainMixerNode, format: format)
        engine.connect(b, to: [AudioConnectionPoint(node: eq, bus: 0), AudioConnectionPoint(node: sink, bus: 0)],
                       fromBus: 0, format: nil)
        engine.connect(eq, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let block = try XCTUnwrap(engine.manualRenderingBlock)
        let clip = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 2400))
        clip.frameLength = 2400

        final class RenderThreadState: @unchecked Sendable {
            let stop = Atomic<Bool>(false), slices = Atomic<Int>(0), audible = Atomic<Int>(0)
        }
        let state = RenderThreadState()
        let list = AudioBufferList.allocate(maximumBuffers: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { free(list.unsafeMutablePointer); left.deallocate(); right.deallocate() }
        list[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: UnsafeMutableRawPointer(left))
        list[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: 1024, mData: UnsafeMutableRawPointer(right))
        let listBits = Int(bitPattern: list.unsafeMutablePointer), leftBits = Int(bitPattern: left)

        var lists = 0
        let until = Date().addingTimeInterval(3)
        var edits = 0
        let run = try RealTimeScaffold.runRenderThread(warmUp: {
            var status: OSStatus = 0
            for _ in 0..<8 { _ = block(256, UnsafeMutablePointer<AudioBufferList>(bitPattern: listBits)!, &status) }
        }, render: {
            let abl = UnsafeMutablePointer<AudioBufferList>(bitPattern: listBits)!
            let l = UnsafeMutablePointer<Float>(bitPattern: leftBits)!
            var status: OSStatus = 0
            while !state.stop.load(ordering: .acquiring) {
                _ = block(256, abl, &status)
                state.slices.wrappingAdd(1, ordering: .relaxed)
                if l[17] != 0 { state.audible.wrappingAdd(1, ordering: .relaxed) }
                usleep(200)
            }
        }, whileRendering: { step in
            guard Date() < until else {
                engine.mainMixerNode.removeTap(onBus: 0)
                state.stop.store(true, ordering: .releasing)
                return
            }
            edits = step
            a.volume = Float(step % 5) / 4
            b.pan = Float(step % 21) / 10 - 1
            engine.mainMixerNode.outputVolume = 0.5 + Float(step % 3) / 4
            eq.bands[0].gain = Float(step % 12)
            timePitch.pitch = Float(step % 7) * 100 - 300
            timePitch.rate = 0.75 + Float(step % 4) / 4
            if step % 10 == 0 {
                try engine.performChanges {
                    if step % 20 == 0 {
                        engine.disconnectNodeOutput(delay)
                    } else {
                        engine.connect(delay, to: engine.mainMixerNode, fromBus: 0, toBus: 0, format: nil)
                    }
                    delay.wetDryMix = Float(step % 100)
                }
                lists += 1
            }
            if step % 25 == 0 {
                engine.mainMixerNode.installTap(onBus: 0, bufferSize: 1000, format: nil) { _, _ in }
            } else if step % 25 == 12 {
                engine.mainMixerNode.removeTap(onBus: 0)
            }
            if step % 15 == 0 { player.scheduleBuffer(clip, completionHandler: nil) }
            if step == 5 { player.play() }
            usleep(2000)
        })
        engine.stop()
        print("engine real-time safety: \(state.slices.load(ordering: .relaxed)) slices "
              + "(\(state.audible.load(ordering: .relaxed)) audible), \(lists) change lists, \(edits) edits; render thread: \(run.counts)")
        XCTAssertGreaterThan(state.slices.load(ordering: .relaxed), 1000)
        XCTAssertGreaterThan(lists, 20)
        XCTAssertGreaterThan(state.audible.load(ordering: .relaxed), 100)
        XCTAssertNil(run.counts.violation, "the engine's render path")
    }

    /// A `.realtime` manual engine whose input node takes an Int16 interleaved input block
    /// (setManualRenderingInputPCMFormat), through an AudioUnitDistortion preset, rendered by
    /// its block on a tracked, marked thread for 600 slices (a preset loaded and the mix moved
    /// halfway): nothing allocated, freed or locked, and the input heard.
    func testManualRealtimeInputBlockThroughADistortionAllocatesNothing() throws {
        let engine = AudioEngine()
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        try engine.enableManualRenderingMode(.realtime, format: format, maximumFrameCount: 256)
        let inputFormat = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: true))
        let samples = UnsafeMutablePointer<Int16>.allocate(capacity: 512)
        let input = AudioBufferList.allocate(maximumBuffers: 1)
        defer { samples.deallocate(); free(input.unsafeMutablePointer) }
        for i in 0..<512 { samples[i] = Int16((i * 97) % 20_000 - 10_000) }
        input[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: 1024, mData: UnsafeMutableRawPointer(samples))
        let inputList = UnsafePointer(input.unsafeMutablePointer)
        XCTAssertTrue(engine.inputNode.setManualRenderingInputPCMFormat(inputFormat) { _ in inputList })
        let distortion = AudioUnitDistortion()
        distortion.loadFactoryPreset(.multiEverythingIsBroken)
        engine.attach(distortion)
        engine.connect(engine.inputNode, to: distortion, format: nil)
        engine.connect(distortion, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let block = try XCTUnwrap(engine.manualRenderingBlock)
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 256))
        out.frameLength = 256
        var status: OSStatus = 0
        for _ in 0..<8 { _ = block(256, out.mutableAudioBufferList, &status) }
        var counts = RealTimeScaffold.Counts(), audible = 0
        for i in 0..<600 {
            if i == 300 {
                distortion.loadFactoryPreset(.speechAlienChatter)
                distortion.wetDryMix = 80
            }
            counts += RealTimeScaffold.count { _ = block(256, out.mutableAudioBufferList, &status) }.counts
            if out.floatChannelData![0][100] != 0 { audible += 1 }
        }
        XCTAssertEqual(status, noErr)
        XCTAssertNil(counts.violation)
        XCTAssertGreaterThan(audible, 550)
    }
}
