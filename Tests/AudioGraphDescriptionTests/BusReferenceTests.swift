// Bus strings: "node" and "node:N".

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class BusReferenceTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testParsesAndPrints() {
        XCTAssertEqual(BusReference("mix"), BusReference(node: "mix", bus: 0))
        XCTAssertEqual(BusReference("mix:12"), BusReference(node: "mix", bus: 12))
        XCTAssertEqual(BusReference("mix:0")?.description, "mix")
        XCTAssertEqual(BusReference(node: "mix", bus: 3).description, "mix:3")
    }

    func testRejectsMalformed() {
        for string in ["", ":1", "mix:", "mix:-1", "mix:+1", "mix:1:2", "mix:x", "mix:١", "mix:99999999999"] {
            XCTAssertNil(BusReference(string), string)
        }
    }
}
