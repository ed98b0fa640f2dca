// Tests of the CLI's start-up: a render without AAC never loads FFmpeg (CAVCodecLazy, CLazyLibrary).
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

extension CommandLineTests {
    /// The dynamic loader's own list (`LD_DEBUG=libs`) of a 0.1 s render: libsndfile (linked) is
    /// there, FFmpeg's libavformat and libavcodec are not. Before CAVCodecLazy they were linked
    /// and loaded at every start with about 100 more shared objects (this test failed).
    func testARenderWithoutAACDoesNotLoadFFmpeg() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let r = try run(["render", "sine.json", "-o", "sine.wav", "--quiet"], in: dir, environment: ["LD_DEBUG": "libs"])
        XCTAssertEqual(r.status, 0, r.stderr.suffix(2000).description)
        XCTAssertTrue(r.stderr.contains("libsndfile.so"), "LD_DEBUG lists the loaded libraries")
        XCTAssertFalse(r.stderr.contains("libavformat"), "FFmpeg loaded without AAC")
        XCTAssertFalse(r.stderr.contains("libavcodec"), "FFmpeg loaded without AAC")
    }
}
