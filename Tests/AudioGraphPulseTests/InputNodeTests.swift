// Tests of InputNode: a graph whose source is a real PulseAudio capture.
import AudioGraphKit
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

final class InputNodeTests: XCTestCase {
    /// pacat plays a 440 Hz tone into the null sink; input(monitor) → genericOutput is pulled slice
    /// by slice as captured audio arrives; the output carries the tone bit for bit.
    func testInputNodeDeliversCapturedAudioIntoTheGraph() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let count = 96_000
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            let s = sin(2 * Double.pi * 440 * Double(n) / 48000 + 0.7)
            interleaved[2 * n] = Float(0.4 * s)
            interleaved[2 * n + 1] = Float(-0.3 * s)
        }
        let file = server.directory.appendingPathComponent("tone.raw")
        try interleaved.withUnsafeBytes { try Data($0).write(to: file) }

        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 480)
        let input = InputNode(id: "mic", properties: InputProperties(device: server.monitorSourceName, channels: 2, latency: 50))
        input.pulseContext = context
        try graph.addNode(input)
        try graph.addNode(GenericOutputNode(id: "out"))
        try graph.connect("mic", to: "out")
        try graph.initialize()
        try input.startCapture()
        try graph.start()
        let player = try server.startPlaying(file: file)
        var left: [Float] = [], right: [Float] = []
        let end = Date().addingTimeInterval(2.8)
        let capture = try XCTUnwrap(input.captureStream)
        // This test's reader is an ordinary thread on a shared machine: let a stall of up to
        // 0.4 s wait in the ring instead of being dropped as drift (the data path is checked here).
        capture.setBacklogLimit(frames: 19_200)
        while Date() < end {
            while capture.readableFrames >= 480 {
                let result = try XCTUnwrap(graph.render(frameCount: 480))
                left.append(contentsOf: UnsafeBufferPointer(start: result.buffer.channel(0), count: 480))
                right.append(contentsOf: UnsafeBufferPointer(start: result.buffer.channel(1), count: 480))
            }
            usleep(2_000)
        }
        graph.stop()
        input.stopCapture()
        server.stopChild(player)

        let first = try XCTUnwrap(left.firstIndex { $0 != 0 }, "captured only silence")
        var matching = 0
        while first + matching < left.count, matching < count,
              left[first + matching] == interleaved[2 * matching], right[first + matching] == interleaved[2 * matching + 1] {
            matching += 1
        }
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: Array(left[(first + 12000)..<(first + 60000)]), sampleRate: 48000))
        print(String(format: "input node: %d of %d frames bit-identical; fit %.6f Hz amplitude %.7f; capture underruns %d overruns %d dropped %d",
                     matching, count, fit.tones[0].frequency, fit.tones[0].amplitude, capture.underrunCount, capture.overrunCount,
                     capture.droppedFrames))
        XCTAssertEqual(matching, count)
        XCTAssertEqual(fit.tones[0].frequency, 440, accuracy: 0.001)
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 1e-5)
        XCTAssertEqual(capture.overrunCount, 0)
        XCTAssertEqual(capture.droppedFrames, 0)
    }

    /// A different tone on each channel of the null sink, captured from its monitor through
    /// `channelMap` `[1, 0]` (swapped) and `[1]` (the right channel alone): each output channel is
    /// the mapped source channel bit for bit.
    func testChannelMapPicksAndReordersCapturedChannels() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let count = 48_000
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            interleaved[2 * n] = Float(0.4 * sin(2 * Double.pi * 440 * Double(n) / 48000 + 0.7))
            interleaved[2 * n + 1] = Float(0.3 * sin(2 * Double.pi * 1000 * Double(n) / 48000 + 0.3))
        }
        let file = server.directory.appendingPathComponent("tones.raw")
        try interleaved.withUnsafeBytes { try Data($0).write(to: file) }
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }

        for map in [[1, 0], [1]] {
            let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 480)
            let input = InputNode(id: "mic", properties: InputProperties(device: server.monitorSourceName, channels: 2,
                                                                         latency: 50, channelMap: map))
            input.pulseContext = context
            try graph.addNode(input)
            try graph.addNode(GenericOutputNode(id: "out"))
            try graph.connect("mic", to: "out")
            try graph.initialize()
            XCTAssertEqual(input.outputFormats[0].channelCount, map.count, "\(map)")
            try input.startCapture()
            try graph.start()
            let player = try server.startPlaying(file: file)
            var captured = [[Float]](repeating: [], count: map.count)
            let capture = try XCTUnwrap(input.captureStream)
            capture.setBacklogLimit(frames: 19_200)
            let end = Date().addingTimeInterval(1.8)
            // The render calls (capture read and channel mapping) allocate nothing and take no mutex
            // after the first (which meets the Swift runtime's one-time metadata set-up).
            RealTimeScaffold.reset(controlLocks: false)
            var slices = 0
            while Date() < end {
                while capture.readableFrames >= 480 {
                    RealTimeScaffold.trackCurrentThread(slices > 0)
                    let rendered = graph.render(frameCount: 480)
                    RealTimeScaffold.trackCurrentThread(false)
                    slices += 1
                    let result = try XCTUnwrap(rendered)
                    XCTAssertEqual(result.buffer.channelCount, map.count)
                    for c in 0..<map.count {
                        captured[c].append(contentsOf: UnsafeBufferPointer(start: result.buffer.channel(c), count: 480))
                    }
                }
                usleep(2_000)
            }
            graph.stop()
            input.stopCapture()
            server.stopChild(player)

            let first = try XCTUnwrap(captured[0].firstIndex { $0 != 0 }, "\(map): captured only silence")
            var matching = 0
            while first + matching < captured[0].count, matching < count,
                  (0..<map.count).allSatisfy({ captured[$0][first + matching] == interleaved[2 * matching + map[$0]] }) {
                matching += 1
            }
            print("input channelMap \(map): \(matching) of \(count) frames bit-identical to the mapped source channels")
            XCTAssertEqual(matching, count, "\(map)")
            XCTAssertEqual(capture.droppedFrames, 0)
            if RealTimeScaffold.isCounting {
                XCTAssertEqual(RealTimeScaffold.current().allocations, 0, "\(map): rendering allocated")
                XCTAssertEqual(RealTimeScaffold.current().frees, 0, "\(map): rendering freed memory")
                XCTAssertEqual(RealTimeScaffold.current().locks, 0, "\(map): rendering took a mutex")
            }
        }
    }

    /// Without a PulseAudio context (an offline render) the node outputs flagged silence.
    func testWithoutContextInitializeFailsUnlessSilenceIsMeant() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 64)
        let mic = InputNode(id: "mic")
        try graph.addNode(mic)
        try graph.addNode(GenericOutputNode(id: "out"))
        try graph.connect("mic", to: "out")
        XCTAssertThrowsError(try graph.initialize()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("mic") && text.contains("no PulseAudio context"), text)
        }
        mic.rendersSilenceWithoutContext = true
        try graph.initialize()
        try graph.start()
        let result = try XCTUnwrap(graph.render(frameCount: 64))
        XCTAssertTrue(result.isSilent)
        XCTAssertEqual(result.buffer.channelCount, 2)
        XCTAssertTrue((0..<64).allSatisfy { result.buffer.channel(0)[$0] == 0 && result.buffer.channel(1)[$0] == 0 })
        graph.stop()
    }
}
