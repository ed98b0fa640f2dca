// Tap file extensions.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class TapDescriptionTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testFileExtension() {
        XCTAssertEqual(TapDescription.fileExtension(of: "a/b.tap.WAV"), "wav")
        XCTAssertEqual(TapDescription.fileExtension(of: "x.flac"), "flac")
        XCTAssertNil(TapDescription.fileExtension(of: "noext"))
        XCTAssertNil(TapDescription.fileExtension(of: "dir.d/noext"))
        XCTAssertNil(TapDescription.fileExtension(of: ".wav"))  // a hidden file's name, not an extension
        XCTAssertNil(TapDescription.fileExtension(of: "a."))
        XCTAssertEqual(TapDescription(node: "n", file: "t.Ogg", path: "t.Ogg").fileExtension, "ogg")
    }

    func testEveryAdvertisedExtensionLoads() throws {
        for ext in TapDescription.supportedExtensions.keys.sorted() {
            _ = try loadGraph(graphText(nodes: #"{ "id": "osc", "type": "oscillator" }, { "id": "out", "type": "genericOutput" }"#,
                                        connections: #"{ "from": "osc", "to": "out" }"#,
                                        extra: #""taps": [ { "node": "osc", "file": "t.\#(ext)" } ]"#))
        }
    }
}
