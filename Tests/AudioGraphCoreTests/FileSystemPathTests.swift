// FileSystemPath: resolved path comparison, regular-file checks and the HDF5 signature test.

import Foundation
import AudioGraphTesting
import XCTest
import AudioGraphCore

final class FileSystemPathTests: XCTestCase, TeardownRegistering {
    private func temporaryDirectory() throws -> URL {
        let url = try TestFiles.makeTemporaryDirectory(self)
        // The folder itself may sit behind a symbolic link (/tmp on some systems): resolve it once.
        return URL(fileURLWithPath: FileSystemPath.resolved(url.path))
    }

    func testSpellingsOfOneFileResolveAlike() throws {
        let dir = try temporaryDirectory()
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link").path, withDestinationPath: dir.appendingPathComponent("sub").path)
        let expected = dir.path + "/sub/a.wav"
        for spelling in ["sub/a.wav", "sub/./a.wav", "sub/../sub/a.wav", "link/a.wav", "./link/../sub/a.wav"] {
            XCTAssertEqual(FileSystemPath.resolved(dir.path + "/" + spelling), expected, spelling)
        }
        // Relative paths resolve against the current folder.
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertEqual(FileSystemPath.resolved("x/../a.wav"), FileSystemPath.resolved(cwd) + "/a.wav")
        // A folder that does not exist yet is normalized by name.
        XCTAssertEqual(FileSystemPath.resolved(dir.path + "/new/../new/b.wav"), dir.path + "/new/b.wav")
        XCTAssertNotEqual(FileSystemPath.resolved(dir.path + "/sub/a.wav"), FileSystemPath.resolved(dir.path + "/sub/b.wav"))
    }

