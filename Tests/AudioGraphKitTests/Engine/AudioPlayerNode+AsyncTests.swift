// The async schedule calls of AudioPlayerNode (Apple's SDK shapes): each returns when its data has been consumed or rendered, with the callback type.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioPlayerNodeAsyncTests: XCTestCase {
    /// A manual engine rendered by a background thread in 480-frame pieces (1 ms apart) while
    /// the test awaits schedules; each await returns only once its frames have been rendered.
    func testAwaitedSchedulesReturnOnceTheirFramesAreRendered() async throws {
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        let engine = try makeManualEngine(format: format)
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: format)
        try engine.start()
        player.play()
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1000))
        buffer.frameLength = 1000
        for c in 0..<2 { for i in 0..<1000 { buffer.floatChannelData![c][i] = 0.25 } }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("ramp.wav").path
        let ramp = (0..<2400).map { Float($0) / 4800 }
        try TestFiles.writeSoundFile(path, [ramp, ramp], sampleRate: 48000)
        let file = try AudioFile(forReading: URL(fileURLWithPath: path))

        let rendered = Atomic<Int>(0), stop = Atomic<Bool>(false), loud = Atomic<Int>(0)
        let renderer = Thread {
            let out = AudioPCMBuffer(pcmFormat: format, frameCapacity: 480)!
            while !stop.load(ordering: .relaxed) {
                _ = try? engine.renderOffline(480, to: out)
                loud.add((0..<480).filter { out.floatChannelData![0][$0] != 0 }.count, ordering: .relaxed)
                rendered.add(480, ordering: .relaxed)
                usleep(1000)
            }
        }
        renderer.start()
        defer { stop.store(true, ordering: .relaxed) }

        var before = rendered.load(ordering: .relaxed)
        let type = await player.scheduleBuffer(buffer, completionCallbackType: .dataRendered)
        XCTAssertEqual(type, .dataRendered)
        XCTAssertGreaterThanOrEqual(rendered.load(ordering: .relaxed) - before, 1000 - 480, "returned before the buffer was rendered")
        XCTAssertGreaterThanOrEqual(loud.load(ordering: .relaxed), 1000)

        before = rendered.load(ordering: .relaxed)
        await player.scheduleFile(file, at: nil)
        XCTAssertGreaterThanOrEqual(rendered.load(ordering: .relaxed) - before, 2400 - 480)

        before = rendered.load(ordering: .relaxed)
        let segmentType = await player.scheduleSegment(file, startingFrame: 100, frameCount: 960, at: nil, completionCallbackType: .dataConsumed)
        XCTAssertEqual(segmentType, .dataConsumed)
        XCTAssertGreaterThanOrEqual(rendered.load(ordering: .relaxed) - before, 960 - 480)

        before = rendered.load(ordering: .relaxed)
        await player.scheduleBuffer(buffer, at: nil, options: [])
        XCTAssertGreaterThanOrEqual(rendered.load(ordering: .relaxed) - before, 1000 - 480)
        let fileType = await player.scheduleFile(file, at: nil, completionCallbackType: .dataRendered)
        XCTAssertEqual(fileType, .dataRendered)
        await player.scheduleSegment(file, startingFrame: 0, frameCount: 100, at: nil)
        await player.scheduleBuffer(buffer)
        let lastType = await player.scheduleBuffer(buffer, at: nil, options: [], completionCallbackType: .dataConsumed)
        XCTAssertEqual(lastType, .dataConsumed)
        // Frame 0 of the ramp is exactly 0: every other frame played was heard.
        XCTAssertGreaterThanOrEqual(loud.load(ordering: .relaxed), 1000 + 2399 + 960 + 1000 + 2399 + 99 + 1000 + 1000 - 2)
    }
}
