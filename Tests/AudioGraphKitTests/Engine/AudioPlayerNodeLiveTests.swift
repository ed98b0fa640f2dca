// Tests of AudioPlayerNode playing live to a private PulseAudio server: bit-exact output, played-back handlers after the latency.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioPlayerNodeLiveTests: DefaultPulseServerTestCase {
    /// A 0.5 s buffer played live reaches the sink bit for bit; an empty buffer scheduled after it
    /// ends on the same frame, and its `.dataPlayedBack` handler runs the output's latency after
    /// the buffer's `.dataRendered` handler.
    func testLivePlaybackIsExactAndPlayedBackWaitsForTheOutputLatency() throws {
        let engine = AudioEngine()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: format)
        let frames = 24_000
        let tone = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(frames)))
        tone.frameLength = AudioFrameCount(frames)
        for i in 0..<frames {
            tone.floatChannelData![0][i] = sineSample(Int64(i + 1), frequency: 1000, rate: 48000)
            tone.floatChannelData![1][i] = -sineSample(Int64(i + 1), frequency: 1000, rate: 48000)
        }
        let empty = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1))
        let times = Mutex<[String: UInt64]>([:])
        let file = server.directory.appendingPathComponent("player.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        try engine.start()
        usleep(300_000)   // the output reports its latency once it runs
        player.scheduleBuffer(tone, at: nil, options: [], completionCallbackType: .dataRendered) { _ in
            times.withLock { $0["rendered"] = AudioTime.currentHostTime }
        }
        player.scheduleBuffer(empty, at: nil, options: [], completionCallbackType: .dataPlayedBack) { _ in
            times.withLock { $0["playedBack"] = AudioTime.currentHostTime }
        }
        let latency = player.outputPresentationLatency
        player.play()
        let deadline = Date().addingTimeInterval(3)
        while times.withLock({ $0.count }) < 2 && Date() < deadline { usleep(2000) }
        usleep(200_000)
        engine.stop()
        usleep(300_000)
        server.stopChild(recorder)

        let t = times.withLock { $0 }
        let rendered = try XCTUnwrap(t["rendered"]), playedBack = try XCTUnwrap(t["playedBack"])
        let delay = Double(Int64(playedBack) - Int64(rendered)) / 1e9
        print("player live: output latency \(latency * 1000) ms; played-back handler \(delay * 1000) ms after the rendered one")
        XCTAssertGreaterThan(latency, 0.005, "the engine reports the output latency")
        XCTAssertGreaterThan(delay, latency * 0.8, "the played-back handler did not wait for the latency")
        XCTAssertLessThan(delay, latency + 0.25)

        let samples = try PulseTestServer.readRawFloat32(file)
        let recorded = samples.count / 2
        let first = try XCTUnwrap((0..<recorded).first { samples[2 * $0] != 0 }, "silent recording")
        var matching = 0
        while matching < frames, first + matching < recorded,
              samples[2 * (first + matching)] == tone.floatChannelData![0][matching],
              samples[2 * (first + matching) + 1] == tone.floatChannelData![1][matching] {
            matching += 1
        }
        XCTAssertEqual(matching, frames, "the live output departs from the buffer at frame \(matching)")
        XCTAssertTrue((first + frames..<min(recorded, first + frames + 4800)).allSatisfy { samples[2 * $0] == 0 },
                      "something played after the buffer")
    }
}
