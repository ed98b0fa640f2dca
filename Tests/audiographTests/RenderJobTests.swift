// Tests of RenderJob's plain command lines: the values swift-argument-parser would give, and nil for everything it must parse itself.
import AudioGraphKit
import XCTest
@testable import audiograph_tool
import AudioGraphCommandLine

final class RenderJobTests: XCTestCase {
    /// Every option once, in any order, values in the next argument: the job holds what
    /// swift-argument-parser's parse of the same line holds (RenderCommand.job).
    func testAPlainCommandLineGivesTheParsedValues() throws {
        let line = ["render", "--quiet", "g.json", "-o", "out.wav", "--duration", "1.5", "--sample-type", "int24",
                    "--slice", "512", "--threads", "2", "--strict"]
        let job = try XCTUnwrap(RenderJob(plainArguments: line))
        let parsed = try XCTUnwrap(try AudioGraphCommand.parseAsRoot(Array(line.dropFirst(0))) as? RenderCommand).job
        for j in [job, parsed] {
            XCTAssertEqual(j.graph, "g.json")
            XCTAssertEqual(j.output, "out.wav")
            XCTAssertEqual(j.duration, 1.5)
            XCTAssertNil(j.frames)
            XCTAssertEqual(j.sampleType, .int24)
            XCTAssertEqual(j.slice, 512)
            XCTAssertEqual(j.threads, 2)
            XCTAssertTrue(j.quiet)
            XCTAssertTrue(j.strict)
            XCTAssertNil(j.soundfont)
        }
        let frames = try XCTUnwrap(RenderJob(plainArguments: ["render", "song.mid", "--frames", "480", "--soundfont", "gm.sf2"]))
        XCTAssertEqual(frames.frames, 480)
        XCTAssertEqual(frames.soundfont, "gm.sf2")
        XCTAssertEqual(frames.outputPath, "song.wav")
        XCTAssertFalse(frames.quiet)
    }

    /// Whatever is not a plain, valid render line is left to swift-argument-parser (nil): other
    /// commands, help, `--name=value`, an option twice, a value that starts with `-` or does not
    /// parse, an unknown option, a missing graph or value, a line that fails validation.
    func testAnythingElseIsLeftToTheArgumentParser() {
        let lines: [[String]] = [
            ["validate", "g.json"], ["render"], ["render", "--help"], ["render", "g.json", "-h"], ["render", "help"],
            ["render", "g.json", "--output=o.wav"], ["render", "g.json", "-o", "a.wav", "-o", "b.wav"],
            ["render", "g.json", "--quiet", "--quiet"], ["render", "g.json", "--duration", "-1"],
            ["render", "g.json", "--duration", "one"], ["render", "g.json", "--frames", "1.5"], ["render", "g.json", "--slice"],
            ["render", "g.json", "--sample-type", "int12"], ["render", "g.json", "--bogus"], ["render", "a.json", "b.json"],
            ["render", "g.json", "--slice", "0"], ["render", "g.json", "--duration", "1", "--frames", "10"],
            ["render", "g.json", "-o", "out.mp9"], ["render", "g.json", "--threads", "999"], ["render", "g.json", "--", "x"],
            ["render", "g.json", "-o", "out.flac", "--sample-type", "float32"], ["render", "-", "-o", "x.wav"],
        ]
        for line in lines { XCTAssertNil(RenderJob(plainArguments: line), "\(line)") }
    }
}
