// Renders every example graph in Graphs/ that uses only built node types and checks the result.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class ExampleGraphsTests: XCTestCase {
    /// The repository's Graphs/ folder, found from this file's path.
    static let graphsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Graphs")

    /// Every node type renders offline except live capture (a PulseAudio `output` is replaced
    /// by a generic output).
    static let supportedTypes: Set<String> = Set(NodeType.allCases.map(\.rawValue)).subtracting(["input"])

    func testEveryExampleGraphRendersFiniteNonSilentAndFullLength() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.graphsFolder.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertTrue(Set(["demo.json", "chords.json", "noise-sweep.json", "plate-voice.json"]).isSubset(of: Set(files)), "\(files)")
        let out = try TestFiles.makeTemporaryDirectory(self)
        var rendered = 0
        for name in files {
            let path = Self.graphsFolder.appendingPathComponent(name).path
            let v: ValidatedGraph
            do {
                v = try GraphLoader.load(path)
            } catch {
                XCTFail("\(name) does not load:\n\(error.description)")
                continue
            }
            guard v.description.nodes.allSatisfy({ Self.supportedTypes.contains($0.type.rawValue) }) else { continue }
            let target = out.appendingPathComponent(name.replacingOccurrences(of: ".json", with: ".wav")).path
            let r = try OfflineRenderer(v, outputPath: target)
            try r.render(to: target)
            let read = try AudioFileReader.read(path: target)
            let expectedFrames = Int64((v.defaultRenderDuration * read.info.sampleRate).rounded())
            XCTAssertEqual(read.info.frames, expectedFrames, name)
            XCTAssertEqual(read.info.sampleRate, r.outputRate, name)
            var peak: Float = 0
            var sum = 0.0
            var finite = true
            for channel in read.channels {
                for x in channel {
                    if !x.isFinite { finite = false }
                    peak = max(peak, abs(x))
                    sum += Double(x) * Double(x)
                }
            }
            let rms = (sum / Double(max(1, read.channels.count * read.channels[0].count))).squareRoot()
            XCTAssertTrue(finite, "\(name): non-finite samples")
            XCTAssertGreaterThan(peak, 0.05, "\(name) is (nearly) silent")
            XCTAssertLessThanOrEqual(peak, 1, "\(name) clips")
            XCTAssertGreaterThan(rms, 0.01, name)
            // Non-silent throughout: every second has some signal.
            let second = Int(read.info.sampleRate)
            for s in stride(from: 0, to: read.channels[0].count - second, by: second) {
                let slice = read.channels.map { $0[s..<(s + second)].map(abs).max()! }.max()!
                XCTAssertGreaterThan(slice, 0.001, "\(name): silent second at \(s / second) s")
            }
            rendered += 1
        }
        XCTAssertGreaterThanOrEqual(rendered, 7, "demo, chords, noise-sweep, karaoke, converter, game-scene, plate-voice")
    }

    func testDemoHasTheAdvertisedShape() throws {
        let v = try GraphLoader.load(Self.graphsFolder.appendingPathComponent("demo.json").path)
        let d = v.description
        XCTAssertEqual(d.sampleRate, 48000)
        XCTAssertEqual(d.duration, 10)
        XCTAssertEqual(v.formats["out"]?.inputs.first??.channels, 2, "stereo")
        XCTAssertGreaterThanOrEqual(Set(d.nodes.compactMap { n -> Waveform? in
            n.configuration.options(as: OscillatorProperties.self)?.waveform
        }).count, 3, "several waveforms")
        XCTAssertFalse(d.updates.isEmpty)
        XCTAssertTrue(d.nodes.contains { !$0.automation.isEmpty })
    }

    /// Graphs/monitor.json (input with a channel map → analyser → recorder → output) loads, has
    /// that shape, and renders offline: the output becomes a generic output, the input (no
    /// server) is silent, and the recorder writes exactly what reached the output.
    func testMonitorHasTheAdvertisedShapeAndRendersOfflineIntoItsRecorder() throws {
        let url = Self.graphsFolder.appendingPathComponent("monitor.json")
        let v = try GraphLoader.load(url.path)
        XCTAssertEqual(v.description.nodes.map(\.type.rawValue), ["input", "analyser", "recorder", "output"])
        XCTAssertEqual(v.formats["out"]?.inputs.first??.channels, 2, "the channel map's two channels")
        // Rendered in a temporary folder so the recording lands there.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let text = try String(contentsOf: url, encoding: .utf8)
        let local = try parseGraph(text, in: dir)
        let y = try renderToFile(local, dir.appendingPathComponent("out.wav").path, frames: 4800)
        XCTAssertEqual(y.channels.count, 2)
        XCTAssertEqual(y.channels[0].count, 4800)
        XCTAssertTrue(y.channels.allSatisfy { $0.allSatisfy { $0 == 0 } }, "no server: the input is silent")
        let take = try AudioFileReader.read(path: dir.appendingPathComponent("monitor-take.wav").path)
        XCTAssertEqual(take.info, AudioFileInfo(sampleRate: 48000, channels: 2, frames: 4800))
        XCTAssertEqual(take.channels, y.channels)
    }

    /// Graphs/plate-voice.json runs swh-lv2's plate reverb (mono in, stereo out): the output is
    /// stereo and, after the voice has died away (its level is 0.25·e^-8 by 4 s), the reverb
    /// tail still sounds in both channels, and they differ (the plate's two outputs).
    func testPlateVoiceRunsTheLV2PlateReverb() throws {
        let v = try GraphLoader.load(Self.graphsFolder.appendingPathComponent("plate-voice.json").path)
        XCTAssertEqual(v.description.nodes.map(\.type.rawValue), ["oscillator", "lv2", "genericOutput"])
        XCTAssertEqual(v.formats["out"]?.inputs.first??.channels, 2)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let y = try renderToFile(v, dir.appendingPathComponent("plate.wav").path, frames: 48000 * 5)
        let tail = y.channels.map { $0[(48000 * 4)...].map(abs).max()! }
        XCTAssertGreaterThan(tail[0], 0.005, "left reverb tail")
        XCTAssertGreaterThan(tail[1], 0.005, "right reverb tail")
        XCTAssertNotEqual(y.channels[0], y.channels[1])
    }
}
