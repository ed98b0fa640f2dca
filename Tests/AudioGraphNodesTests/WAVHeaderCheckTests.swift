// WAVHeaderCheck: WAV files whose LIST chunk libsndfile 1.2 parses forever are refused at once.

import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class WAVHeaderCheckTests: XCTestCase {
    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "wavheadercheck-\(getpid())-\(name).wav"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        addTeardownBlock { unlink(path) }
        return path
    }

    private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// A mono 16-bit 8 kHz WAV with `list` (a LIST chunk's payload) before four samples
    /// 1000, -2000, 3000, -4000; `dataLength` overrides the data chunk's size field.
    private func wav(list: [UInt8], dataLength: UInt32? = nil) -> [UInt8] {
        let samples: [Int16] = [1000, -2000, 3000, -4000]
        let data = samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        let fmt: [UInt8] = [1, 0, 1, 0] + le32(8000) + le32(16000) + [2, 0, 16, 0]
        var chunks = Array("fmt ".utf8) + le32(16) + fmt
        chunks += Array("LIST".utf8) + le32(UInt32(list.count)) + list + (list.count % 2 == 1 ? [0] : [])
        chunks += Array("data".utf8) + le32(dataLength ?? UInt32(data.count)) + data
        return Array("RIFF".utf8) + le32(UInt32(4 + chunks.count)) + Array("WAVE".utf8) + chunks
    }

    /// The two inputs FuzzWAVReader found (CI runs): a plain C `sf_open` of either (libsndfile
    /// 1.2.0) does not return. Both are refused before libsndfile, at once.
    static let fuzzerHangs = [
        // 202 bytes: sub-chunks of 0xFFFFFFFF bytes (0 after rounding), then one of 0xFFFFFFDF that jumps back.
        "UklGRlAAAABXQVZFZm10IBAAAAABAAEAIlYAAESsAAACABAATElTVAT//////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////9////////8AAABJTkZPZGF0YSD//wAAAEreA7zh5AkuLVN4nTcYDDFXew==",
        // 175 bytes: a second LIST chunk, after the data, whose list type libsndfile reads as a marker.
        "UklGRlADAABXQVZFZm10IBAAAAABAAEAIlYAAESsAAACABAATElTVAQAAABJTkZPZGF0YSAAAAADJUpvlLneRWZtdCAQAAAAAQABACJWAABErAAAAgAQAExJU1QEdCAQAAAAAQAAAABJTkZPZGH//////////////////////////////////////////////////////////////////+////8ASU5GT2RhdGEgAA==",
    ]

    func testTheFuzzerHangsAreRefusedAtOnce() throws {
        let expected = [
            "its LIST chunk at byte 36 makes libsndfile read its sub-chunks forever (a sub-chunk at byte 156 "
                + "declares 4294967263 bytes, which libsndfile's 32-bit arithmetic turns into a jump back)",
            "its LIST chunk at byte 88 makes libsndfile read its sub-chunks forever (a sub-chunk at byte 156 "
                + "declares 4294967279 bytes, which libsndfile's 32-bit arithmetic turns into a jump back)",
        ]
        for (index, base64) in Self.fuzzerHangs.enumerated() {
            let path = try write(Array(try XCTUnwrap(Data(base64Encoded: base64))), "hang\(index)")
            let start = Date()
            XCTAssertThrowsError(try AudioFileReader.info(path: path)) { error in
                XCTAssertEqual(error as? AudioFileError, .cannotOpen(path: path, reason: expected[index]))
            }
            XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        }
        // The loop in its simplest form: after 12 bytes, a sub-chunk of 2^32 - 12 bytes passes
        // libsndfile's wrapped check and jumps back to the chunk's start, forever.
        let inside = try write(wav(list: Array("INFO".utf8) + Array("abcd".utf8) + le32(0xFFFF_FFF4)), "inside")
        XCTAssertEqual(WAVHeaderCheck.problem(inside),
                       "its LIST chunk at byte 36 makes libsndfile read its sub-chunks forever (a sub-chunk at byte 48 "
                           + "declares 4294967284 bytes, which libsndfile's 32-bit arithmetic turns into a jump back)")
    }

    /// Garbage sizes that libsndfile survives are not refused: a jump back that leads on, and a
    /// text sub-chunk of 0xFFFFFFFF bytes (rounded up to 0 in 32 bits). The samples still read.
    func testGarbageSizesLibsndfileSurvivesStillOpen() throws {
        let backAndOn = Array("olym".utf8) + le32(0xFFFF_FFF9) + [0xC1, 0x96, 0x81, 0xF4] + Array("note".utf8) + le32(0xFFFF_FFFD)
        let wrappedText = Array("INFO".utf8) + Array("ISFT".utf8) + le32(0xFFFF_FFFF)
        for (name, list) in [("backAndOn", backAndOn), ("wrappedText", wrappedText)] {
            let path = try write(wav(list: list), name)
            XCTAssertNil(WAVHeaderCheck.problem(path), name)
            let (info, channels) = try AudioFileReader.read(path: path)
            XCTAssertEqual(info.sampleRate, 8000, name)
            XCTAssertEqual(channels, [[1000, -2000, 3000, -4000].map { Float($0) / 32768 }], name)
        }
    }

    /// LIST chunks that fit are read as before: an odd-length title with its pad byte, an
    /// odd-length last sub-chunk without one, a streamed data size (0xFFFFFFFF) past the end.
    func testListChunksThatFitStillOpen() throws {
        let title = Array("INFO".utf8) + Array("INAM".utf8) + le32(5) + Array("Title".utf8) + [0]
        let unpadded = Array("INFO".utf8) + Array("ICMT".utf8) + le32(3) + Array("abc".utf8)
        for (name, bytes) in [("title", wav(list: title)), ("unpadded", wav(list: unpadded)),
                              ("streamed", wav(list: title, dataLength: 0xFFFF_FFFF))] {
            let path = try write(bytes, name)
            XCTAssertNil(WAVHeaderCheck.problem(path), name)
            let (info, channels) = try AudioFileReader.read(path: path)
            XCTAssertEqual(info.sampleRate, 8000, name)
            XCTAssertEqual(channels, [[1000, -2000, 3000, -4000].map { Float($0) / 32768 }], name)
        }
    }

    /// Files that are not RIFF/WAVE are left to libsndfile.
    func testOtherFilesAreNotJudged() throws {
        XCTAssertNil(WAVHeaderCheck.problem(try write(Array("FORM\0\0\0\u{4}AIFF".utf8), "aiff")))
        XCTAssertNil(WAVHeaderCheck.problem(try write([], "empty")))
    }

    // MARK: - Against the real libsndfile

    /// The reference: libsndfile itself. A C program opens each file named on its command line in
    /// a child process of its own (all at once), each given 200 ms of CPU time (SIGVTALRM, so load
    /// on the machine cannot trip it), and prints one line per file: `hang` (killed by the timer:
    /// opening these small files takes microseconds),
    /// `open` or `error` (sf_open returned NULL).
    private static let probeSource = """
    #include <sndfile.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <signal.h>
    #include <unistd.h>
    #include <sys/time.h>
    #include <sys/wait.h>
    int main(int argc, char **argv) {
        pid_t *pids = calloc(argc, sizeof(pid_t));
        for (int i = 1; i < argc; i++) {
            pids[i] = fork();
            if (pids[i] == 0) {
                struct itimerval cpu = { { 0, 0 }, { 0, 200000 } };
                setitimer(ITIMER_VIRTUAL, &cpu, NULL);
                SF_INFO info = { 0 };
                SNDFILE *file = sf_open(argv[i], SFM_READ, &info);
                _exit(file ? 0 : 1);
            }
        }
        for (int i = 1; i < argc; i++) {
            int status = 0;
            waitpid(pids[i], &status, 0);
            puts(WIFSIGNALED(status) ? "hang" : WEXITSTATUS(status) == 0 ? "open" : "error");
        }
        return 0;
    }
    """

    /// What libsndfile does with each file: "hang", "open" or "error".
    private func libsndfileVerdicts(_ paths: [String]) throws -> [String] {
        let dir = NSTemporaryDirectory() + "wavheadercheck-probe-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        try Self.probeSource.write(toFile: dir + "/probe.c", atomically: true, encoding: .utf8)
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        cc.arguments = ["-O1", "-o", dir + "/probe", dir + "/probe.c", "-lsndfile"]
        try cc.run()
        cc.waitUntilExit()
        XCTAssertEqual(cc.terminationStatus, 0, "cc failed to build the libsndfile probe")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: dir + "/probe")
        probe.arguments = paths
        let output = Pipe()
        probe.standardOutput = output
        try probe.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        probe.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Random LIST chunks (markers libsndfile treats apart, sizes near 2^32 and small ones, chunk
    /// sizes that fit or not, LIST before or after the data) and byte mutations of the fuzzer's
    /// files: every file libsndfile loops on is refused, every file it opens is not (a file it
    /// refuses anyway, for a malformed fmt chunk say, may be refused either way).
    func testTheCheckAgreesWithLibsndfileOnRandomListChunks() throws {
        var random = SeededRandom(seed: 20261123)
        let markers = ["INFO", "adtl", "ISFT", "INAM", "labl", "note", "abcd", "\0\0\0\0", "exif", "data", "olym", "emdl"]
            .map { Array($0.utf8) } + [[0xFF, 0xFF, 0xFF, 0xFF]]
        func size() -> UInt32 {
            switch random.next() % 10 {
            case 0..<4: return UInt32(random.next() % 40)
            case 4..<8: return UInt32.max - UInt32(random.next() % 63)
            default: return UInt32(truncatingIfNeeded: random.next())
            }
        }
        var files: [[UInt8]] = []
        for _ in 0..<240 {
            var list: [UInt8] = []
            for _ in 0..<(1 + random.next() % 5) {
                let marker = markers[Int(random.next() % UInt64(markers.count))]
                list += marker
                if marker != Array("INFO".utf8), marker != Array("adtl".utf8), random.next() % 10 != 0 { list += le32(size()) }
                list += (0..<[0, 0, 2, 4, 8][Int(random.next() % 5)]).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            let fmt = Array("fmt ".utf8) + le32(16) + [1, 0, 1, 0] + le32(8000) + le32(16000) + [2, 0, 16, 0]
            let listChunk = Array("LIST".utf8) + le32(random.next() % 2 == 0 ? UInt32(list.count) : size()) + list
            let data = Array("data".utf8) + le32(8) + [UInt8](repeating: 0, count: 8)
            let body = Array("WAVE".utf8) + fmt + (random.next() % 2 == 0 ? listChunk + data : data + listChunk)
            files.append(Array("RIFF".utf8) + le32(UInt32(body.count)) + body)
        }
        let seeds = try Self.fuzzerHangs.map { Array(try XCTUnwrap(Data(base64Encoded: $0))) }
        let bytes: [UInt8] = [0, 1, 0xFF, 0xFE, 0xF0, 0xFD]
        for _ in 0..<120 {
            var file = seeds[Int(random.next() % 2)]
            for _ in 0..<(1 + random.next() % 3) {
                let at = 12 + Int(random.next() % UInt64(file.count - 12))
                file[at] = random.next() % 7 == 0 ? UInt8(truncatingIfNeeded: random.next()) : bytes[Int(random.next() % 6)]
            }
            files.append(file)
        }
        let paths = try files.enumerated().map { try write($1, "random\($0)") }
        let verdicts = try libsndfileVerdicts(paths)
        XCTAssertEqual(verdicts.count, paths.count)
        var counts: [String: Int] = [:]
        for (path, verdict) in zip(paths, verdicts) {
            let refused = WAVHeaderCheck.problem(path) != nil
            counts[verdict + (refused ? " refused" : " passed"), default: 0] += 1
            if verdict == "hang" { XCTAssertTrue(refused, "libsndfile loops on \(path); the check let it through") }
            if verdict == "open" { XCTAssertFalse(refused, "libsndfile opens \(path); the check refused it") }
        }
        print("WAVHeaderCheck vs libsndfile on \(paths.count) files: \(counts.sorted { $0.key < $1.key })")
        // The generator must reach both sides, or the comparison proves nothing.
        XCTAssertGreaterThanOrEqual(counts["hang refused", default: 0], 20)
        XCTAssertGreaterThanOrEqual(counts["open passed", default: 0], 100)
    }
}

