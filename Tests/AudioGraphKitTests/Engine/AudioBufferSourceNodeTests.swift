// Tests of AudioBufferSourceNode (Web Audio's AudioBufferSourceNode through the engine API) against numpy's playhead and the graph file's bufferSource.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioBufferSourceNodeTests: XCTestCase {
    let sr = 48000.0
    let mono = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!

    /// A 4800-frame mono buffer: a 300 Hz sine plus a slow ramp (so loops and directions show).
    private func samples() -> [Float] {
        (0..<4800).map { Float(0.5 * sin(2 * Double.pi * 300 * Double($0) / 48000) + Double($0) / 48000) }
    }

    private func pcmBuffer(_ x: [Float]) throws -> AudioPCMBuffer {
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: mono, frameCapacity: AudioFrameCount(x.count)))
        b.frameLength = AudioFrameCount(x.count)
        for i in x.indices { b.floatChannelData![0][i] = x[i] }
        return b
    }

    /// numpy's playhead (scripts/reference/buffer_source_reference.py): loop points and offset in buffer frames.
    private func numpy(_ x: [Float], rate: Double, loop: Bool, loopStart: Double, loopEnd: Double, offset: Double, frames: Int) throws -> [Double] {
        try ReferenceScript.bufferSource(x, rate: rate, loop: loop, loopStart: loopStart, loopEnd: loopEnd, offset: offset,
                                         frames: frames, in: TestFiles.makeTemporaryDirectory(self))
    }

    /// A looping source at rate 0.375 (0.75 · 2^(-1200/1200)) between 10 and 30 ms from an offset
    /// of 20 ms: within 1e-6 of numpy's playhead, and the very samples the graph file's
    /// `bufferSource` with the same settings renders.
    func testLoopingSourceMatchesNumpyAndTheGraphFile() throws {
        let x = samples()
        let engine = try makeManualEngine(format: mono)
        let source = AudioBufferSourceNode()
        XCTAssertEqual(source.playbackRate, 1)
        XCTAssertEqual(source.detune, 0)
        XCTAssertFalse(source.loop)
        source.buffer = try pcmBuffer(x)
        source.playbackRate = 0.75
        source.detune = -1200
        source.loop = true
        source.loopStart = 0.01
        source.loopEnd = 0.03
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        XCTAssertEqual(source.outputFormat(forBus: 0).channelCount, 1)
        try engine.start()
        source.start(when: 0, offset: 0.02)
        let y = try render(engine, frames: 9600)[0]
        let ref = try numpy(x, rate: 0.375, loop: true, loopStart: 480, loopEnd: 1440, offset: 960, frames: 9600)
        let e = SignalMeasurement.worstError(y) { ref[$0] }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
        print("AudioBufferSourceNode: worst error against numpy \(e.error)")

        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("b.wav").path, out = dir.appendingPathComponent("out.wav").path
        try TestFiles.writeSoundFile(wav, [x], sampleRate: sr)
        let graph = dir.appendingPathComponent("g.json")
        try """
        { "version": 1, "sampleRate": 48000, "duration": 0.2,
          "nodes": [ { "id": "b", "type": "bufferSource", "properties": { "file": "b.wav", "loop": true, "loopStart": 0.01, "loopEnd": 0.03, "offset": 0.02 },
                       "parameters": { "playbackRate": 0.75, "detune": -1200 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "b", "to": "out" } ] }
        """.write(to: graph, atomically: true, encoding: .utf8)
        let validated = try GraphLoader.load(graph.path)
        try OfflineRenderer(validated, outputPath: out, sampleType: .float32).render(to: out)
        let fromFile = try AudioFileReader.read(path: out).channels[0]
        let firstDifference = (0..<9600).first { fromFile[$0] != y[$0] }
        XCTAssertNil(firstDifference, "the engine's source and the graph file's differ at \(firstDifference ?? -1): \(firstDifference.map { (fromFile[$0], y[$0]) }.map { "\($0)" } ?? "")")
    }

    /// start(when: 10 ms, duration: 20 ms of buffer content) at rate 2: silence, then 480 frames
    /// of numpy's playhead, then silence and `onEnded`; a restart at 50 ms stopped at 60 ms plays
    /// just those 480 frames and ends again. A stop before the start plays nothing.
    func testStartDurationStopAndEnded() throws {
        let x = samples()
        let engine = try makeManualEngine(format: mono)
        let source = AudioBufferSourceNode()
        source.buffer = try pcmBuffer(x)
        source.playbackRate = 2
        let ended = expectation(description: "ended")
        ended.expectedFulfillmentCount = 1
        source.onEnded = { ended.fulfill() }
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertTrue(try render(engine, frames: 100)[0].allSatisfy { $0 == 0 }, "silent before start")
        source.start(when: 0.01, offset: 0, duration: 0.02)
        let y = try render(engine, frames: 2300)[0]
        let ref = try numpy(x, rate: 2, loop: false, loopStart: 0, loopEnd: 0, offset: 0, frames: 480)
        XCTAssertTrue(y[0..<380].allSatisfy { $0 == 0 })
        let e = SignalMeasurement.worstError(Array(y[380..<860])) { ref[$0] }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
        XCTAssertTrue(y[860...].allSatisfy { $0 == 0 }, "the duration ends playback")
        wait(for: [ended], timeout: 5)
        XCTAssertTrue(source.hasEnded)

        let again = expectation(description: "ended again")
        source.onEnded = { again.fulfill() }
        source.start(when: 0.05, offset: 0.01)
        source.stop(when: 0.06)
        XCTAssertFalse(source.hasEnded)
        let z = try render(engine, frames: 1200)[0]   // frames 2400..<3600 of the timeline
        let ref2 = try numpy(x, rate: 2, loop: false, loopStart: 0, loopEnd: 0, offset: 480, frames: 480)
        let e2 = SignalMeasurement.worstError(Array(z[0..<480])) { ref2[$0] }
        XCTAssertLessThan(e2.error, 1e-6, "at \(e2.at)")
        XCTAssertTrue(z[480...].allSatisfy { $0 == 0 }, "the stop time ends playback")
        wait(for: [again], timeout: 5)

        // A restart from the ended handler (on the watcher thread) plays again and ends again.
        let restarted = expectation(description: "restarted from the handler")
        let count = Mutex(0)
        source.onEnded = { [unowned source] in
            let n = count.withLock { $0 += 1; return $0 }
            if n == 1 { source.start(when: 0, offset: 0.09) } else { restarted.fulfill() }
        }
        source.start(when: 0, offset: 0.09)     // 0.01 s of buffer left at rate 2: 240 frames
        _ = try render(engine, frames: 1000)
        Thread.sleep(forTimeInterval: 0.1)       // the watcher runs the handler, which restarts
        _ = try render(engine, frames: 1000)
        wait(for: [restarted], timeout: 5)

        source.onEnded = nil
        source.start(when: 0.2)
        source.stop(when: 0.1)
        XCTAssertTrue(try render(engine, frames: 9600)[0].allSatisfy { $0 == 0 }, "a stop before the start plays nothing")
        XCTAssertEqual(engine.editFaultCount, 0)
    }
}
