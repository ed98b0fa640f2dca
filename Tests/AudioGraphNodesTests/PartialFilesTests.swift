// PartialFiles.removeStale: which leftovers beside a file it removes, and which it leaves.
@testable import AudioGraphNodes
import AudioGraphTesting
import Foundation
import XCTest

final class PartialFilesTests: XCTestCase {
    /// A process ID that runs nothing now (kill(pid, 0) fails with ESRCH).
    private func deadPID() throws -> pid_t {
        for pid in stride(from: pid_t(4_000_000), to: 3_900_000, by: -1) where kill(pid, 0) != 0 && errno == ESRCH { return pid }
        throw XCTSkip("no free process ID found")
    }

    private func names(_ dir: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
    }

    /// The temporaries of dead runs of `x.wav` go (`.x.partial-PID.wav`, and a render's temporary
    /// of that temporary, `..x.partial-PID.partial-PID.wav`); this process's, a running
    /// process's, other files' and other extensions' stay, among many unrelated names.
    func testOnlyTheLeftoversOfDeadRunsOfThatFileAreRemoved() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let dead = try deadPID(), me = getpid()
        let removed: Set<String> = [".x.partial-\(dead).wav", "..x.partial-\(dead).partial-\(dead).wav"]
        let kept: Set<String> = [
            "x.wav", ".x.partial-\(me).wav", ".x.partial-1.wav", ".y.partial-\(dead).wav", ".x.partial-\(dead).flac",
            ".x.partial-.wav", ".x.partial-12ab.wav", ".xx.partial-\(dead).wav", "x.partial-\(dead).wav",
            "..x.partial-\(dead).partial-\(dead + 1).wav", ".x.partial-\(dead)",
        ]
        let unrelated = (0..<300).map { "take \($0).wav" }
        for name in removed.union(kept).union(unrelated) {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: Data()), name)
        }
        XCTAssertEqual(PartialFiles.removeStale(besides: dir.appendingPathComponent("x.wav").path), 2)
        XCTAssertEqual(try names(dir), kept.union(unrelated))
    }

    /// An output whose own name starts with a dot (`.hidden.wav`): its temporaries are
    /// `..hidden.partial-PID.wav` and `...hidden.partial-PID.partial-PID.wav`.
    func testTheLeftoversOfAHiddenFileAreFound() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let dead = try deadPID()
        let names = ["..hidden.partial-\(dead).wav", "...hidden.partial-\(dead).partial-\(dead).wav", ".hidden.partial-\(dead).wav"]
        for name in names { FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: Data()) }
        XCTAssertEqual(PartialFiles.removeStale(besides: dir.appendingPathComponent(".hidden.wav").path), 2)
        XCTAssertEqual(try self.names(dir), [".hidden.partial-\(dead).wav"], "the temporary of hidden.wav, not of .hidden.wav")
    }

    /// What a signal's deadline removes (``PartialFiles/removeRegistered()``, async-signal-safe):
    /// every registered path that still exists (each registered twice here), and nothing else;
    /// a registered path that does not exist is passed over. Registrations from several threads
    /// at once are all kept (the list is pushed to with compare-and-exchange).
    func testRegisteredTemporariesAreRemoved() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let paths = (0..<64).map { dir.appendingPathComponent(".t\($0).partial-\(getpid()).wav").path }
        DispatchQueue.concurrentPerform(iterations: paths.count) { i in
            PartialFiles.register(paths[i])
            PartialFiles.register(paths[i])
        }
        for path in paths.dropLast(4) { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data())) }
        let other = dir.appendingPathComponent("keep.wav").path
        FileManager.default.createFile(atPath: other, contents: Data())
        // At least the 60 that exist here (tests that ran before in this process may have
        // registered temporaries of their own that still exist).
        XCTAssertGreaterThanOrEqual(PartialFiles.removeRegistered(), 60)
        XCTAssertEqual(try names(dir), ["keep.wav"])
        XCTAssertEqual(PartialFiles.removeRegistered(), 0)
    }

    /// A file in the current folder (no slash) and a folder that cannot be opened.
    func testARelativeNameAndAMissingFolder() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let dead = try deadPID()
        FileManager.default.createFile(atPath: dir.appendingPathComponent(".a.partial-\(dead).au").path, contents: Data())
        let previous = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(dir.path))
        defer { FileManager.default.changeCurrentDirectoryPath(previous) }
        XCTAssertEqual(PartialFiles.removeStale(besides: "a.au"), 1)
        XCTAssertEqual(try names(dir), [])
        XCTAssertEqual(PartialFiles.removeStale(besides: dir.appendingPathComponent("missing/a.au").path), 0)
    }
}
