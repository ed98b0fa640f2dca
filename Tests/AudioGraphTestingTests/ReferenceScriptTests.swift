// Tests of ReferenceScript: output, standard input, and the reason when a script cannot give a result.
import AudioGraphTesting
import Foundation
import XCTest

final class ReferenceScriptTests: XCTestCase {
    func testAScriptsOutputArgumentsAndInput() throws {
        let out = try ReferenceScript.run(code: """
            import sys, struct
            data = sys.stdin.buffer.read()
            sys.stdout.buffer.write(struct.pack('<3d', float(sys.argv[1]), len(data), 0.25))
            """, arguments: ["1.5"], input: Data(repeating: 7, count: 200_000))
        XCTAssertEqual(out.doubles, [1.5, 200_000, 0.25])
        XCTAssertEqual(try ReferenceScript.run(code: "print('a'); print(); print('b')").lines, ["a", "b"])
    }

    /// A reference script of the repository, by its name in scripts/reference.
    func testARepositoryScriptRuns() throws {
        let out = try ReferenceScript.run("tone_fit_reference.py")
        XCTAssertFalse(out.text.isEmpty)
    }

    func testAMissingScriptSaysWhere() {
        XCTAssertThrowsError(try ReferenceScript.run("no_such_reference.py")) { error in
            let path = ReferenceScript.root.appendingPathComponent("scripts/reference/no_such_reference.py").path
            XCTAssertEqual(error as? ReferenceScriptError, .scriptMissing(path: path))
            XCTAssertEqual("\(error)", "the reference script \(path) does not exist")
        }
    }

    func testAMissingModuleIsNamed() {
        XCTAssertThrowsError(try ReferenceScript.run(code: "import sys\nimport no_such_module_here.sub")) { error in
            XCTAssertEqual(error as? ReferenceScriptError, .moduleMissing(module: "no_such_module_here", script: "python3 -c 'import sys'"))
            XCTAssertTrue("\(error)".contains("make deps-python"), "\(error)")
        }
    }

    /// A failing script: its status and its error output, last line first.
    func testAFailingScriptShowsItsStandardError() {
        XCTAssertThrowsError(try ReferenceScript.run(code: "import sys\nprint('x', file=sys.stderr)\nraise ValueError('bad input')")) { error in
            guard case let .failed(script, status, standardError)? = error as? ReferenceScriptError else { return XCTFail("\(error)") }
            XCTAssertEqual(script, "python3 -c 'import sys'")
            XCTAssertEqual(status, 1)
            XCTAssertTrue(standardError.hasPrefix("x\n"), standardError)
            XCTAssertTrue("\(error)".hasPrefix("python3 -c 'import sys' failed (status 1): ValueError: bad input\n"), "\(error)")
        }
    }

    /// Other tools: output, a tool that is not installed, a failing one.
    func testAToolsOutputAndWhyItCouldNotRun() throws {
        XCTAssertEqual(try ReferenceScript.runTool(["printf", "%s|%s", "a", "b c"]).text, "a|b c")
        XCTAssertThrowsError(try ReferenceScript.runTool(["no-such-tool-here", "-x"])) { error in
            XCTAssertEqual(error as? ReferenceScriptError, .toolMissing("no-such-tool-here"))
        }
        XCTAssertThrowsError(try ReferenceScript.runTool(["sh", "-c", "echo broken >&2; exit 3"])) { error in
            XCTAssertEqual(error as? ReferenceScriptError, .failed(script: "sh -c echo broken >&2; exit 3", status: 3, standardError: "broken\n"))
        }
    }
}
