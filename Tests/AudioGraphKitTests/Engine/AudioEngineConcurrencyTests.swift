// The engine API hammered from several threads at once (attach, connect, taps, start/stop, rendering), live and manual; run under ThreadSanitizer by `make tsan`.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

/// Each worker thread owns its nodes (so no call is a programmer error AVAudioEngine would stop
/// on) but every call goes through the one engine at the same time as the others': attach,
/// connect to the main mixer, disconnect, detach; install and remove a tap; set a mixing
/// volume; and render (manual) or start and stop (live). The engine must serialize them:
/// no crash, no data race reported by ThreadSanitizer (`make tsan` runs this file, its name
/// matching `Concurrency`), and afterwards a render still plays exactly what is connected.
final class AudioEngineConcurrencyTests: DefaultPulseServerTestCase {
    typealias Worker = @Sendable (Int) throws -> Void

    /// How long each hammer runs (seconds); `AG_HAMMER_SECONDS` for a longer run.
    var seconds: Double { ProcessInfo.processInfo.environment["AG_HAMMER_SECONDS"].flatMap(Double.init) ?? 1.5 }

    /// Runs `workers` on their own threads until `seconds` have passed; returns each one's call count.
    func hammer(_ workers: [Worker]) throws -> [Int] {
        let stop = Atomic<Bool>(false)
        let counts = Mutex([Int](repeating: 0, count: workers.count))
        let failures = Mutex([String]())
        let group = DispatchGroup()
        for (index, work) in workers.enumerated() {
            group.enter()
            Thread.detachNewThread {
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    do { try work(n) } catch { failures.withLock { $0.append("worker \(index): \(error)") } }
                    n += 1
                }
                counts.withLock { $0[index] = n }
                group.leave()
            }
        }
        Thread.sleep(forTimeInterval: seconds)
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "a worker is stuck")
        XCTAssertEqual(failures.withLock { $0 }, [])
        return counts.withLock { $0 }
    }

    /// The node-owning workers: attach/connect/disconnect/detach a source, tap the main mixer,
    /// change a mixing volume.
    func editors(_ engine: AudioEngine) -> [Worker] {
        let a = makeSineSource(frequency: 440), b = makeSineSource(frequency: 660)
        let kept = makeSineSource(frequency: 880)
        engine.attach(kept)
        engine.connect(kept, to: engine.mainMixerNode, format: nil)
        let taps = Atomic<Int>(0)
        return [
            { _ in
                engine.attach(a)
                engine.connect(a, to: engine.mainMixerNode, format: nil)
                engine.disconnectNodeOutput(a)
                engine.detach(a)
            },
            { n in
                engine.attach(b)
                engine.connect(b, to: engine.mainMixerNode, format: nil)
                if n % 2 == 0 { engine.detach(b) } else { engine.disconnectNodeOutput(b); engine.detach(b) }
            },
            { _ in
                engine.mainMixerNode.installTap(onBus: 0, bufferSize: 512, format: nil) { _, _ in taps.add(1, ordering: .relaxed) }
                usleep(2_000)
                engine.mainMixerNode.removeTap(onBus: 0)
            },
            { n in kept.volume = n % 2 == 0 ? 0.25 : 0.5 },
        ]
    }

    /// Manual offline rendering on one thread while the others edit: every render succeeds
    /// with finite samples; afterwards only the kept source plays, at its last volume.
    func testManualRenderingWhileOtherThreadsEditTheEngine() throws {
        let engine = try makeManualEngine(maximum: 1024)
        var workers = editors(engine)
        try engine.start()
        let format = engine.manualRenderingFormat
        // Used by the render worker only.
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1024))
        let bad = Atomic<Int>(0)
        workers.append { n in
            let status = try engine.renderOffline(AudioFrameCount(64 + n % 900), to: buffer)
            if status != .success { bad.add(1, ordering: .relaxed) }
            for c in 0..<Int(format.channelCount) {
                let p = buffer.floatChannelData![c]
                for i in 0..<Int(buffer.frameLength) where !p[i].isFinite { bad.add(1, ordering: .relaxed) }
            }
        }
        let counts = try hammer(workers)
        print("manual hammer: calls per worker (attach/detach, attach/detach, tap, volume, render): \(counts)")
        XCTAssertTrue(counts.allSatisfy { $0 > 0 }, "\(counts)")
        XCTAssertEqual(bad.load(ordering: .relaxed), 0)
        let out = try render(engine, frames: 4800)
        XCTAssertTrue(out.allSatisfy { $0.allSatisfy(\.isFinite) })
        XCTAssertGreaterThan(SignalMeasurement.rms(out[0][2400...]), 0.05)
        engine.stop()
    }

    /// Live, on the private PulseAudio server: start and stop from one thread while the others
    /// edit; the engine ends stopped or running as the last call said, and plays afterwards.
    func testStartAndStopWhileOtherThreadsEditTheEngine() throws {
        let engine = AudioEngine()
        var workers = editors(engine)
        workers.append { n in
            if n % 2 == 0 { try engine.start() } else { engine.stop() }
            usleep(3_000)
        }
        let counts = try hammer(workers)
        print("live hammer: calls per worker (attach/detach, attach/detach, tap, volume, start/stop): \(counts)")
        XCTAssertTrue(counts.allSatisfy { $0 > 0 }, "\(counts)")
        try engine.start()
        XCTAssertTrue(engine.isRunning)
        engine.stop()
        XCTAssertFalse(engine.isRunning)
    }
}
