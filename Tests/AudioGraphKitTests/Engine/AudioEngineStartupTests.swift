// Tests that the live engine sounds from its first quantum: start-to-sound time and .dataPlayedBack of a 2 s buffer.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioEngineStartupTests: DefaultPulseServerTestCase {
    /// A player started right after `start()` is heard within the output's latency + 10 ms of
    /// `play()` (plus the listener's own 5 ms capture), three times in a row.
    func testAPlayerStartedRightAfterStartIsHeardWithinTheLatency() throws {
        for run in 0..<3 {
            let listener = try MonitorListener(server: server.serverString, source: server.monitorSourceName)
            defer { listener.stop() }
            usleep(200_000)
            let engine = AudioEngine()
            let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
            let player = AudioPlayerNode()
            engine.attach(player)
            engine.connect(player, to: engine.mainMixerNode, format: format)
            let tone = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 48_000))
            tone.frameLength = 48_000
            for i in 0..<48_000 {
                tone.floatChannelData![0][i] = sineSample(Int64(i + 1), frequency: 1000, rate: 48000)
                tone.floatChannelData![1][i] = tone.floatChannelData![0][i]
            }
            let startedAt = AudioTime.currentHostTime
            try engine.start()
            let startReturned = AudioTime.currentHostTime
            player.scheduleBuffer(tone, completionHandler: nil)
            player.play()
            let playedAt = AudioTime.currentHostTime
            usleep(1_000_000)
            let rendered = engine.outputNode.lastRenderTime?.sampleTime ?? -1
            let latency = engine.outputNode.presentationLatency
            engine.stop()
            let heard = try XCTUnwrap(listener.firstSoundHostTime(), "run \(run): nothing was heard")
            let toSound = Double(Int64(heard) - Int64(playedAt)) / 1e9
            print(String(format: "startup run %d: start() %.1f ms, play() to sound %.1f ms (latency %.1f ms), "
                         + "%d frames rendered in the first second", run, Double(startReturned - startedAt) / 1e6,
                         toSound * 1000, latency * 1000, rendered))
            XCTAssertLessThanOrEqual(toSound, latency + 0.010 + 0.006, "run \(run): heard \(toSound * 1000) ms after play()")
            XCTAssertGreaterThan(rendered, 44_000, "run \(run): the output renders in real time from the start")
        }
    }

    /// A 2 s buffer scheduled with `.dataPlayedBack` right after `start()` completes within
    /// 2 s + the output's latency + 50 ms of `play()`.
    func testATwoSecondBufferIsPlayedBackWithinItsLengthPlusTheLatency() throws {
        for run in 0..<3 {
            let engine = AudioEngine()
            let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
            let player = AudioPlayerNode()
            engine.attach(player)
            engine.connect(player, to: engine.mainMixerNode, format: format)
            let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 96_000))
            buffer.frameLength = 96_000
            let done = Atomic<UInt64>(0)
            try engine.start()
            player.scheduleBuffer(buffer, completionCallbackType: .dataPlayedBack) { _ in
                done.store(AudioTime.currentHostTime, ordering: .relaxed)
            }
            player.play()
            let playedAt = AudioTime.currentHostTime
            let deadline = Date().addingTimeInterval(5)
            while done.load(ordering: .relaxed) == 0 && Date() < deadline { usleep(1000) }
            let latency = engine.outputNode.presentationLatency
            engine.stop()
            let end = done.load(ordering: .relaxed)
            XCTAssertNotEqual(end, 0, "run \(run): the handler never ran")
            let took = Double(Int64(end) - Int64(playedAt)) / 1e9
            print(String(format: "played-back run %d: 2 s buffer done after %.3f s (latency %.1f ms)", run, took, latency * 1000))
            XCTAssertLessThanOrEqual(took, 2 + latency + 0.050, "run \(run)")
            XCTAssertGreaterThanOrEqual(took, 2, "run \(run): done before it could have been played")
        }
    }
}
