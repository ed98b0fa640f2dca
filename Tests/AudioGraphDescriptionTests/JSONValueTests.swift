// JSON values: numbers' integer view, objects' ordered members and editing, type names.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class JSONValueTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testNumberIntegerView() {
        XCTAssertEqual(JSONNumber(3).intValue, 3)
        XCTAssertEqual(JSONNumber(3).text, "3")
        XCTAssertTrue(JSONNumber(-12).isInteger)
        XCTAssertFalse(JSONNumber(0.25).isInteger)
        XCTAssertEqual(JSONNumber(0.25).text, "0.25")
        XCTAssertNil(JSONNumber(1e300).intValue)
        XCTAssertNil(JSONNumber(2, isInteger: false).intValue)
    }

    func testObjectSubscriptKeepsOrder() {
        var object = JSONObject([JSONMember(key: "b", value: .null), JSONMember(key: "a", value: .bool(true))])
        object["c"] = .string("x")
        object["b"] = .number(JSONNumber(1))
        XCTAssertEqual(object.keys, ["b", "a", "c"])
        XCTAssertEqual(object["b"], .number(JSONNumber(1)))
        object["a"] = nil
        XCTAssertEqual(object.keys, ["b", "c"])
        XCTAssertFalse(object.isEmpty)
        XCTAssertEqual(object.map(\.key), ["b", "c"])
    }

    func testTypeDescriptions() {
        XCTAssertEqual([JSONValue.null, .bool(true), .number(JSONNumber(1)), .string(""), .array([]), .object(JSONObject())].map(\.typeDescription),
                       ["null", "a boolean", "a number", "a string", "an array", "an object"])
    }
}
