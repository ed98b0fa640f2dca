// Tests of OfflineRenderer's threads: workers only for a graph with branches to render in parallel, kernel helpers by the thread count.
@testable import AudioGraphCore
@testable import AudioGraphKit
import AudioGraphRealtime
import Synchronization
import AudioGraphTesting
import Foundation
import XCTest

final class OfflineRendererThreadTests: XCTestCase {
    func graph(_ text: String) throws -> ValidatedGraph { try GraphLoader.parse(text: text, fileName: "t.json", baseDirectory: "/") }

    /// A chain (oscillator → eq → output) with `renderThreads: 2` starts no worker (nothing to
    /// split; its kernels are still told the count); two oscillators into a mixer, or one source
    /// feeding two nodes, start them. The chain's bytes are those of a serial render.
    func testOnlyAGraphWithBranchesStartsWorkers() throws {
        let chain = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "o", "type": "oscillator" }, { "id": "eq", "type": "eq", "properties": { "bands": [ { "type": "peak", "frequency": 500, "gain": 3 } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        let mix = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "b", "type": "oscillator", "parameters": { "frequency": 660 } },
                         { "id": "m", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "m:0" }, { "from": "b", "to": "m:1" }, { "from": "m", "to": "out" } ] }
            """)
        let fan = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "d1", "type": "delay" }, { "id": "d2", "type": "delay" },
                         { "id": "m", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "d1" }, { "from": "a", "to": "d2" }, { "from": "d1", "to": "m:0" },
                               { "from": "d2", "to": "m:1" }, { "from": "m", "to": "out" } ] }
            """)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let serial = dir.appendingPathComponent("serial.wav").path, two = dir.appendingPathComponent("two.wav").path
        let r1 = try OfflineRenderer(chain, outputPath: serial, renderThreads: 1)
        try r1.render(to: serial)
        let r2 = try OfflineRenderer(chain, outputPath: two, renderThreads: 2)
        XCTAssertEqual(r2.built.graph.renderThreadCount, 2, "the kernels are told the count asked for")
        XCTAssertFalse(r2.built.graph.testOnly_hasRenderWorkers, "a chain starts no worker")
        try r2.render(to: two)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: serial)), try Data(contentsOf: URL(fileURLWithPath: two)))
        for (name, g) in [("mixer", mix), ("fan-out", fan)] {
            let r = try OfflineRenderer(g, outputPath: two, renderThreads: 2)
            XCTAssertEqual(r.built.graph.renderThreadCount, 2, name)
            XCTAssertTrue(r.built.graph.testOnly_hasRenderWorkers, name)
        }
    }

    /// `renderThreads: nil` (the command line without `--threads`): a plain chain renders on one
    /// thread without asking the system how many it has; a mixer of two sources, a fan-out, a
    /// chain through a convolver or `timePitch`, and a chain whose timeline has updates get the
    /// processors available (``AvailableProcessors``, Foundation's count on Linux).
    func testNoThreadCountAsksTheSystemOnlyForAGraphWithWorkForMoreThreads() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let available = ProcessInfo.processInfo.activeProcessorCount
        XCTAssertEqual(AvailableProcessors.count, available)
        let ir = (0..<480).map { i in Float(exp(-Double(i) / 80)) }
        try WAVFile(sampleRate: 48000, channels: [ir, ir]).write(to: dir.appendingPathComponent("ir.wav"))
        func chain(through node: String, updates: String = "") throws -> ValidatedGraph {
            try GraphLoader.parse(text: """
                { "version": 1, "sampleRate": 48000, "duration": 0.1,
                  "nodes": [ { "id": "o", "type": "oscillator", "properties": { "channels": 2 } }, \(node),
                             { "id": "out", "type": "genericOutput" } ],
                  "connections": [ { "from": "o", "to": "x" }, { "from": "x", "to": "out" } ]\(updates) }
                """, fileName: "t.json", baseDirectory: dir.path)
        }
        let gain = #"{ "id": "x", "type": "gain" }"#
        let cases: [(String, ValidatedGraph, Int)] = [
            ("chain", try chain(through: gain), 1),
            ("chain with an update", try chain(through: gain, updates: #", "updates": [ { "time": 0.05, "actions": [ { "setParameter": { "node": "x", "address": "gain", "value": 0.5 } } ] } ]"#), available),
            ("convolver", try chain(through: #"{ "id": "x", "type": "convolver", "properties": { "file": "ir.wav" } }"#), available),
            ("timePitch", try chain(through: #"{ "id": "x", "type": "timePitch", "properties": { "quality": "finer" } }"#), available),
            ("mixer", try graph("""
                { "version": 1, "sampleRate": 48000, "duration": 0.1,
                  "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "b", "type": "oscillator" },
                             { "id": "m", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
                  "connections": [ { "from": "a", "to": "m:0" }, { "from": "b", "to": "m:1" }, { "from": "m", "to": "out" } ] }
                """), available),
            ("fan-out", try graph("""
                { "version": 1, "sampleRate": 48000, "duration": 0.1,
                  "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "g", "type": "gain" }, { "id": "m", "type": "channelMerger" },
                             { "id": "out", "type": "genericOutput" } ],
                  "connections": [ { "from": "a", "to": "g" }, { "from": "a", "to": "m:1" }, { "from": "g", "to": "m:0" }, { "from": "m", "to": "out" } ] }
                """), available),
        ]
        for (name, g, expected) in cases {
            let path = dir.appendingPathComponent("\(name).wav").path
            let r = try OfflineRenderer(g, outputPath: path, renderThreads: nil)
            XCTAssertEqual(r.built.graph.renderThreadCount, expected, name)
            XCTAssertEqual(r.built.graph.hasWorkForSeveralRenderThreads, name != "chain" && name != "chain with an update", name)
        }
    }

    /// A chain through a convolver keeps its render threads: the convolver computes its second
    /// output on a helper thread when the graph renders on more than one, with the bytes of the
    /// serial render, and no worker starts (nothing to split).
    func testAConvolverChainKeepsItsRenderThreads() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir = (0..<4800).map { i in Float(exp(-Double(i) / 800)) * (i % 7 == 0 ? 0.5 : -0.25) }
        try WAVFile(sampleRate: 48000, channels: [ir, ir.reversed()]).write(to: dir.appendingPathComponent("ir.wav"))
        let chain = try GraphLoader.parse(text: """
            { "version": 1, "sampleRate": 48000, "duration": 0.5,
              "nodes": [ { "id": "o", "type": "oscillator", "properties": { "waveform": "noise", "channels": 2 } },
                         { "id": "conv", "type": "convolver", "properties": { "file": "ir.wav" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "conv" }, { "from": "conv", "to": "out" } ] }
            """, fileName: "t.json", baseDirectory: dir.path)
        let serial = dir.appendingPathComponent("serial.wav").path, two = dir.appendingPathComponent("two.wav").path
        try OfflineRenderer(chain, outputPath: serial, renderThreads: 1).render(to: serial)
        let r2 = try OfflineRenderer(chain, outputPath: two, renderThreads: 2)
        XCTAssertEqual(r2.built.graph.renderThreadCount, 2, "the convolver splits its work across the render threads")
        XCTAssertFalse(r2.built.graph.testOnly_hasRenderWorkers, "a chain starts no worker")
        try r2.render(to: two)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: serial)), try Data(contentsOf: URL(fileURLWithPath: two)))
    }

    /// One rule for every kernel helper: with one render thread (`audiograph render --threads 1`)
    /// neither the convolver nor `timePitch` (finer, stereo: channel 1 on a helper) starts a
    /// thread; with more (the command line's default, the core count) each starts its one helper
    /// and no worker starts for the chain. The bytes are the same. Threads are counted as they
    /// start (the helpers' test hook; the helpers run every job, so they have started before the
    /// render returns).
    func testOneRenderThreadStartsNoHelperThreadAndMoreStartOnePerKernel() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir = (0..<4800).map { i in Float(exp(-Double(i) / 800)) * (i % 7 == 0 ? 0.5 : -0.25) }
        try WAVFile(sampleRate: 48000, channels: [ir, ir.reversed()]).write(to: dir.appendingPathComponent("ir.wav"))
        let chain = try GraphLoader.parse(text: """
            { "version": 1, "sampleRate": 48000, "duration": 0.3,
              "nodes": [ { "id": "o", "type": "oscillator", "properties": { "waveform": "noise", "channels": 2 } },
                         { "id": "conv", "type": "convolver", "properties": { "file": "ir.wav" } },
                         { "id": "tp", "type": "timePitch", "properties": { "quality": "finer" }, "parameters": { "rate": 1.25 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "conv" }, { "from": "conv", "to": "tp" }, { "from": "tp", "to": "out" } ] }
            """, fileName: "t.json", baseDirectory: dir.path)
        let started = Atomic<Int>(0)
        RenderHelperThread.testOnly_setThreadHook { starting in if starting { started.wrappingAdd(1, ordering: .relaxed) } }
        let saved = RenderHelperThread.testOnly_helperRunsEveryJob.load(ordering: .relaxed)
        RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        defer {
            RenderHelperThread.testOnly_setThreadHook(nil)
            RenderHelperThread.testOnly_helperRunsEveryJob.store(saved, ordering: .relaxed)
        }
        func render(threads: Int) throws -> (threads: Int, bytes: Data) {
            started.store(0, ordering: .relaxed)
            let path = dir.appendingPathComponent("t\(threads).wav").path
            let r = try OfflineRenderer(chain, outputPath: path, renderThreads: threads)
            try r.render(to: path)
            XCTAssertFalse(r.built.graph.testOnly_hasRenderWorkers, "\(threads) threads: a chain starts no worker")
            return (started.load(ordering: .relaxed), try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let one = try render(threads: 1)
        XCTAssertEqual(one.threads, 0, "--threads 1: no helper thread")
        for threads in Set([2, ProcessInfo.processInfo.activeProcessorCount]) where threads > 1 {
            let more = try render(threads: threads)
            XCTAssertEqual(more.threads, 2, "\(threads) threads: the convolver's helper and timePitch's")
            XCTAssertEqual(more.bytes, one.bytes, "\(threads) threads")
        }
    }
}