    func testNonRegularFilesAreNamed() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("f.wav").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file))
        XCTAssertNil(FileSystemPath.notRegularFileReason(file))
        let fifo = dir.appendingPathComponent("p").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertEqual(FileSystemPath.notRegularFileReason(fifo), "it is a FIFO (named pipe), not a regular file")
        XCTAssertEqual(FileSystemPath.notRegularFileReason(dir.path), "it is a directory, not a file")
        XCTAssertEqual(FileSystemPath.notRegularFileReason("/dev/null"), "it is a device, not a regular file")
        XCTAssertEqual(FileSystemPath.notRegularFileReason(dir.appendingPathComponent("none").path), "no such file")
        // A FIFO is never opened: checking it does not block (no writer exists).
        XCTAssertFalse(FileSystemPath.hasHDF5Signature(fifo))
    }

    func testContentsOfARegularFileAreItsBytesAsFoundationReadsThem() throws {
        let dir = try temporaryDirectory()
        // Empty, small, and larger than any one read; a link to a file reads the file.
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 4095, 4096, 4097, 3_000_001] {
            let path = dir.appendingPathComponent("f\(count)").path
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(try FileSystemPath.contentsOfRegularFile(path), bytes, "\(count) bytes")
            XCTAssertEqual(try FileSystemPath.contentsOfRegularFile(path), FileManager.default.contents(atPath: path).map(Array.init))
        }
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link").path, withDestinationPath: dir.appendingPathComponent("f1").path)
        XCTAssertEqual(try FileSystemPath.contentsOfRegularFile(dir.appendingPathComponent("link").path).count, 1)
        // /proc files say they are empty (st_size 0) and are read to their end.
        let status = try FileSystemPath.contentsOfRegularFile("/proc/self/status")
        XCTAssertTrue(String(decoding: status, as: UTF8.self).contains("Cpus_allowed_list:"))
    }

    func testContentsOfWhatIsNotARegularFileAreRefusedWithoutBlocking() throws {
        let dir = try temporaryDirectory()
        let fifo = dir.appendingPathComponent("p").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        func reason(_ path: String) -> String? {
            do { _ = try FileSystemPath.contentsOfRegularFile(path); return nil } catch { return error.reason }
        }
        // The FIFO has no writer: opening it for reading without O_NONBLOCK would wait forever.
        XCTAssertEqual(reason(fifo), "it is a FIFO (named pipe), not a regular file")
        XCTAssertEqual(reason(dir.path), "it is a directory, not a file")
        XCTAssertEqual(reason("/dev/zero"), "it is a device, not a regular file")
        XCTAssertEqual(reason(dir.appendingPathComponent("none").path), "no such file")
        XCTAssertEqual(reason(dir.appendingPathComponent("none/deeper").path), "no such file")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("dangling").path, withDestinationPath: dir.appendingPathComponent("none").path)
        XCTAssertEqual(reason(dir.appendingPathComponent("dangling").path), "no such file")
    }

    func testHDF5SignatureAtZeroOrAfterAUserBlock() throws {
        let dir = try temporaryDirectory()
        let signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        let atZero = dir.appendingPathComponent("a.sofa").path
        try Data(signature + [UInt8](repeating: 0, count: 100)).write(to: URL(fileURLWithPath: atZero))
        XCTAssertTrue(FileSystemPath.hasHDF5Signature(atZero))
        let after = dir.appendingPathComponent("b.sofa").path
        try Data([UInt8](repeating: 7, count: 1024) + signature).write(to: URL(fileURLWithPath: after))
        XCTAssertTrue(FileSystemPath.hasHDF5Signature(after))
        let wrongPlace = dir.appendingPathComponent("c.sofa").path
        try Data([UInt8](repeating: 7, count: 100) + signature + [UInt8](repeating: 0, count: 2000)).write(to: URL(fileURLWithPath: wrongPlace))
        XCTAssertFalse(FileSystemPath.hasHDF5Signature(wrongPlace))
        let text = dir.appendingPathComponent("d.sofa").path
        try Data("not a sofa file".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertFalse(FileSystemPath.hasHDF5Signature(text))
    }

    /// `sofaProblem` is the graph checker's and HRTFSet's test: the regular-file reason first,
    /// then the signature.
    func testSOFAProblemNamesWhatIsWrong() throws {
        let dir = try temporaryDirectory()
        let hdf5 = dir.appendingPathComponent("a.sofa").path
        try Data([0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]).write(to: URL(fileURLWithPath: hdf5))
        XCTAssertNil(FileSystemPath.sofaProblem(hdf5))
        let text = dir.appendingPathComponent("b.sofa").path
        try Data("not a sofa file".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertEqual(FileSystemPath.sofaProblem(text), "not a SOFA file (no HDF5 signature)")
        let fifo = dir.appendingPathComponent("p.sofa").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertEqual(FileSystemPath.sofaProblem(fifo), "it is a FIFO (named pipe), not a regular file")
        XCTAssertEqual(FileSystemPath.sofaProblem(dir.path), "it is a directory, not a file")
        XCTAssertEqual(FileSystemPath.sofaProblem(dir.appendingPathComponent("none.sofa").path), "no such file")
    }

    /// A real SOFA file, if the machine has one (libmysofa's data), carries the signature.
    func testARealSOFAFileHasTheSignature() throws {
        let candidates = ["/usr/share/libmysofa/default.sofa", "/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa"]
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw XCTSkip("no SOFA file installed")
        }
        XCTAssertTrue(FileSystemPath.hasHDF5Signature(path))
    }

    /// moveIntoPlace replaces a regular file (the new bytes, a new inode: the old file was
    /// removed, not written over), moves onto a free name, and leaves a folder in the way alone
    /// (rename's EISDIR, the folder and the finished file both kept).
    func testMoveIntoPlaceReplacesAFileAndLeavesAFolderAlone() throws {
        let dir = try temporaryDirectory()
        let fm = FileManager.default
        let destination = dir.appendingPathComponent("out.wav").path
        let finished = dir.appendingPathComponent(".out.wav.partial").path
        XCTAssertTrue(fm.createFile(atPath: finished, contents: Data("first".utf8)))
        XCTAssertEqual(FileSystemPath.moveIntoPlace(finished, destination), 0)
        XCTAssertEqual(fm.contents(atPath: destination), Data("first".utf8))
        XCTAssertFalse(fm.fileExists(atPath: finished))
        let oldInode = try XCTUnwrap(fm.attributesOfItem(atPath: destination)[.systemFileNumber] as? UInt64)

        XCTAssertTrue(fm.createFile(atPath: finished, contents: Data("second, longer".utf8)))
        XCTAssertEqual(FileSystemPath.moveIntoPlace(finished, destination), 0)
        XCTAssertEqual(fm.contents(atPath: destination), Data("second, longer".utf8))
        let newInode = try XCTUnwrap(fm.attributesOfItem(atPath: destination)[.systemFileNumber] as? UInt64)
        XCTAssertNotEqual(oldInode, newInode)

        let folder = dir.appendingPathComponent("taken").path
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: false)
        XCTAssertTrue(fm.createFile(atPath: finished, contents: Data("third".utf8)))
        XCTAssertEqual(FileSystemPath.moveIntoPlace(finished, folder), EISDIR)
        var isFolder: ObjCBool = false
        XCTAssertTrue(fm.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue)
        XCTAssertEqual(fm.contents(atPath: finished), Data("third".utf8))
    }

    /// The path names the SFZ reader, the MIDI reader and the MIDI graph use (written without
    /// Foundation, so the render command links none) are NSString's for every spelling here, but
    /// for `.`, `..`, `./` and `//a///b//`, where swift-corelibs-foundation traps (an illegal
    /// instruction in `_startOfLastPathComponent`, tried with this toolchain).
    func testPathNamesAreNSStringOnes() {
        let paths = ["/a/b.sfz", "a/b/", "/", "", "b.sfz", "/b.sfz", "a//b", "./a", "a/./b/../c", "/x/../../y", "../a/b",
                     "a/..", "/a/b/..", "samples/../kick.wav", "/nonexistent/./q/../r.wav", "a/b/../../..", "a/.", "/./",
                     "kick drum.wav", "é/ü.wav"]
        for path in paths {
            let ns = path as NSString
            XCTAssertEqual(FileSystemPath.lastComponent(path), ns.lastPathComponent, path)
            XCTAssertEqual(FileSystemPath.deletingLastComponent(path), ns.deletingLastPathComponent, path)
            XCTAssertEqual(FileSystemPath.standardized(path), ns.standardizingPath, path)
            guard !path.hasPrefix("/") else { continue }
            for folder in ["fold", "", "/f/", "/f"] {
                XCTAssertEqual(FileSystemPath.appending(path, to: folder), (folder as NSString).appendingPathComponent(path), "\(folder) + \(path)")
            }
        }
        XCTAssertEqual(FileSystemPath.deletingLastComponent("."), "")
        XCTAssertEqual(FileSystemPath.deletingLastComponent(".."), "")
        XCTAssertEqual(FileSystemPath.standardized(".."), "..")
        XCTAssertEqual(FileSystemPath.lastComponent("./"), ".")
        XCTAssertEqual(FileSystemPath.standardized("./"), ".")
        XCTAssertEqual(FileSystemPath.lastComponent("//a///b//"), "b")
        XCTAssertEqual(FileSystemPath.deletingLastComponent("//a///b//"), "/a")
        XCTAssertEqual(FileSystemPath.standardized("//a///b//"), "/a/b")
    }

    /// `isReadable` is `access(R_OK)`, as FileManager's `isReadableFile(atPath:)`: a file and a
    /// folder are, a missing path is not; a file without read permission is not (unless root,
    /// whom access(2) lets read anything — FileManager says the same).
    func testIsReadableIsFileManagersAnswer() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("f.txt").path
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let locked = dir.appendingPathComponent("locked.txt").path
        XCTAssertTrue(FileManager.default.createFile(atPath: locked, contents: Data("x".utf8), attributes: [.posixPermissions: 0o000]))
        for path in [file, locked, dir.path, dir.appendingPathComponent("missing").path] {
            XCTAssertEqual(FileSystemPath.isReadable(path), FileManager.default.isReadableFile(atPath: path), path)
        }
        XCTAssertFalse(FileSystemPath.isReadable(dir.appendingPathComponent("missing").path))
    }

    /// Where NSString follows the file system, so does `standardized`: `..` after a symbolic link
    /// in an absolute path climbs from the link's target (an SFZ file in a linked folder naming
    /// `../samples/a.wav`), and a leading `~` is `$HOME`; the results are NSString's. Failed when
    /// `..` was applied by name (the sample looked for beside the link).
    func testStandardizedFollowsLinksBeforeClimbingAndExpandsHome() throws {
        let dir = try temporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(at: dir.appendingPathComponent("lib/Piano/sfz"), withIntermediateDirectories: true)
        try fm.createDirectory(at: dir.appendingPathComponent("lib/Piano/samples"), withIntermediateDirectories: true)
        try fm.createDirectory(at: dir.appendingPathComponent("proj"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("proj/piano").path, withDestinationPath: dir.appendingPathComponent("lib/Piano/sfz").path)
        let linked = dir.appendingPathComponent("proj/piano").path + "/../samples/a.wav"
        XCTAssertEqual(FileSystemPath.standardized(linked), dir.appendingPathComponent("lib/Piano/samples/a.wav").path)
        XCTAssertEqual(FileSystemPath.standardized(linked), (linked as NSString).standardizingPath)
        for path in ["~", "~/x.sf2", "~/a/../b", "a/~/b"] {
            XCTAssertEqual(FileSystemPath.standardized(path), (path as NSString).standardizingPath, path)
        }
        XCTAssertEqual(FileSystemPath.standardized("~/x.sf2"), String(cString: getenv("HOME")) + "/x.sf2")
    }

    /// A file above the limit is refused by its size before anything is allocated — a 1 TiB
    /// sparse file in one line, not a crash (the graph loader's `[UInt8]` of st_size bytes
    /// stopped the process before); the limit holds for a file read whole too.
    func testAFileAboveTheLimitIsRefusedNotAllocated() throws {
        let dir = try temporaryDirectory()
        let huge = dir.appendingPathComponent("huge.json").path
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: nil))
        XCTAssertEqual(truncate(huge, 1 << 40), 0)
        XCTAssertThrowsError(try FileSystemPath.contentsOfRegularFile(huge)) { error in
            XCTAssertEqual((error as? FileSystemPath.ReadFailure)?.reason, "the file is too large (more than 256 MiB)")
        }
        let small = dir.appendingPathComponent("small.txt").path
        XCTAssertTrue(FileManager.default.createFile(atPath: small, contents: Data(repeating: 65, count: 3 << 20)))
        XCTAssertThrowsError(try FileSystemPath.contentsOfRegularFile(small, maximumSize: 2 << 20)) { error in
            XCTAssertEqual((error as? FileSystemPath.ReadFailure)?.reason, "the file is too large (more than 2 MiB)")
        }
        XCTAssertEqual(try FileSystemPath.contentsOfRegularFile(small).count, 3 << 20)
    }
}
