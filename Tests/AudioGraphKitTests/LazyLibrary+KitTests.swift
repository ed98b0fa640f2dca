// A C library opened on first use that cannot be loaded, through the engine API, graph files and plots: a thrown one-line error naming it, never an abort.
import AudioGraphCore
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class LazyLibraryKitTests: XCTestCase {
    /// What the loader says of a soname its test hook ($AG_LAZY_LIBRARY_MISSING) hides.
    func hidden(_ soname: String) -> String { "\(soname): cannot open shared object file (AG_LAZY_LIBRARY_MISSING)" }

    func hide(_ soname: String) {
        setenv("AG_LAZY_LIBRARY_MISSING", soname, 1)
        addTeardownBlock { unsetenv("AG_LAZY_LIBRARY_MISSING") }
    }

    /// The engine's start() throws the graph's error for the unit's node, and starts once the library is back.
    func assertStartFails(_ unit: AudioNode, soname: String, library: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let engine = try makeManualEngine(through: unit)
        hide(soname)
        XCTAssertThrowsError(try engine.start(), file: file, line: line) { error in
            guard case let .graph(call, graphError)? = error as? AudioEngineError,
                  case let .libraryNotLoadable(_, name, reason) = graphError else {
                return XCTFail("unexpected \(error)", file: file, line: line)
            }
            XCTAssertEqual(call, "start()", file: file, line: line)
            XCTAssertEqual(name, library, file: file, line: line)
            XCTAssertEqual(reason, hidden(soname), file: file, line: line)
            XCTAssertTrue("\(error)".hasPrefix("start(): node \""), "\(error)", file: file, line: line)
            XCTAssertTrue("\(error)".hasSuffix("\": cannot load \(library): \(hidden(soname))"), "\(error)", file: file, line: line)
        }
        unsetenv("AG_LAZY_LIBRARY_MISSING")
        XCTAssertNoThrow(try engine.start(), file: file, line: line)
        XCTAssertNoThrow(try render(engine, frames: 512), file: file, line: line)
    }

    /// A loudness measurement needs libebur128: the meter's own error naming it.
    func testALoudnessMeterWithoutLibebur128Throws() throws {
        hide("libebur128.so.1")
        XCTAssertThrowsError(try LoudnessMeter(channelCount: 2, sampleRate: 48000)) { error in
            XCTAssertEqual(error as? LoudnessMeterError, .libraryMissing(library: "libebur128", reason: hidden("libebur128.so.1")))
            XCTAssertEqual("\(error)", "cannot load libebur128: \(hidden("libebur128.so.1"))")
        }
        unsetenv("AG_LAZY_LIBRARY_MISSING")
        XCTAssertNoThrow(try LoudnessMeter(channelCount: 2, sampleRate: 48000))
    }

    func testATimePitchUnitWithoutRubberBandFailsTheStart() throws {
        try assertStartFails(AudioUnitTimePitch(), soname: "librubberband.so.2", library: "librubberband")
    }

    func testAConvolverWithoutFFTWFailsTheStart() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: 48000, channels: [[1, 0.5, 0.25]]).write(to: url)
        try assertStartFails(AudioUnitConvolver(impulseResponseURL: url), soname: "libfftw3f.so.3", library: "libfftw3f")
    }

    func testAnAnalyserWithoutFFTWFailsTheStart() throws {
        try assertStartFails(AudioAnalyserNode(), soname: "libfftw3f.so.3", library: "libfftw3f")
    }

    /// `AudioUnitLV2(uri:)` reads the LV2 catalogue: without liblilv, its own error.
    func testAnLV2UnitWithoutLilvThrows() {
        hide("liblilv-0.so.0")
        XCTAssertThrowsError(try AudioUnitLV2(uri: "http://plugin.org.uk/swh-plugins/amp")) { error in
            XCTAssertEqual(error as? LV2Error, .libraryMissing(reason: hidden("liblilv-0.so.0")))
            XCTAssertEqual("\(error)", "cannot load liblilv, so LV2 plugins cannot be used: \(hidden("liblilv-0.so.0"))")
        }
        XCTAssertThrowsError(try LV2World.shared())
        XCTAssertThrowsError(try LV2World(searchPath: "/nonexistent"))
    }

    /// A live engine (not manual rendering) connects to PulseAudio in start(): without libpulse,
    /// a thrown PulseError of its own kind, not `noServer`.
    func testALiveEngineWithoutLibpulseFailsTheStart() {
        hide("libpulse.so.0")
        let engine = AudioEngine()
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        XCTAssertThrowsError(try engine.start()) { error in
            guard case let .pulse(call, pulseError)? = error as? AudioEngineError else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(call, "start()")
            XCTAssertEqual(pulseError, .libraryMissing(library: "libpulse", reason: hidden("libpulse.so.0")))
            XCTAssertEqual("\(error)", "start(): cannot load libpulse: \(hidden("libpulse.so.0"))")
        }
    }

    /// A graph file's node whose library is missing: the loader's one line at the node's place.
    func testAGraphFileNamesTheNodeAndTheLibrary() {
        hide("librubberband.so.2")
        let text = """
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "tp", "type": "timePitch" },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" } ] }
            """
        XCTAssertThrowsError(try GraphLoader.parse(text: text, fileName: "g.json")) { error in
            XCTAssertEqual((error as? GraphDescriptionErrors)?.lines,
                           ["g.json: nodes[1] (id \"tp\"): node \"tp\": cannot load librubberband: \(hidden("librubberband.so.2"))"])
        }
    }

    /// A spectrum plot needs FFTW: its own error (and no picture), like a missing cairo.
    func testASpectrumPlotWithoutFFTWIsAOneLineError() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("s.wav").path, png = dir.appendingPathComponent("s.png").path
        try TestFiles.writeSoundFile(wav, [[Float](repeating: 0.5, count: 4800)], sampleRate: 48000)
        hide("libfftw3f.so.3")
        for kind in [PlotKind.spectrum, .spectrogram] {
            XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: png, kind: kind)) { error in
                XCTAssertEqual(error as? PlotError, .libraryMissing(library: "libfftw3f", reason: hidden("libfftw3f.so.3")))
                XCTAssertEqual("\(error)", "cannot load libfftw3f: \(hidden("libfftw3f.so.3"))")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["s.wav"])
        XCTAssertNoThrow(try AudioPlot.draw(file: wav, to: png, kind: .waveform), "a waveform needs no FFTW")
    }
}
