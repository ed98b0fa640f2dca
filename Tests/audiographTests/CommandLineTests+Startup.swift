// Tests of the CLI's start-up: a plain render loads only what it uses (CAVCodecLazy, the CLazyLibrary trampolines).
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

extension CommandLineTests {
    /// The dynamic loader's own list (`LD_DEBUG=libs`) of a 0.1 s render to WAV: neither FFmpeg's
    /// libavformat and libavcodec nor libsndfile and its codecs (FLAC, Vorbis, Opus, mpg123, LAME)
    /// are loaded, nor by a graph playing that file into another WAV (which gets the same bytes);
    /// the same render to FLAC loads libsndfile and FLAC, and not FFmpeg. Before
    /// CAVCodecLazy FFmpeg was linked and loaded at every start with about 100 more shared objects;
    /// before CSndFileLazy and WAVFileWriter libsndfile came with its seven codec libraries to
    /// every run (this test failed both times).
    func testARenderLoadsOnlyTheFileLibrariesItsOutputNeeds() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let r = try run(["render", "sine.json", "-o", "sine.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(r.status, 0, r.stderr.suffix(2000).description)
        XCTAssertTrue(r.stderr.contains("libc.so"), "LD_DEBUG lists the loaded libraries")
        for library in ["libavformat", "libavcodec", "libsndfile", "libFLAC", "libvorbis", "libopus", "libmpg123", "libmp3lame"] {
            XCTAssertFalse(r.stderr.contains(library + "."), "\(library) loaded by a render to WAV")
        }
        // A graph playing that WAV file into another: still no libsndfile (WAVFileReader).
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "p", "type": "player", "properties": { "file": "sine.wav" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "out" } ] }
            """, "replay.json", in: dir)
        let replay = try run(["render", "replay.json", "-o", "replay.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(replay.status, 0, replay.stderr.suffix(2000).description)
        XCTAssertFalse(replay.stderr.contains("libsndfile."), "libsndfile loaded to read and write WAV files")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("replay.wav")), try Data(contentsOf: dir.appendingPathComponent("sine.wav")),
                       "the same samples back, byte for byte")
        let flac = try run(["render", "sine.json", "-o", "sine.flac", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(flac.status, 0, flac.stderr.suffix(2000).description)
        XCTAssertTrue(flac.stderr.contains("libsndfile.so"), "a render to FLAC loads libsndfile")
        XCTAssertTrue(flac.stderr.contains("libFLAC.so"), "a render to FLAC loads libFLAC")
        XCTAssertFalse(flac.stderr.contains("libavformat"), "FFmpeg loaded without AAC")
    }

    /// The same 0.1 s oscillator render loads none of the libraries only other commands and node
    /// types use (cairo, libpulse, lilv, librubberband, libmysofa, FFTW, libfluidsynth,
    /// webrtc-audio-processing, and, converting no rate and measuring no loudness, libsoxr with
    /// libgomp, libsamplerate and libebur128: failed while those were linked) and at most
    /// 20 shared objects besides the Swift runtime's own (which the release CLI links statically):
    /// 17 measured with libsndfile linked, 84 when the others were linked too (and this test failed).
    func testAPlainRenderLoadsNoLibraryItDoesNotUse() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let r = try run(["render", "sine.json", "-o", "sine.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(r.status, 0, r.stderr.suffix(2000).description)
        let initialised = r.stderr.split(separator: "\n").filter { $0.contains("calling init:") && !$0.contains("/swift/") }
        XCTAssertGreaterThan(initialised.count, 3, "LD_DEBUG lists the initialised objects")
        XCTAssertLessThanOrEqual(initialised.count, 20, initialised.joined(separator: "\n"))
        for library in ["libcairo", "libpulse", "liblilv", "librubberband", "libmysofa", "libfftw3f", "libfluidsynth",
                        "libwebrtc_audio_processing", "libsoxr", "libgomp", "libsamplerate", "libebur128", "libsndfile"] {
            XCTAssertFalse(r.stderr.contains(library + "."), "\(library) loaded by a plain render")
        }
    }

    /// The release CLI carries its own libstdc++ (linked statically, Makefile RELEASE_FLAGS): a
    /// plain render maps no libstdc++.so.6, while a C++ library loaded later brings the shared one
    /// for itself and works beside the static copy — a `timePitch` octave up (librubberband,
    /// `finer`) renders a 440 Hz sine as 880 Hz (the fitted tone within 0.5 Hz, at its level).
    /// The first assertion failed before the static link (libstdc++.so.6 was loaded at every start).
    func testTheCLICarriesItsOwnLibstdcxxAndCPlusPlusLibrariesBringTheirs() throws {
        let cli = try releaseExecutable()  // the debug build links libstdc++ dynamically
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let plain = try run(["render", "sine.json", "-o", "sine.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"], executable: cli)
        XCTAssertEqual(plain.status, 0, plain.stderr.suffix(2000).description)
        XCTAssertTrue(plain.stderr.contains("libc.so"), "LD_DEBUG lists the loaded libraries")
        XCTAssertFalse(plain.stderr.contains("libstdc++"), "libstdc++.so.6 loaded by a plain render")
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 1,
              "nodes": [ { "id": "o", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
                         { "id": "t", "type": "timePitch", "parameters": { "pitch": 1200 }, "properties": { "quality": "finer" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "t" }, { "from": "t", "to": "out" } ] }
            """, "octave.json", in: dir)
        let octave = try run(["render", "octave.json", "-o", "octave.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"],
                            executable: cli)
        XCTAssertEqual(octave.status, 0, octave.stderr.suffix(2000).description)
        XCTAssertTrue(octave.stderr.contains("librubberband.so"), "timePitch finer loads librubberband")
        XCTAssertTrue(octave.stderr.contains("libstdc++.so"), "librubberband brings the shared libstdc++")
        let wav = try WAVFile(contentsOf: dir.appendingPathComponent("octave.wav"))
        let steady = wav.samples[0][24_000..<44_000]
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: steady, sampleRate: 48_000))
        XCTAssertEqual(fit.tones[0].frequency, 880, accuracy: 0.5)
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 0.1)
    }

    /// A library is loaded by the first call of one of its functions, in a fresh process: an SVG
    /// plot loads cairo there, and its first call, `cairo_svg_surface_create(path, width, height)`,
    /// whose sizes travel in vector registers through the trampolines' slow entry, gets them intact
    /// (the SVG says 640 x 200 pt). Seen failing (`width="0pt"`) with the slow entry clearing
    /// %xmm0 before its jump.
    func testALazyLibraryLoadsOnFirstCallWithItsArguments() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        XCTAssertEqual(try run(["render", "sine.json", "-o", "sine.wav", "--quiet"], in: dir).status, 0)
        let r = try run(["plot", "sine.wav", "-o", "p.svg", "--width", "640", "--height", "200"], in: dir,
                        environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(r.status, 0, r.stderr.suffix(2000).description)
        XCTAssertTrue(r.stderr.contains("libcairo.so"), "a plot loads cairo")
        let svg = try String(contentsOf: dir.appendingPathComponent("p.svg"), encoding: .utf8)
        XCTAssertTrue(svg.contains("width=\"640pt\" height=\"200pt\" viewBox=\"0 0 640 200\""), String(svg.prefix(300)))
    }

    /// A plain `render` line (RenderJob, no swift-argument-parser) and the same render in a form
    /// only swift-argument-parser takes (`--name=value`) write the same bytes and print the same
    /// summary (but for its timing), and a chain renders with the same bytes whatever `--threads`
    /// says (no worker is started for it: OfflineRendererThreadTests).
    func testThePlainRenderLineAndTheArgumentParserRenderTheSame() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let plain = try run(["render", "sine.json", "-o", "a.wav", "--duration", "0.25", "--sample-type", "int24", "--threads", "2"], in: dir)
        let parsed = try run(["render", "sine.json", "--output=b.wav", "--duration=0.25", "--sample-type=int24", "--threads=1"], in: dir)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(parsed.status, 0, parsed.stderr)
        let a = try Data(contentsOf: dir.appendingPathComponent("a.wav")), b = try Data(contentsOf: dir.appendingPathComponent("b.wav"))
        XCTAssertGreaterThan(a.count, 36_000)
        XCTAssertEqual(a, b)
        func summary(_ s: String) -> String {
            s.replacingOccurrences(of: #"rendered in .*"#, with: "", options: .regularExpression).replacingOccurrences(of: "b.wav", with: "a.wav")
        }
        XCTAssertTrue(plain.stdout.contains("wrote a.wav: 0.25 s (12000 frames, 2 ch, 48000 Hz, int24)"), plain.stdout)
        XCTAssertEqual(summary(plain.stdout), summary(parsed.stdout))
        // The same validation message either way: the plain parser leaves invalid lines to the argument parser.
        let bad = try run(["render", "sine.json", "--slice", "0"], in: dir)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "audiograph: --slice must be between 1 and 65536 (run 'audiograph help' for usage)\n")
    }

    /// The release `audiograph` links neither Foundation, swift-argument-parser, the concurrency
    /// runtime with libdispatch nor the regex engine (none of their symbols is in it: each cost
    /// start-up, Docs/Performance.md "Start-up: a render without Foundation"), while the
    /// `audiograph-tool` beside it has Foundation and swift-argument-parser (so the check can see
    /// them). Failed with the render command in the one executable, then with `ContinuousClock`
    /// timing the render (libdispatch) and `firstRange(of:)` in the SFZ reader (the regex engine).
    func testTheRenderExecutableLinksNoFoundation() throws {
        let cli = try releaseExecutable()
        let tool = cli.deletingLastPathComponent().appendingPathComponent("audiograph-tool")
        func symbols(_ url: URL) throws -> String { try ReferenceScript.runTool(["nm", url.path]).text }
        let small = try symbols(cli)
        XCTAssertGreaterThan(small.count, 100_000, "nm lists the executable's symbols")
        for marker in ["$s10Foundation", "$s20FoundationEssentials", "$s14ArgumentParser", "$ss15ContinuousClock", "dispatch_queue_create",
                       "$s17_StringProcessing", "$s12_RegexParser"] {
            XCTAssertFalse(small.contains(marker), "\(marker) is linked into audiograph")
        }
        let full = try symbols(tool)
        XCTAssertTrue(full.contains("$s10Foundation"), "audiograph-tool links Foundation")
        XCTAssertTrue(full.contains("$s14ArgumentParser"), "audiograph-tool links swift-argument-parser")
    }

    /// The release `audiograph` hands the Swift runtime its arguments from glibc's constructor
    /// call (CSwiftArguments), so the runtime's own scan (CommandLine.cpp's constructor, which
    /// reads /proc/self/maps) is not linked into it; `audiograph-tool` keeps the runtime's. The
    /// arguments arrive intact: names with spaces and non-ASCII letters, in order.
    func testTheRenderExecutableTakesItsArgumentsWithoutTheRuntimesScan() throws {
        let cli = try releaseExecutable()
        let tool = cli.deletingLastPathComponent().appendingPathComponent("audiograph-tool")
        let small = try ReferenceScript.runTool(["nm", cli.path]).text
        XCTAssertTrue(small.contains("_swift_stdlib_getUnsafeArgvArgc"), "the executable defines the runtime's function")
        XCTAssertFalse(small.contains("_GLOBAL__sub_I_CommandLine.cpp"), "the runtime's argument scan is linked into audiograph")
        XCTAssertTrue(try ReferenceScript.runTool(["nm", tool.path]).text.contains("_GLOBAL__sub_I_CommandLine.cpp"),
                      "audiograph-tool keeps the runtime's own")
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "a sine é.json", in: dir)
        let r = try run(["render", "a sine é.json", "--quiet", "-o", "out put ü.wav", "--sample-type", "int16"], in: dir, executable: cli)
        XCTAssertEqual(r.status, 0, r.stderr)
        let info = try AudioFileReader.info(path: dir.appendingPathComponent("out put ü.wav").path)
        XCTAssertEqual(info.frames, 4800, "the 0.1 s graph, rendered to the file named")
        let usage = try run(["render", "a sine é.json", "--bogus"], in: dir, executable: cli)
        XCTAssertEqual(usage.status, 2, "handed to audiograph-tool with the same arguments")
        XCTAssertEqual(usage.stderr, "audiograph: Unknown option '--bogus' (run 'audiograph help' for usage)\n")
    }

    /// The functions a short render runs (scripts/link/render-order.txt) lie together in the
    /// release executable: the pages they span are at most twice the pages their sizes add up to
    /// (1.5 ordered — the Swift runtime's C++ is not compiled into a section per function, so it
    /// cannot move; 3.3 when the linker places them by object file, which is what a build without
    /// -function-sections or without the ordering file gives).
    func testTheFunctionsARenderRunsLieTogether() throws {
        let cli = try releaseExecutable()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let order = try String(contentsOf: root.appendingPathComponent("scripts/link/render-order.txt"), encoding: .utf8)
        let listed = Set(order.split(separator: "\n").filter { $0.hasPrefix(".text.") && !$0.hasPrefix(".text.unlikely.") && !$0.hasPrefix(".text.startup.") }
            .map { String($0.dropFirst(".text.".count)) })
        XCTAssertGreaterThan(listed.count, 500, "the list names the render's functions")
        var pages = Set<UInt64>(), bytes: UInt64 = 0, found = 0
        // nm -S: address, size, type, name.
        for line in try ReferenceScript.runTool(["nm", "-S", "--defined-only", cli.path]).text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 4, "tTwW".contains(f[2]), listed.contains(String(f[3])),
                  let address = UInt64(f[0], radix: 16), let size = UInt64(f[1], radix: 16), size > 0 else { continue }
            found += 1
            bytes += size
            for page in (address >> 12)...((address + size - 1) >> 12) { pages.insert(page) }
        }
        XCTAssertGreaterThan(found, listed.count * 9 / 10, "most listed functions are in the executable")
        let packed = Double(bytes) / 4096
        XCTAssertLessThan(Double(pages.count), 2 * packed, "\(found) functions of \(bytes) bytes on \(pages.count) pages")
    }

    /// `audiograph` runs every command line but a plain render through `audiograph-tool`, beside
    /// the executable even when called through a symbolic link elsewhere: `--version`, a usage
    /// error (status 2 and the argument parser's line) and `validate` answer as before the split.
    /// Without the tool beside it, a render still works and anything else says which file is
    /// missing in one line, with status 3.
    func testOtherCommandLinesGoToTheToolBesideTheExecutable() throws {
        guard let cli = Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let link = dir.appendingPathComponent("ag-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: cli)
        let version = try run(["--version"], in: dir, executable: link)
        XCTAssertEqual(version.status, 0, version.stderr)
        XCTAssertFalse(version.stdout.isEmpty)
        let usage = try run(["render", "sine.json", "--bogus"], in: dir, executable: link)
        XCTAssertEqual(usage.status, 2)
        XCTAssertEqual(usage.stderr, "audiograph: Unknown option '--bogus' (run 'audiograph help' for usage)\n")
        let validate = try run(["validate", "sine.json"], in: dir, executable: link)
        XCTAssertEqual(validate.status, 0, validate.stderr)

        let alone = dir.appendingPathComponent("alone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: false)
        let copy = alone.appendingPathComponent("audiograph")
        try FileManager.default.copyItem(at: cli, to: copy)
        let render = try run(["render", "sine.json", "-o", "s.wav", "--quiet"], in: dir, executable: copy)
        XCTAssertEqual(render.status, 0, render.stderr)
        XCTAssertGreaterThan(try Data(contentsOf: dir.appendingPathComponent("s.wav")).count, 19_000)
        let missing = try run(["validate", "sine.json"], in: dir, executable: copy)
        XCTAssertEqual(missing.status, 3)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.hasPrefix("audiograph: cannot run \(FileSystemPath.resolved(alone.path))/audiograph-tool: No such file or directory"),
                      missing.stderr)
    }
}
