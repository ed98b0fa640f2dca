// Tests of PulsePlaybackStream against a real private PulseAudio daemon (null sink + parec).
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

final class PulsePlaybackStreamTests: PulseServerTestCase {
    /// Waits until `pactl list short <kind>` lists at least `count` entries.
    private func waitForClients(_ kind: String, count: Int = 1, timeout: Double = 5) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let lines = try server.run("pactl", ["list", "short", kind]).output.split(separator: "\n")
            if lines.count >= count { return }
            usleep(20_000)
        }
        XCTFail("no \(kind) appeared")
    }


    /// Plays 2 s of a 1 kHz sine (left) and frame-indexed white noise (right), records the null
    /// sink's monitor with parec, checks the sine's frequency and level by a least-squares fit,
    /// and every recorded frame after alignment against the formulas, bit for bit.
    ///
    /// Alignment: the recording is searched for the first 256 frames of the noise; everything
    /// before that must be silence except a short pre-roll: when a stream starts, the null sink
    /// has already rendered silence for it, rewinds and renders again, and its monitor has by
    /// then delivered the pre-rewind render (a fragment of our first frames) to parec. That is
    /// PulseAudio's behaviour, measured and bounded here (at most one server buffer). With the
    /// fixture's null sink (norewinds=1) and our corked start it is 0.
    func testLoopbackThroughNullSinkIsBitIdentical() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let file = server.directory.appendingPathComponent("loopback.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        try waitForClients("source-outputs", count: server.ownSourceOutputs + 1)
        usleep(200_000)

        let tone = TestTone(frequency: 1000, amplitudes: [0.5, 0.25], noiseChannel: 1)
        // 100 ms: this test checks the data path bit for bit, so it must not underrun on a
        // loaded shared machine; the 20 ms case is measured by testLatencyRequestedVersusReported.
        let stream = try PulsePlaybackStream(context: context,
                                             configuration: PulseStreamConfiguration(latencyMilliseconds: 100),
                                             render: tone.render)
        try stream.start()
        Thread.sleep(forTimeInterval: 2.0)
        let latency = stream.latency()
        let underruns = stream.underrunCount
        let realtime = stream.hasRealtimePriority
        stream.stop()
        let rendered = stream.renderedFrames
        usleep(300_000)
        server.stopChild(recorder)

        let samples = try PulseTestServer.readRawFloat32(file)
        let frames = samples.count / 2
        guard let firstSound = (0..<frames).first(where: { samples[2 * $0] != 0 }) else {
            return XCTFail("the recording is silent (\(frames) frames)")
        }
        let head = (0..<256).map { tone.sample(channel: 1, frame: Int64($0)) }
        guard let start = (firstSound..<max(firstSound, frames - 256)).first(where: { at in
            (0..<256).allSatisfy { samples[2 * (at + $0) + 1] == head[$0] }
        }) else {
            return XCTFail("the first 256 played frames are nowhere in the recording")
        }
        let preRoll = start - firstSound
        // Every frame from the aligned start must equal the formulas until playback was cut by
        // stop(); after that the monitor must be exact silence (no glitch, no gap, no repeat).
        var matching = 0
        while start + matching < frames,
              samples[2 * (start + matching)] == tone.sample(channel: 0, frame: Int64(matching)),
              samples[2 * (start + matching) + 1] == tone.sample(channel: 1, frame: Int64(matching)) {
            matching += 1
        }
        let trailingNonZero = samples[(2 * (start + matching))...].filter { $0 != 0 }.count
        print("loopback: rendered \(rendered) frames, recorded \(frames), first sound at frame \(firstSound), "
              + "pre-roll \(preRoll) frames, \(matching) frames bit-identical, \(trailingNonZero) non-zero samples after the cut; "
              + "latency \(latency.map { "\($0.server * 1000) ms server + \($0.ring * 1000) ms ring" } ?? "n/a"), "
              + "underruns \(underruns), realtime thread \(realtime)")
        XCTAssertLessThanOrEqual(preRoll, 4800, "pre-roll longer than the 100 ms buffer")
        XCTAssertGreaterThan(matching, Int(1.9 * 48000), "fewer than 1.9 s of bit-identical samples")
        XCTAssertLessThanOrEqual(matching, rendered)
        XCTAssertEqual(trailingNonZero, 0, "the recording continues with something other than silence at frame \(matching)")
        XCTAssertEqual(underruns, 0)

        let window = (0..<48000).map { samples[2 * (start + 24000 + $0)] }
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: window, sampleRate: 48000))
        print(String(format: "loopback fit: %.6f Hz, amplitude %.7f (%.3f dBFS), residual RMS %.2e",
                     fit.tones[0].frequency, fit.tones[0].amplitude, 20 * log10(fit.tones[0].amplitude), fit.residualRMS))
        XCTAssertEqual(fit.tones[0].frequency, 1000, accuracy: 0.001)
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 1e-5)
        XCTAssertLessThan(fit.residualRMS, 1e-6)
    }

    /// The requested target latency reaches the server as tlength and minreq as an eighth of it
    /// (at least 2.5 ms); with early requests the server keeps the queue between tlength − minreq
    /// and tlength and runs the sink one request ahead, so the server part of the reported latency
    /// lies within a request of tlength; our ring adds at most its capacity.
    ///
    /// The reported figures describe the queue only in a second with no underrun: when the machine
    /// starves the server or us, the queue runs low and the mean falls with it (under load:
    /// 48.0 ms reported at 60 ms with 1 underrun, 8.2 ms at 20 ms with 5). Such a second is
    /// repeated, up to 4 times; if every one had underruns the result is inconclusive (skip,
    /// after the other latency was checked). The stream's configuration is asserted every time.
    func testLatencyRequestedVersusReported() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        var starved: [String] = []
        for (requested, request) in [(20.0, 2.5), (60.0, 7.5)] {
            var clean = false
            for attempt in 0..<4 where !clean {
                let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1])
                let configuration = PulseStreamConfiguration(latencyMilliseconds: requested, maximumFramesPerSlice: 256)
                XCTAssertEqual(configuration.playbackRequestMilliseconds, request)
                let stream = try PulsePlaybackStream(context: context, configuration: configuration, render: tone.render)
                try stream.start()
                var samples: [PulseLatency] = []
                for _ in 0..<20 {
                    usleep(50_000)
                    if let l = stream.latency() { samples.append(l) }
                }
                let attributes = try XCTUnwrap(stream.bufferAttributes)
                let underruns = stream.underrunCount
                stream.stop()
                XCTAssertFalse(samples.isEmpty)
                let server = samples.map(\.server).reduce(0, +) / Double(samples.count)
                let total = samples.map(\.total).reduce(0, +) / Double(samples.count)
                let maxTotal = samples.map(\.total).max() ?? 1
                let line = String(format: "latency: requested %.0f ms, tlength %d frames (%.2f ms), minreq %d, prebuf %d; reported mean server %.2f ms, total with ring %.2f ms, max total %.2f ms; underruns %d",
                                  requested, attributes.targetLength, Double(attributes.targetLength) / 48, attributes.minimumRequest,
                                  attributes.prebuffer, server * 1000, total * 1000, maxTotal * 1000, underruns)
                print(line)
                XCTAssertEqual(attributes.targetLength, Int(requested * 48))
                XCTAssertEqual(attributes.minimumRequest, Int(request * 48))
                // Underruns depend on the machine's load (LivePerformanceTests asserts none at 20 ms).
                if underruns > 0 {
                    print("attempt \(attempt): the stream underran (a starved machine), repeated")
                    if attempt == 3 { starved.append(line) }
                    continue
                }
                clean = true
                XCTAssertGreaterThan(server, (requested - request - 1) / 1000, line)
                XCTAssertLessThan(server, (requested + request + 2) / 1000, line)
                let ring = Double(configuration.playbackRingFrames) / 48000
                XCTAssertLessThan(maxTotal, (requested + request + 2) / 1000 + ring, line)
            }
        }
        if !starved.isEmpty {
            throw XCTSkip("inconclusive: every attempt underran (a starved machine): " + starved.joined(separator: "; "))
        }
    }

    /// A render call that stalls for 150 ms (longer than the 20 ms buffer) makes the server run
    /// dry: the underflow callback must count it.
    func testUnderrunIsCounted() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1], stallSeconds: 0.15, stallAtFrame: 24000)
        let stream = try PulsePlaybackStream(context: context, configuration: PulseStreamConfiguration(latencyMilliseconds: 20),
                                             render: tone.render)
        try stream.start()
        Thread.sleep(forTimeInterval: 1.2)
        let underruns = stream.underrunCount
        stream.stop()
        print("underrun test: \(underruns) underrun(s) after one 150 ms stall")
        XCTAssertGreaterThanOrEqual(underruns, 1)
        XCTAssertLessThanOrEqual(underruns, 10, "one stall, not a stream of underruns")
    }

    /// Killing the daemon while playing is reported within a second, and stop() still returns promptly.
    func testServerKilledWhilePlayingIsDetectedWithinOneSecond() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1])
        let stream = try PulsePlaybackStream(context: context, configuration: PulseStreamConfiguration(), render: tone.render)
        let reported = expectation(description: "fault handler called")
        stream.setFaultHandler { _ in reported.fulfill() }
        try stream.start()
        usleep(500_000)
        let detection = killServerAndWait { stream.fault }
        wait(for: [reported], timeout: 1)
        let fault = stream.fault
        let stopStart = Date()
        stream.stop()
        let stopTime = Date().timeIntervalSince(stopStart)
        print(String(format: "server killed: fault after %.1f ms (%@), stop took %.1f ms",
                     detection * 1000, fault.map { "\($0)" } ?? "none", stopTime * 1000))
        XCTAssertLessThan(detection, 1.0)
        guard case .connectionLost = fault else { return XCTFail("expected connectionLost, got \(String(describing: fault))") }
        XCTAssertFalse(context.isConnected)
        XCTAssertLessThan(stopTime, 1.0)
        XCTAssertThrowsError(try stream.start()) // the context is gone: a clear error, no hang
    }

    /// Removing the sink a stream plays to is a fault of that stream, reported within a second.
    func testSinkRemovedWhilePlayingIsDetected() throws {
        let module = try server.run("pactl", ["load-module", "module-null-sink", "sink_name=extra",
                                              "format=float32le", "rate=48000", "channels=2"])
        XCTAssertEqual(module.status, 0)
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1])
        let stream = try PulsePlaybackStream(context: context, configuration: PulseStreamConfiguration(device: "extra"),
                                             render: tone.render)
        try stream.start()
        usleep(300_000)
        let removedAt = Date()
        XCTAssertEqual(try server.run("pactl", ["unload-module", module.output.trimmingCharacters(in: .whitespacesAndNewlines)]).status, 0)
        while stream.fault == nil && Date().timeIntervalSince(removedAt) < 3 { usleep(1000) }
        let detection = Date().timeIntervalSince(removedAt)
        print(String(format: "sink removed: fault after %.1f ms: %@", detection * 1000, stream.fault.map { "\($0)" } ?? "none"))
        XCTAssertLessThan(detection, 1.0)
        XCTAssertEqual(stream.fault, .deviceLost(name: "extra"))
        XCTAssertTrue(context.isConnected, "only the stream failed, not the connection")
        stream.stop()
    }

    func testUnknownSinkIsDeviceNotFound() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1])
        let stream = try PulsePlaybackStream(context: context, configuration: PulseStreamConfiguration(device: "no-such-sink"),
                                             render: tone.render)
        XCTAssertThrowsError(try stream.start()) { error in
            XCTAssertEqual(error as? PulseError, .deviceNotFound(name: "no-such-sink"))
        }
        XCTAssertFalse(stream.isRunning)
    }

    /// start/stop cycles leave no thread and no sink input behind; stop is idempotent. The
    /// stream's thread is counted by its name ("ag-render"): the process's whole thread count
    /// also moves with threads that are not the stream's (Foundation's and libdispatch's, started
    /// and retired on their own schedule: under load one started by `pactl`'s launch was still
    /// there at the next count, 9 threads for 8, then 8 for 7).
    func testStartStopLeavesNothingBehind() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let before = ProcessThreads.count(named: "ag-render")
        let tone = TestTone(frequency: 440, amplitudes: [0.1, 0.1])
        let stream = try PulsePlaybackStream(context: context, configuration: PulseStreamConfiguration(), render: tone.render)
        for _ in 0..<3 {
            try stream.start()
            try waitForClients("sink-inputs")
            XCTAssertEqual(ProcessThreads.settle(named: "ag-render", at: before + 1), before + 1, "one render thread while running")
            usleep(100_000)
            stream.stop()
            stream.stop()
            XCTAssertEqual(ProcessThreads.settle(named: "ag-render", at: before), before, "stop joins the render thread")
            XCTAssertEqual(try server.run("pactl", ["list", "short", "sink-inputs"]).output, "")
        }
    }
}
