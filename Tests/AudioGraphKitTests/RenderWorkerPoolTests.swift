// Parallel offline rendering (RenderWorkerPool, ParallelSchedule) is bit-identical to the serial render.
@testable import AudioGraphCore
@testable import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class RenderWorkerPoolTests: XCTestCase {
    /// `voices` branches into one mixer: oscillators of every waveform (some automated, some
    /// through an EQ or a delay), a 44.1 kHz player through a converter and an EQ, a noise source
    /// that feeds two mixer inputs (shared: a task of its own, rendered once), taps on a branch node and on the
    /// mixer, and updates at frames inside slices that re-patch, add and remove branches.
    private func voicesGraph(_ voices: Int, seconds: Double) -> String {
        var nodes: [String] = []
        var connections: [String] = []
        let waveforms = ["sine", "square", "sawtooth", "triangle"]
        for i in 0..<voices - 3 {
            var automation = ""
            if i % 5 == 0 {
                automation = #", "automation": { "frequency": [ { "setValueAtTime": { "value": \#(200 + i), "time": 0.01 } }, "#
                    + #"{ "exponentialRampToValueAtTime": { "value": \#(900 + 3 * i), "time": 0.15 } } ] }"#
            }
            nodes.append(#"{ "id": "o\#(i)", "type": "oscillator", "parameters": { "frequency": \#(110 + 13 * i), "amplitude": 0.05 }, "#
                + #""properties": { "waveform": "\#(waveforms[i % 4])" }\#(automation) }"#)
            if i % 7 == 3 {
                nodes.append(#"{ "id": "eq\#(i)", "type": "eq", "properties": { "bands": [ { "type": "peak", "frequency": \#(300 + 20 * i), "gain": 6 } ] } }"#)
                connections.append(#"{ "from": "o\#(i)", "to": "eq\#(i)" }"#)
                connections.append(#"{ "from": "eq\#(i)", "to": "mix:\#(i)" }"#)
            } else if i % 11 == 5 {
                nodes.append(#"{ "id": "d\#(i)", "type": "delay", "parameters": { "delayTime": 0.013, "feedback": 40, "wetDryMix": 50 } }"#)
                connections.append(#"{ "from": "o\#(i)", "to": "d\#(i)" }"#)
                connections.append(#"{ "from": "d\#(i)", "to": "mix:\#(i)" }"#)
            } else {
                connections.append(#"{ "from": "o\#(i)", "to": "mix:\#(i)" }"#)
            }
        }
        let p = voices - 3
        nodes.append(#"{ "id": "p", "type": "player", "properties": { "file": "in44.wav", "loop": true } }"#)
        nodes.append(#"{ "id": "conv", "type": "converter", "properties": { "format": { "sampleRate": 48000 } } }"#)
        nodes.append(#"{ "id": "peq", "type": "eq", "properties": { "bands": [ { "type": "lowShelf", "frequency": 200, "gain": -6 } ] } }"#)
        connections += [#"{ "from": "p", "to": "conv" }"#, #"{ "from": "conv", "to": "peq" }"#, #"{ "from": "peq", "to": "mix:\#(p)" }"#]
        nodes.append(#"{ "id": "noise", "type": "oscillator", "parameters": { "amplitude": 0.05 }, "properties": { "waveform": "noise", "seed": 7 } }"#)
        connections += [#"{ "from": "noise", "to": "mix:\#(p + 1)" }"#, #"{ "from": "noise", "to": "mix:\#(p + 2)" }"#]
        nodes.append(#"{ "id": "mix", "type": "mixer", "inputBusCount": \#(voices + 1), "parameters": { "input.0.pan": -0.6, "input.1.volume": 0.5 } }"#)
        nodes.append(#"{ "id": "out", "type": "genericOutput" }"#)
        connections.append(#"{ "from": "mix", "to": "out" }"#)
        return """
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256, "duration": \(seconds),
              "nodes": [ \(nodes.joined(separator: ",\n")) ],
              "connections": [ \(connections.joined(separator: ", ")) ],
              "updates": [
                { "frame": 1001, "actions": [ { "setParameter": { "node": "o1", "address": "amplitude", "value": 0.2, "rampDuration": 0.01 } },
                                              { "setParameter": { "node": "mix", "address": "input.2.volume", "value": 0.1 } } ] },
                { "frame": 3333, "actions": [ { "disconnect": { "to": "mix:2" } },
                                              { "addNode": { "id": "late", "type": "oscillator", "parameters": { "frequency": 777 }, "properties": { "waveform": "triangle" } } },
                                              { "connect": { "from": "late", "to": "mix:\(voices)" } } ] },
                { "frame": 7000, "actions": [ { "removeNode": "o4" }, { "connect": { "from": "o2", "to": "mix:4" } } ] } ],
              "taps": [ { "node": "o\(min(3, voices - 4))", "file": "tap-branch.wav" }, { "node": "peq", "file": "tap-player.wav" },
                        { "node": "mix", "file": "tap-mix.wav" } ] }
            """
    }

    /// Renders `voicesGraph(voices)` serially and with each of `threadCounts`; every file (output
    /// and taps) of the parallel renders equals the serial one byte for byte, and the workers did
    /// render every slice.
    private func assertParallelRenderIsBitIdentical(voices: Int, seconds: Double, threadCounts: [Int]) throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let samples = (0..<3000).map { Float(0.4 * sin(Double($0) * 0.031)) }
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in44.wav").path, [samples], sampleRate: 44100)
        let v = try parseGraph(voicesGraph(voices, seconds: seconds), in: dir)
        let files = ["out.wav", "tap-branch.wav", "tap-player.wav", "tap-mix.wav"]
        var reference: [String: Data] = [:]
        for threads in [1] + threadCounts {
            let out = dir.appendingPathComponent("out.wav").path
            let r = try OfflineRenderer(v, outputPath: out, renderThreads: threads)
            XCTAssertEqual(r.built.graph.renderThreadCount, threads)
            let before = r.built.graph.testOnly_parallelGroups
            try r.render(to: out)
            let after = r.built.graph.testOnly_parallelGroups
            if threads == 1 {
                XCTAssertEqual(before.groups, [], "serial: no split")
            } else {
                XCTAssertEqual(before.groups.count, threads)
                let roots = before.groups.flatMap { $0 }
                // Every branch is a task, the shared noise source too (it feeds two inputs).
                XCTAssertEqual(Set(roots).count, voices - 1, "\(before.groups)")
                XCTAssertTrue(roots.contains("noise"))
                XCTAssertTrue(roots.contains("peq"))
                XCTAssertTrue(after.groups.flatMap { $0 }.contains("late"), "a node added by an update is a unit of the new plan")
                XCTAssertFalse(after.groups.flatMap { $0 }.contains("o4"), "a removed node is gone from the units")
                // The renderer's slice size (the offline default, 4096, over the file's 256).
                let slices = Int((seconds * 48000 / Double(r.built.graph.maximumFramesPerSlice)).rounded(.up))
                XCTAssertGreaterThanOrEqual(after.workerRenderedGroups, slices, "the workers rendered every slice")
            }
            for f in files {
                let data = try Data(contentsOf: dir.appendingPathComponent(f))
                if threads == 1 {
                    reference[f] = data
                    continue
                }
                guard data != reference[f] else { continue }
                let a = try AudioFileReader.read(path: dir.appendingPathComponent(f).path)
                try data.write(to: dir.appendingPathComponent("parallel-" + f))
                try reference[f]!.write(to: dir.appendingPathComponent(f))
                let b = try AudioFileReader.read(path: dir.appendingPathComponent(f).path)
                let first = zip(a.channels[0], b.channels[0]).enumerated().first { $0.element.0 != $0.element.1 }
                XCTFail("\(threads) threads: \(f) differs from the serial render (first at \(String(describing: first)))")
            }
        }
        let out = try AudioFileReader.read(path: dir.appendingPathComponent("out.wav").path)
        XCTAssertEqual(out.info.frames, Int64(seconds * 48000))
        XCTAssertGreaterThan(out.channels[0].map(abs).max()!, 0.05, "not silent")
        let tap = try AudioFileReader.read(path: dir.appendingPathComponent("tap-player.wav").path)
        XCTAssertGreaterThan(tap.channels[0].map(abs).max()!, 0.05, "the player branch played")
    }

    func testThirtyTwoVoicesRenderBitIdenticallyOnSeveralThreads() throws {
        try assertParallelRenderIsBitIdentical(voices: 32, seconds: 0.25, threadCounts: [2, 4])
    }

    func testTwoHundredFiftySixVoicesRenderBitIdenticallyOnSeveralThreads() throws {
        try assertParallelRenderIsBitIdentical(voices: 256, seconds: 0.16, threadCounts: [2])
    }

    /// 256 voices in nested sub-mixes: 8 sub-mixes of 32 voices (every fourth voice through an
    /// EQ), each sub-mix through an EQ into the master, and one noise source feeding two sub-mixes.
    private func nestedGraph(voices: Int, subMixes: Int, seconds: Double) -> String {
        var nodes: [String] = []
        var connections: [String] = []
        let per = voices / subMixes
        for m in 0..<subMixes {
            nodes.append(#"{ "id": "sub\#(m)", "type": "mixer", "inputBusCount": \#(per + 1) }"#)
            nodes.append(#"{ "id": "subeq\#(m)", "type": "eq", "properties": { "bands": [ { "type": "highShelf", "frequency": \#(2000 + 100 * m), "gain": -3 } ] } }"#)
            connections += [#"{ "from": "sub\#(m)", "to": "subeq\#(m)" }"#, #"{ "from": "subeq\#(m)", "to": "master:\#(m)" }"#]
            for v in 0..<per {
                let i = m * per + v
                nodes.append(#"{ "id": "o\#(i)", "type": "oscillator", "parameters": { "frequency": \#(80 + 7 * i), "amplitude": 0.01 }, "#
                    + #""properties": { "waveform": "\#(["sine", "sawtooth", "square", "triangle"][i % 4])" } }"#)
                if i % 4 == 1 {
                    nodes.append(#"{ "id": "eq\#(i)", "type": "eq", "properties": { "bands": [ { "type": "peak", "frequency": \#(300 + 9 * i), "gain": 4 } ] } }"#)
                    connections += [#"{ "from": "o\#(i)", "to": "eq\#(i)" }"#, #"{ "from": "eq\#(i)", "to": "sub\#(m):\#(v)" }"#]
                } else {
                    connections.append(#"{ "from": "o\#(i)", "to": "sub\#(m):\#(v)" }"#)
                }
            }
        }
        nodes.append(#"{ "id": "noise", "type": "oscillator", "parameters": { "amplitude": 0.02 }, "properties": { "waveform": "noise", "seed": 3 } }"#)
        connections += [#"{ "from": "noise", "to": "sub0:\#(per)" }"#, #"{ "from": "noise", "to": "sub1:\#(per)" }"#]
        nodes.append(#"{ "id": "master", "type": "mixer", "inputBusCount": \#(subMixes) }"#)
        nodes.append(#"{ "id": "out", "type": "genericOutput" }"#)
        connections.append(#"{ "from": "master", "to": "out" }"#)
        return """
            { "version": 1, "sampleRate": 48000, "duration": \(seconds),
              "nodes": [ \(nodes.joined(separator: ",\n")) ],
              "connections": [ \(connections.joined(separator: ", ")) ] }
            """
    }

    /// Nested sub-mixes split at both levels: phase 0 renders the voices and the shared noise
    /// source, phase 1 the eight sub-mix chains (each reads its voices), and the master sums them
    /// serially; the output equals the serial render's byte for byte on 2 and 4 threads. (Before,
    /// only the master's eight inputs were units: phases [[sub-mix chains]].)
    func testNestedSubMixesSplitAtEveryLevelBitIdentically() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(nestedGraph(voices: 256, subMixes: 8, seconds: 0.3), in: dir)
        var reference: Data?
        for threads in [1, 2, 4] {
            let out = dir.appendingPathComponent("out-\(threads).wav").path
            let r = try OfflineRenderer(v, outputPath: out, renderThreads: threads)
            let phases = r.built.graph.testOnly_parallelPhases
            try r.render(to: out)
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            guard threads > 1 else {
                XCTAssertEqual(phases, [])
                reference = data
                continue
            }
            XCTAssertEqual(phases.count, 2, "\(phases)")
            let first = Set(phases[0].flatMap { $0 }), second = Set(phases[1].flatMap { $0 })
            XCTAssertEqual(first.count, 257, "256 voices and the noise")
            XCTAssertTrue(first.contains("noise") && first.contains("eq1") && first.contains("o0") && !first.contains("o1"))
            XCTAssertEqual(second, Set((0..<8).map { "subeq\($0)" }))
            XCTAssertTrue(phases.allSatisfy { $0.count == threads && $0.allSatisfy { !$0.isEmpty } }, "every thread has work")
            XCTAssertGreaterThan(r.built.graph.testOnly_parallelGroups.workerRenderedGroups, 0, "the workers rendered")
            XCTAssertEqual(data, reference, "\(threads) threads: the output differs from the serial render")
        }
        let out = try AudioFileReader.read(path: dir.appendingPathComponent("out-1.wav").path)
        XCTAssertEqual(out.info.frames, 14_400)
        XCTAssertGreaterThan(out.channels[0].map(abs).max()!, 0.05, "not silent")
    }

    /// The thread count cannot change while the graph runs; 0 means 1.
    func testThreadCountIsSetWhileStopped() throws {
        let graph = AudioGraph()
        try graph.setRenderThreadCount(0)
        XCTAssertEqual(graph.renderThreadCount, 1)
        try graph.addNode(GenericOutputNode(id: "out"))
        try graph.initialize()
        try graph.setRenderThreadCount(3)
        XCTAssertEqual(graph.renderThreadCount, 3)
        try graph.start()
        XCTAssertThrowsError(try graph.setRenderThreadCount(2)) { error in
            guard case AudioGraphError.invalidState = error else { return XCTFail("\(error)") }
        }
        graph.stop()
        try graph.setRenderThreadCount(1)
        graph.uninitialize()
    }

    /// Review item 9: when worker threads cannot be created (pthread_create failing with EAGAIN,
    /// injected after 3 workers), setRenderThreadCount throws a one-line error instead of
    /// trapping; the started workers are joined, the count stays 1, and a count that fits works.
    func testUncreatableWorkersThrowInsteadOfTrapping() throws {
        RenderWorkerPool.testOnly_workerCreationLimit.withLock { $0 = 3 }
        defer { RenderWorkerPool.testOnly_workerCreationLimit.withLock { $0 = nil } }
        let graph = AudioGraph()
        try graph.addNode(GenericOutputNode(id: "out"))
        try graph.initialize()
        XCTAssertThrowsError(try graph.setRenderThreadCount(256)) { error in
            XCTAssertEqual(error as? AudioGraphError,
                           .renderThreadsUnavailable(requested: 256, reason: String(cString: strerror(EAGAIN))))
            XCTAssertEqual("\(error)", "cannot start 256 render threads: Resource temporarily unavailable")
        }
        XCTAssertEqual(graph.renderThreadCount, 1)
        try graph.setRenderThreadCount(4)   // 3 workers: within the limit
        XCTAssertEqual(graph.renderThreadCount, 4)
        graph.uninitialize()
    }
}
