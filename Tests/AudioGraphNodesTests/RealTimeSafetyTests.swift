// Proves the render path allocates nothing and takes no lock while updates fly, and that the proof can fail.
import AudioGraphRealtime
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

@testable import AudioGraphCore
@testable import AudioGraphNodes

#if canImport(Glibc)
import Glibc
#endif

final class RealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        if RealTimeScaffold.isCounting {
            XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
        }
    }

    /// Control locks are checked in every build (the check is ours, not the interposer's);
    /// allocations, frees, pthread locks and futex waits where the interposer counts.
    private func assertNothingCounted(_ run: TrackedRun, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(run.counts.violation, file: file, line: line)
    }

    /// What the render thread did in one scenario.
    private struct TrackedRun: CustomStringConvertible {
        var audibleSlices: Int
        var controlSteps: Int
        var counts: RealTimeScaffold.Counts
        var allocations: UInt64 { counts.allocations }
        var frees: UInt64 { counts.frees }
        var locks: UInt64 { counts.locks }
        var controlLocks: Int { counts.controlLocks }
        var description: String { "render thread: \(counts)" }
    }

    /// Renders `slices` 256-frame slices of `graph` on the scaffold's render thread (after 64
    /// untracked warm-up slices) while this thread calls `control` with step 1, 2, ... until the
    /// render is done; counts the slices `isAudible` accepts, and what the render thread
    /// allocated, freed, locked and waited on. `pauseEvery4`: microseconds the render thread
    /// sleeps every fourth slice (0: none).
    private func renderWhileChanging(_ graph: AudioGraph, slices: Int, pauseEvery4: UInt32 = 0,
                                     isAudible: @escaping @Sendable (InputBuffer) -> Bool = { !$0.isSilent },
                                     control: (Int) throws -> Void) rethrows -> TrackedRun {
        let run = try RealTimeScaffold.runRenderThread(warmUp: {
            for _ in 0..<64 { _ = graph.render(frameCount: 256) }
        }, render: {
            var count = 0
            for i in 0..<slices {
                if let r = graph.render(frameCount: 256), isAudible(r) { count += 1 }
                if pauseEvery4 > 0 && i % 4 == 0 { usleep(pauseEvery4) }
            }
            return count
        }, whileRendering: control)
        return TrackedRun(audibleSlices: run.result, controlSteps: run.steps, counts: run.counts)
    }

    /// Writes a 1 s stereo 44.1 kHz file (so the mixer's implicit rate conversion runs too).
    private func makeFile() throws -> String {
        let path = NSTemporaryDirectory() + "rt-safety-\(getpid()).wav"
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 44100, channelCount: 2))
        let s = ChannelBufferStorage(channelCount: 2, capacity: 44100)
        for i in 0..<44100 {
            s.list.channel(0)[i] = Float(sin(2 * Double.pi * 440 * Double(i) / 44100)) * 0.5
            s.list.channel(1)[i] = Float(sin(2 * Double.pi * 660 * Double(i) / 44100)) * 0.5
        }
        try w.write(s.list, frameCount: 44100)
        try w.close()
        return path
    }

    /// 10 000 slices of a graph with a mixer, a looping player and oscillators, rendered on a
    /// tracked thread while this thread sets parameters and applies connect/disconnect change
    /// lists with update(): the render thread must allocate nothing and lock nothing.
    func testRenderPathAllocatesNothingAndTakesNoLockWithUpdatesInFlight() throws {
        let path = try makeFile()
        defer { unlink(path) }
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let osc1 = OscillatorNode(id: "osc1", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
        let osc2 = OscillatorNode(id: "osc2", sampleRate: 48000, properties: OscillatorProperties(waveform: .sawtooth, channels: 2))
        let noise = OscillatorNode(id: "noise", sampleRate: 48000, properties: OscillatorProperties(waveform: .noise, seed: 7))
        let player = try PlayerNode(id: "player", sampleRate: 48000,
                                    properties: PlayerProperties(file: path, path: path, loop: true))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 4)
        let out = GenericOutputNode(id: "out")
        for n in [osc1, osc2, noise, player, mixer, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("osc1", to: "mix", inputBus: 0)
        try graph.connect("osc2", to: "mix", inputBus: 1)
        try graph.connect("player", to: "mix", inputBus: 2)
        try graph.connect("noise", to: "mix", inputBus: 3)
        try graph.connect("mix", to: "out")
        try graph.initialize()
        try graph.start()

        let slices = 10_000
        var updates = 0
        var connected = true
        let run = try renderWhileChanging(graph, slices: slices) { step in
            try osc1.setParameter("frequency", 200 + Double(step % 400), rampFrames: step % 3 == 0 ? 480 : 0)
            try mixer.setParameter("input.2.pan", Double(step % 21) / 10 - 1)
            try mixer.setParameter("input.1.volume", Double(step % 5) / 4, rampFrames: 128)
            if step % 4 == 0 {
                if connected {
                    graph.enqueue(contentsOf: [.disconnect(destination: "mix", destinationBus: 1),
                                               .setParameter(node: "mix", address: "input.0.volume", value: 0.5, rampDuration: 0.01)])
                } else {
                    graph.enqueue(contentsOf: [.connect(source: "osc2", sourceBus: 0, destination: "mix", destinationBus: 1),
                                               .setParameter(node: "mix", address: "input.0.volume", value: 1, rampDuration: 0)])
                }
                connected.toggle()
                // Every other list is timed (some in the past, some slices ahead): the render thread
                // then also looks at plans it leaves for later, and races the take-back.
                let timed: Int64? = step % 8 == 0 ? Int64(step) * 64 : nil
                try graph.update(waitUntilApplied: false, atSampleTime: timed)
                updates += 1
            }
            usleep(200)
        }
        graph.stop()
        print("real-time safety: \(slices) slices, \(updates) change lists, \(run.controlSteps) parameter rounds; \(run)")
        XCTAssertGreaterThan(updates, 20, "too few change lists were applied during the render")
        // The last list took effect (stop() adopts a plan still pending): the lists were applied, not dropped.
        XCTAssertEqual(graph.connections.contains(Connection(source: "osc2", destination: "mix", destinationBus: 1)), connected)
        XCTAssertEqual(mixer.parameter("input.0.volume")?.value, connected ? 1 : 0.5)
        XCTAssertGreaterThan(run.audibleSlices, slices / 2)
        assertNothingCounted(run)
    }

    /// Parallel rendering (offline): 3 000 slices of oscillators and a rate-converted player
    /// into a mixer on the render thread and two workers that count their own allocations and
    /// locks, while parameters move and change lists re-patch the mixer: neither the render
    /// thread nor the workers allocate or lock, and the workers did render.
    func testParallelRenderWorkersAllocateNothingAndTakeNoLock() throws {
        let path = try makeFile()
        defer { unlink(path) }
        RenderWorkerPool.testOnly_workerThreadHook.withLock { $0 = { on in RealTimeScaffold.trackCurrentThread(on) } }
        defer { RenderWorkerPool.testOnly_workerThreadHook.withLock { $0 = nil } }
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let oscs = (0..<6).map { OscillatorNode(id: "osc\($0)", sampleRate: 48000,
                                                properties: OscillatorProperties(waveform: $0 % 2 == 0 ? .sine : .sawtooth)) }
        let eq = EQNode(id: "eq", sampleRate: 48000, properties: EQProperties(bands: [EQBand(type: .peak, frequency: 1000, gain: 6)]))
        let player = try PlayerNode(id: "player", sampleRate: 48000, properties: PlayerProperties(file: path, path: path, loop: true))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 8)
        for n in oscs as [GraphNode] + [eq, player, mixer, GenericOutputNode(id: "out")] { try graph.addNode(n) }
        for i in 0..<5 { try graph.connect("osc\(i)", to: "mix", inputBus: i) }
        try graph.connect("osc5", to: "eq")
        try graph.connect("eq", to: "mix", inputBus: 5)
        try graph.connect("player", to: "mix", inputBus: 6)
        try graph.connect("mix", to: "out")
        try graph.initialize()
        try graph.setRenderThreadCount(3)
        try graph.start()
        // Warm the workers up (their counting is on from their start).
        RenderThreadMark.whileMarked { for _ in 0..<64 { _ = graph.render(frameCount: 256) } }
        let workedBefore = graph.testOnly_parallelGroups.workerRenderedGroups
        XCTAssertGreaterThan(workedBefore, 0)
        var connected = true
        let run = try renderWhileChanging(graph, slices: 3000) { step in
            try oscs[0].setParameter("frequency", 200 + Double(step % 400), rampFrames: step % 3 == 0 ? 480 : 0)
            try mixer.setParameter("input.5.pan", Double(step % 21) / 10 - 1)
            if step % 4 == 0 {
                graph.enqueue(connected ? .disconnect(destination: "mix", destinationBus: 1)
                                        : .connect(source: "osc1", sourceBus: 0, destination: "mix", destinationBus: 1))
                connected.toggle()
                try graph.update(waitUntilApplied: false)
            }
            usleep(300)
        }
        graph.stop()
        print("parallel real-time safety: 3000 slices, \(run.controlSteps) control rounds; render thread and workers: \(run)")
        XCTAssertGreaterThan(graph.testOnly_parallelGroups.workerRenderedGroups - workedBefore, 3000, "the workers rendered")
        XCTAssertGreaterThan(run.audibleSlices, 1500)
        assertNothingCounted(run)
        graph.uninitialize()
    }

    /// The effect and spatial nodes: eq (gliding band parameters), delay (gliding delay time),
    /// converter (44.1 kHz → 48 kHz with libsoxr, quality `best`, and a channel map), environment with HRTF and reverb and one
    /// with equal-power panning (a mono and a stereo input, cones and listener vectors moving), with
    /// parameters moving (an eq band gliding to and from exactly sampleRate/2) and change lists flying.
    func testEffectAndSpatialNodesRenderWithoutAllocatingOrLocking() throws {
        let path = try makeFile()
        defer { unlink(path) }
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let player = try PlayerNode(id: "player", sampleRate: 48000,
                                    properties: PlayerProperties(file: path, path: path, loop: true))
        let converter = ConverterNode(id: "conv", properties: ConverterProperties(
            format: FormatDescription(sampleRate: 48000), quality: .best, channelMap: [1, 0]))
        let eq = EQNode(id: "eq", sampleRate: 48000, properties: EQProperties(bands: [
            EQBand(type: .peak, frequency: 1000, gain: 6), EQBand(type: .lowShelf, frequency: 200, gain: -3),
            EQBand(type: .highPass, frequency: 80)]))
        let delay = DelayNode(id: "delay", sampleRate: 48000)
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .square))
        let hrtf = EnvironmentNode(id: "hrtf", sampleRate: 48000, inputBusCount: 2, properties: EnvironmentProperties(
            renderingAlgorithm: .hrtf, reverb: ReverbSettings(enabled: true, preset: .mediumHall, level: -6)))
        let panner = EnvironmentNode(id: "panner", sampleRate: 48000, inputBusCount: 2)
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
        // A recorder between the mixer and the output: its kernel copies every slice into its ring
        // (its writer thread writes the file, off the render thread).
        let recording = path + ".recorded.wav"
        defer { unlink(recording) }
        let recorder = RecorderNode(id: "rec", path: recording)
        let out = GenericOutputNode(id: "out")
        for n in [player, converter, eq, delay, osc, hrtf, panner, mixer, recorder, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("player", to: "conv")
        try graph.connect("conv", to: "eq")
        try graph.connect("eq", to: "delay")
        try graph.connect("delay", to: "hrtf", inputBus: 0)
        try graph.connect("osc", to: "hrtf", inputBus: 1)
        try graph.connect("osc", to: "panner")
        try graph.connect("delay", to: "panner", inputBus: 1)   // stereo: the stereo equal-power law
        try panner.setParameter("input.1.coneInnerAngle", 60)
        try panner.setParameter("input.1.coneOuterAngle", 200)
        try panner.setParameter("input.1.coneOuterGain", 0.3)
        try graph.connect("hrtf", to: "mix", inputBus: 0)
        try graph.connect("panner", to: "mix", inputBus: 1)
        try graph.connect("mix", to: "rec")
        try graph.connect("rec", to: "out")
        try graph.initialize()
        try graph.start()

        let slices = 3_000
        var connected = true
        let run = try renderWhileChanging(graph, slices: slices) { step in
            let angle = Double(step % 360) * Double.pi / 180
            try hrtf.setParameter("input.0.x", 2 * cos(angle))
            try hrtf.setParameter("input.0.z", 2 * sin(angle))
            try panner.setParameter("input.0.x", sin(angle))
            try panner.setParameter("input.1.orientationX", cos(angle))
            try panner.setParameter("listener.forwardX", sin(angle))
            try panner.setParameter("listener.upZ", cos(angle) / 2)
            try eq.setParameter("band.2.frequency", step % 7 == 0 ? 24000 : 80)
            try eq.setParameter("band.0.gain", Double(step % 12) - 6)
            try eq.setParameter("band.0.frequency", 500 + Double(step % 1000))
            try delay.setParameter("delayTime", 0.05 + Double(step % 10) / 100)
            if step % 5 == 0 {
                graph.enqueue(connected ? .disconnect(destination: "mix", destinationBus: 1)
                                        : .connect(source: "panner", sourceBus: 0, destination: "mix", destinationBus: 1))
                connected.toggle()
                try graph.update(waitUntilApplied: false)
            }
            usleep(300)
        }
        graph.stop()
        try recorder.finish()
        print("real-time safety (effects and spatial): \(slices) slices, \(run.controlSteps) parameter rounds; \(run)")
        assertNothingCounted(run)
        XCTAssertEqual(try AudioFileReader.info(path: recording).frames, Int64(recorder.recordedFrameCount))
        XCTAssertGreaterThan(recorder.recordedFrameCount, 0)
    }

    /// Streaming players (the threshold lowered so a 1 s file streams, a 32 768-frame ring so it
    /// refills all the time): one looping at 44.1 kHz into a 48 kHz mixer, one at 48 kHz, while
    /// change lists move `startTime` and `segment` (each a seek request to the disk thread) and a
    /// slow disk makes the render thread starve now and then. The render thread must allocate
    /// nothing, free nothing and lock nothing; the disk threads end with the graph.
    func testStreamingPlayersRenderWithoutAllocatingOrLockingWhileSeeking() throws {
        let savedThreshold = PlayerNode.streamingThreshold, savedRing = PlayerNode.streamingRingFrames
        PlayerNode.streamingThreshold = 0.01
        PlayerNode.streamingRingFrames = 1 << 15
        defer {
            PlayerNode.streamingThreshold = savedThreshold
            PlayerNode.streamingRingFrames = savedRing
        }
        let path = try makeFile()
        defer { unlink(path) }
        let path48 = NSTemporaryDirectory() + "rt-safety-48k-\(getpid()).wav"
        do {
            let w = try AudioFileWriter(path: path48, format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let s = ChannelBufferStorage(channelCount: 1, capacity: 96000)
            for i in 0..<96000 { s.list.channel(0)[i] = Float(sin(2 * Double.pi * 330 * Double(i) / 48000)) * 0.25 }
            try w.write(s.list, frameCount: 96000)
            try w.close()
        }
        defer { unlink(path48) }
        let threadsBefore = ProcessThreads.count
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let looping = try PlayerNode(id: "looping", sampleRate: 48000, properties: PlayerProperties(file: path, path: path, loop: true))
        let plain = try PlayerNode(id: "plain", sampleRate: 48000, properties: PlayerProperties(file: path48, path: path48, loop: true))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
        let out = GenericOutputNode(id: "out")
        for n in [looping, plain, mixer, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("looping", to: "mix", inputBus: 0)
        try graph.connect("plain", to: "mix", inputBus: 1)
        try graph.connect("mix", to: "out")
        try graph.initialize()
        try graph.start()
        XCTAssertTrue(looping.isStreaming && plain.isStreaming)

        let slices = 6_000
        var updates = 0
        let run = try renderWhileChanging(graph, slices: slices, pauseEvery4: 100,
                                          isAudible: { !$0.isSilent && $0.buffer.channel(0)[255] != 0 }) { step in
            if step % 3 == 0 {
                try looping.setProperty("startTime", Double(step % 7) * 0.01)
                try plain.setProperty("segment", PlayerSegment(start: Double(step % 5) * 0.2, duration: 0.5) as PlayerSegment?)
                try graph.update(waitUntilApplied: false)
                updates += 1
            }
            // Now and then a slow disk (the reader sleeps 20 ms per read).
            let delay = step % 50 < 10 ? 20_000 : 0
            (looping.kernel as? StreamingPlayerKernel)?.streamer.testOnly_readDelayMicroseconds.store(delay, ordering: .relaxed)
            usleep(2000)
        }
        graph.stop()
        print("real-time safety (streaming players): \(slices) slices, \(updates) change lists with seeks, "
              + "\(looping.streamStarvedFrames + plain.streamStarvedFrames) frames starved; "
              + "\(run)")
        XCTAssertGreaterThan(updates, 20, "too few seeks were requested during the render")
        XCTAssertGreaterThan(run.audibleSlices, slices / 4, "the players were mostly silent")
        assertNothingCounted(run)
        graph.uninitialize()
        let deadline = Date().addingTimeInterval(2)
        while ProcessThreads.count > threadsBefore && Date() < deadline { usleep(5000) }
        XCTAssertLessThanOrEqual(ProcessThreads.count, threadsBefore, "a disk-reader thread outlived the graph")
    }

    /// A scheduled sound player (the node behind AudioPlayerNode) rendering 10 000 slices while
    /// this thread keeps scheduling buffers (some looping, some interrupting, some at times inside
    /// slices) and file segments, and plays, pauses and stops it: the render thread drains the
    /// command ring, mixes, finishes regions and pushes completion events without allocating,
    /// freeing or locking; the handlers run on the notifier thread.
    func testScheduledSoundPlayerRendersWithoutAllocatingOrLockingWhileScheduling() throws {
        let path = NSTemporaryDirectory() + "rt-safety-scheduled-\(getpid()).wav"
        do {
            let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
            let s = ChannelBufferStorage(channelCount: 2, capacity: 96000)
            for i in 0..<96000 { for c in 0..<2 { s.list.channel(c)[i] = Float(sin(Double(i) * 0.05 + Double(c))) * 0.25 } }
            try w.write(s.list, frameCount: 96000)
            try w.close()
        }
        defer { unlink(path) }
        let savedRing = ScheduledSoundPlayerNode.streamingRingFrames
        ScheduledSoundPlayerNode.streamingRingFrames = 1 << 15
        defer { ScheduledSoundPlayerNode.streamingRingFrames = savedRing }
        let threadsBefore = ProcessThreads.count
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let player = ScheduledSoundPlayerNode(id: "player", format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let out = GenericOutputNode(id: "out")
        try graph.addNode(player)
        try graph.addNode(out)
        try graph.connect("player", to: "out")
        try graph.initialize()
        try graph.start()
        let buffers = (0..<8).map { k -> ChannelBufferStorage in
            let s = ChannelBufferStorage(channelCount: 2, capacity: 300 + 97 * k)
            for i in 0..<s.list.capacity { for c in 0..<2 { s.list.channel(c)[i] = Float(k + 1) * 0.05 + Float(i % 50) * 0.001 } }
            return s
        }
        let handled = Atomic<Int>(0)
        let handler: @Sendable (ScheduledCompletionCallbackType) -> Void = { _ in handled.add(1, ordering: .relaxed) }
        player.play()

        let slices = 10_000
        var scheduled = 0, refused = 0
        // The render sleeps 1 ms every fourth slice (about real time), so the schedule calls interleave with it.
        let run = try renderWhileChanging(graph, slices: slices, pauseEvery4: 1000) { step in
            let buffer = buffers[step % buffers.count]
            let types: [ScheduledCompletionCallbackType] = [.dataConsumed, .dataRendered, .dataPlayedBack]
            do {
                switch step % 10 {
                case 3:
                    try player.scheduleBuffer(buffer, options: .loops, callbackType: types[step % 3], completion: handler)
                case 5:
                    try player.scheduleBuffer(buffer, options: .interruptsAtLoop, callbackType: types[step % 3], completion: handler)
                case 7:
                    // Some of these times lie ahead of the player, some have passed (late regions).
                    try player.scheduleBuffer(buffer, at: Int64(step) * 200 + Int64(step % 300), options: .interrupts,
                                              callbackType: types[step % 3], completion: handler)
                case 9 where step % 40 == 9:
                    try player.scheduleSegment(path: path, startingFrame: Int64(step % 5000), frameCount: 40_000,
                                               callbackType: types[step % 3], completion: handler)
                default:
                    try player.scheduleBuffer(buffer, callbackType: types[step % 3], completion: handler)
                }
                scheduled += 1
            } catch ScheduledSoundPlayerError.tooManyScheduled {
                refused += 1
            }
            if step % 97 == 0 { player.pause() }
            if step % 97 == 2 { player.play() }
            if step % 331 == 0 { player.stop(); player.play() }
            usleep(200)
        }
        player.stop()
        graph.stop()
        print("real-time safety (scheduled player): \(slices) slices, \(scheduled) regions scheduled (\(refused) refused: queue full), "
              + "\(handled.load(ordering: .relaxed)) handlers run; \(run)")
        XCTAssertGreaterThan(scheduled, 500, "too few regions were scheduled during the render")
        XCTAssertGreaterThan(run.audibleSlices, slices / 4, "the player was mostly silent")
        assertNothingCounted(run)
        graph.uninitialize()
        // Every segment's disk thread ends when its region is released; the notifier remains.
        let deadline = Date().addingTimeInterval(3)
        while ProcessThreads.count > threadsBefore + 1 && Date() < deadline { usleep(5000) }
        XCTAssertLessThanOrEqual(ProcessThreads.count, threadsBefore + 1, "disk-reader threads outlived their segments")
    }

    /// Live taps installed and removed over and over while the render thread renders: on the
    /// mixer (delivered by their own threads, buffers of 100, 512, 4096 frames and the slice),
    /// on a 44.1 kHz looping player behind the mixer's rate converter, and on an oscillator
    /// (manual taps drained by this thread). Every change is a plan carrying a tap set; the render
    /// thread copies into the rings, swaps sets and lets go of removed taps, and must allocate,
    /// free and lock nothing. Every tap finishes and its delivery thread ends.
    func testLiveTapsInstalledAndRemovedDuringTheRenderCostTheRenderThreadNothing() throws {
        let path = try makeFile()
        defer { unlink(path) }
        let threadsBefore = ProcessThreads.count
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
        let player = try PlayerNode(id: "player", sampleRate: 48000, properties: PlayerProperties(file: path, path: path, loop: true))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
        let out = GenericOutputNode(id: "out")
        for n in [osc, player, mixer, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("osc", to: "mix", inputBus: 0)
        try graph.connect("player", to: "mix", inputBus: 1)
        try graph.connect("mix", to: "out")
        try graph.initialize()
        try graph.start()

        let delivered = Atomic<Int>(0)
        let block: LiveTap.Block = { _, frames, _, _ in delivered.wrappingAdd(frames, ordering: .relaxed) }
        var taps: [LiveTap] = []
        var installs = 0
        let sizes = [100, 512, 4096, 0]
        let run = try renderWhileChanging(graph, slices: 10_000) { step in
            if step % 2 == 1 {
                let size = sizes[(step / 2) % sizes.count]
                let mixTap = LiveTap(bus: 0, channelCount: 2, sampleRate: 48000, bufferSize: size, maximumFramesPerSlice: 256, block: block)
                let playerTap = LiveTap(bus: 0, channelCount: 2, sampleRate: 44100, bufferSize: size, maximumFramesPerSlice: 256, block: block)
                let oscTap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: size, maximumFramesPerSlice: 256,
                                     delivery: .manual, block: block)
                try graph.installTap(mixTap, onNode: "mix")
                try graph.installTap(playerTap, onNode: "player")
                try graph.installTap(oscTap, onNode: "osc")
                taps += [mixTap, playerTap, oscTap]
                installs += 1
            } else {
                for (node, bus) in [("mix", 0), ("player", 0), ("osc", 0)] { graph.removeTap(onNode: node, bus: bus) }
            }
            graph.deliverPendingTaps()
            usleep(300)
        }
        for (node, bus) in [("mix", 0), ("player", 0), ("osc", 0)] { graph.removeTap(onNode: node, bus: bus) }
        graph.stop() // the render thread has ended: the last removal is adopted here
        graph.deliverPendingTaps()
        let unfinished = taps.filter { !$0.waitUntilFinished(timeout: 5) }.count
        let dropped = taps.reduce(0) { $0 + $1.droppedFrameCount }
        print("real-time safety (live taps): 10000 slices, \(installs) installations of 3 taps, "
              + "\(delivered.load(ordering: .relaxed)) frames delivered, \(dropped) dropped; "
              + "render thread: \(run.allocations) allocations, \(run.frees) frees, \(run.locks) mutex locks")
        XCTAssertGreaterThan(installs, 20, "too few installations during the render")
        XCTAssertGreaterThan(delivered.load(ordering: .relaxed), 0)
        XCTAssertEqual(unfinished, 0, "taps that never finished")
        assertNothingCounted(run)
        taps = []
        graph.uninitialize()
        let deadline = Date().addingTimeInterval(2)
        while ProcessThreads.count > threadsBefore && Date() < deadline { usleep(5000) }
        XCTAssertLessThanOrEqual(ProcessThreads.count, threadsBefore, "a tap delivery thread outlived its tap")
    }

    // MARK: The proof can fail

    /// The same scaffold the scenarios above use, with a render path that breaks the rules on
    /// purpose — a render callback that takes a `ControlLock` every slice, one that builds an
    /// array every slice, and one that takes a raw Swift `Mutex` the control thread holds most
    /// of the time — must count all three: the assertions of 0 above can fail.
    func testScaffoldCatchesALockAndAnAllocationAddedToTheRenderPath() throws {
        let lock = ControlLock<Int>(0)
        let locking = RenderCallbackNode(id: "locking", channels: 1) { context, buffer in
            let n = lock.withLock { v -> Int in v += 1; return v }
            buffer.channel(0)[0] = Float(n & 1)
            return false
        }
        let allocating = RenderCallbackNode(id: "allocating", channels: 1) { context, buffer in
            let scratch = [Float](repeating: 0.25, count: context.frameCount)
            buffer.channel(0).update(from: scratch, count: context.frameCount)
            return false
        }
        let mutex = Mutex<Int>(0)
        // A handshake makes the contention certain whatever the machine's load: the 100th slice
        // (past the scaffold's 64 untracked warm-up slices) says it is ready and waits, spinning
        // on an atomic, until the control thread holds the mutex; it then says it has arrived and
        // asks for the mutex, which the control thread keeps for 50 ms more.
        let ready = Atomic<Bool>(false)
        let held = Atomic<Bool>(false)
        let arrived = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let waiting = RenderCallbackNode(id: "waiting", channels: 1) { context, buffer in
            if calls.add(1, ordering: .relaxed).newValue == 100 {
                ready.store(true, ordering: .releasing)
                let giveUp = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
                while !held.load(ordering: .acquiring) && DispatchTime.now().uptimeNanoseconds < giveUp {}
                arrived.store(true, ordering: .releasing)
            }
            let n = mutex.withLock { v -> Int in v += 1; return v }
            buffer.channel(0)[0] = Float(n & 1)
            return false
        }
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 3)
        for n in [locking, allocating, waiting, mixer, GenericOutputNode(id: "out")] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("locking", to: "mix", inputBus: 0)
        try graph.connect("allocating", to: "mix", inputBus: 1)
        try graph.connect("waiting", to: "mix", inputBus: 2)
        try graph.connect("mix", to: "out")
        try graph.initialize()
        try graph.start()
        let slices = 500
        let run = renderWhileChanging(graph, slices: slices) { step in
            try? mixer.setParameter("input.0.volume", Double(step % 5) / 4)
            if step == 1 {
                let notReady = Date().addingTimeInterval(5)
                while !ready.load(ordering: .acquiring) && Date() < notReady { usleep(100) }
                mutex.withLock { _ in
                    held.store(true, ordering: .releasing)
                    let giveUp = Date().addingTimeInterval(5)
                    while !arrived.load(ordering: .acquiring) && Date() < giveUp { usleep(100) }
                    usleep(50_000)   // the render thread is now blocked on the mutex
                }
            }
            mutex.withLock { _ in _ = usleep(500) }   // held 5/6 of the time: the render thread waits for it
            usleep(100)
        }
        graph.stop()
        print("real-time safety (deliberately broken render path): \(slices) slices; \(run)")
        XCTAssertEqual(run.controlLocks, slices, "the ControlLock taken in every slice was not counted")
        XCTAssertNotNil(run.counts.violation)
        guard RealTimeScaffold.isCounting else { return }
        XCTAssertGreaterThanOrEqual(run.allocations, UInt64(slices), "the array built in every slice was not counted")
        XCTAssertGreaterThanOrEqual(run.counts.waits, 1, "the render thread waited on a Swift Mutex and nothing counted it")
    }
}
