// The stock nodes' lazily loaded C libraries: a node whose library cannot be loaded is refused by addNode with one line naming it.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class LazyLibraryNodesTests: XCTestCase {
    /// What the loader says of a soname its test hook ($AG_LAZY_LIBRARY_MISSING) hides.
    func hidden(_ soname: String) -> String { "\(soname): cannot open shared object file (AG_LAZY_LIBRARY_MISSING)" }

    /// Adds `make()`'s node to a new graph while `soname` is hidden: refused with the library's
    /// error (nothing added), then accepted once the library is back.
    func assertRefused(_ soname: String, library: String, _ make: () throws -> GraphNode,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let graph = AudioGraph()
        let node = try make()
        setenv("AG_LAZY_LIBRARY_MISSING", soname, 1)
        do {
            defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
            XCTAssertThrowsError(try graph.addNode(node), file: file, line: line) { error in
                XCTAssertEqual(error as? AudioGraphError,
                               .libraryNotLoadable(node: node.id, library: library, reason: hidden(soname)), file: file, line: line)
                XCTAssertEqual("\(error)", "node \"\(node.id)\": cannot load \(library): \(hidden(soname))", file: file, line: line)
            }
            XCTAssertNil(graph.node(node.id), "nothing added", file: file, line: line)
        }
        XCTAssertNoThrow(try graph.addNode(node), file: file, line: line)
    }

    func testATimePitchNodeNeedsRubberBand() throws {
        try assertRefused("librubberband.so.2", library: "librubberband") { TimePitchNode(id: "tp", sampleRate: 48000) }
    }

    func testAConvolverNeedsFFTW() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: 48000, channels: [[1, 0.5, 0.25]]).write(to: url)
        try assertRefused("libfftw3f.so.3", library: "libfftw3f") {
            try ConvolverNode(id: "conv", sampleRate: 48000, properties: ConvolverProperties(file: url.path))
        }
    }

    func testAnAnalyserNeedsFFTW() throws {
        try assertRefused("libfftw3f.so.3", library: "libfftw3f") { try AnalyserNode(id: "an") }
    }

    /// With HRTF rendering, libmysofa and FFTW; with equal-power panning, neither.
    func testAnHRTFEnvironmentNeedsLibmysofaAndFFTW() throws {
        let hrtf = EnvironmentProperties(renderingAlgorithm: .hrtf)
        try assertRefused("libmysofa.so.1", library: "libmysofa") { EnvironmentNode(id: "env", sampleRate: 48000, properties: hrtf) }
        try assertRefused("libfftw3f.so.3", library: "libfftw3f") { EnvironmentNode(id: "env", sampleRate: 48000, properties: hrtf) }
        setenv("AG_LAZY_LIBRARY_MISSING", "libmysofa.so.1,libfftw3f.so.3", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertNoThrow(try AudioGraph().addNode(EnvironmentNode(id: "env", sampleRate: 48000)))
    }

    /// An HRTF set needs FFTW for its spectra (an environment switched to HRTF while running
    /// loads its set in makeKernel): its own error, naming the library.
    func testAnHRTFSetNeedsFFTW() {
        setenv("AG_LAZY_LIBRARY_MISSING", "libfftw3f.so.3", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertThrowsError(try HRTFSet(sampleRate: 48000)) { error in
            XCTAssertEqual(error as? HRTFSet.Error, .libraryMissing(library: "libfftw3f", reason: hidden("libfftw3f.so.3")))
            XCTAssertEqual("\(error)", "cannot load libfftw3f: \(hidden("libfftw3f.so.3"))")
        }
    }

    /// A rate conversion needs libsoxr (`best`) or libsamplerate (the other qualities): the
    /// resampler's own error, naming the library, before anything is allocated; and a graph whose
    /// connection converts refuses to start with the same reason at that connection.
    func testARateConversionNeedsItsLibrary() throws {
        for (soname, library, quality) in [("libsoxr.so.0", "libsoxr", Resampler.Quality.best),
                                           ("libsamplerate.so.0", "libsamplerate", .medium)] {
            setenv("AG_LAZY_LIBRARY_MISSING", soname, 1)
            XCTAssertThrowsError(try Resampler(channelCount: 2, inputSampleRate: 44100, outputSampleRate: 48000,
                                               quality: quality) { _, _ in 0 }) { error in
                XCTAssertEqual(error as? ResamplerError, .libraryMissing(library: library, reason: hidden(soname)))
            }
            unsetenv("AG_LAZY_LIBRARY_MISSING")
            XCTAssertNoThrow(try Resampler(channelCount: 2, inputSampleRate: 44100, outputSampleRate: 48000,
                                           quality: quality) { _, _ in 0 })
        }
        let error = ResamplingInputAdapter.conversionError(
            nodeID: "mix", sourceFormat: StreamFormat(sampleRate: 44100, channelCount: 2), targetSampleRate: 48000,
            .libraryMissing(library: "libsoxr", reason: hidden("libsoxr.so.0")))
        XCTAssertTrue("\(error)".contains("cannot convert 44100 Hz to 48000 Hz, cannot load libsoxr: \(hidden("libsoxr.so.0"))"), "\(error)")
    }

    /// The test hook hides exactly the sonames it lists, at every load (not cached).
    func testTheHookHidesOnlyTheListedLibrary() {
        XCTAssertNil(LazyLibrary.fftw.loadFailure, "FFTW is installed here")
        setenv("AG_LAZY_LIBRARY_MISSING", "libfftw3f.so.3", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertEqual(LazyLibrary.fftw.loadFailure, hidden("libfftw3f.so.3"))
        XCTAssertNil(LazyLibrary.rubberBand.loadFailure, "only the listed soname is hidden")
    }
}

extension LazyLibraryNodesTests {
    /// Without libsndfile, reading and writing any type but plain WAV fail with one line naming
    /// the file and the library; a WAV is still written and read (``WAVFileWriter``,
    /// ``WAVFileReader`` need no libsndfile).
    func testSoundFilesButPlainWAVNeedLibsndfile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("a.wav").path, flac = dir.appendingPathComponent("a.flac").path
        let aiff = dir.appendingPathComponent("a.aiff").path
        try TestFiles.writeSoundFile(aiff, [[0.5, -0.5]], sampleRate: 48000, sampleType: .int16)
        let format = StreamFormat(sampleRate: 48000, channelCount: 1, sampleType: .int16)
        let slice = ChannelBufferStorage(channelCount: 1, capacity: 4)
        for i in 0..<4 { slice.list.channel(0)[i] = 0.25 * Float(i) }
        setenv("AG_LAZY_LIBRARY_MISSING", "libsndfile.so.1", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        let w = try AudioFileWriter(path: wav, format: format)
        try w.write(slice.list, frameCount: 4)
        try w.close()
        XCTAssertEqual(try AudioFileReader.read(path: wav).channels, [[0, 0.25, 0.5, 0.75]])
        XCTAssertThrowsError(try AudioFileReader.info(path: aiff)) {
            XCTAssertEqual("\($0)", "\(aiff): cannot open: cannot load libsndfile: \(hidden("libsndfile.so.1"))")
        }
        XCTAssertThrowsError(try SeekableAudioFileReader(path: aiff))
        XCTAssertThrowsError(try AudioFileWriter(path: flac, format: format)) {
            XCTAssertEqual("\($0)", "\(flac): cannot open: cannot load libsndfile: \(hidden("libsndfile.so.1"))")
        }
        XCTAssertThrowsError(try AudioFileWriter.validate(path: flac, sampleType: .int16, channels: 1, sampleRate: 48000))
        XCTAssertFalse(FileManager.default.fileExists(atPath: flac), "nothing created")
    }
}
