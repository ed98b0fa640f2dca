// Tests of PropertyValue: numbers of any Swift type read as Double and Int.
import XCTest
import AudioGraphCore

final class PropertyValueTests: XCTestCase {
    func testIntegersAndFloatsReadAsDouble() {
        XCTAssertEqual(PropertyValue.double(1), 1.0)
        XCTAssertEqual(PropertyValue.double(Int32(-3)), -3.0)
        XCTAssertEqual(PropertyValue.double(UInt8(200)), 200.0)
        XCTAssertEqual(PropertyValue.double(Float(0.25)), 0.25)
        XCTAssertEqual(PropertyValue.double(2.5), 2.5)
        XCTAssertNil(PropertyValue.double("1"))
        XCTAssertNil(PropertyValue.double(true))
    }

    func testWholeNumbersReadAsInt() {
        XCTAssertEqual(PropertyValue.int(7), 7)
        XCTAssertEqual(PropertyValue.int(UInt16(9)), 9)
        XCTAssertEqual(PropertyValue.int(4.0), 4)
        XCTAssertNil(PropertyValue.int(4.5))
        XCTAssertNil(PropertyValue.int(Double.infinity))
        XCTAssertNil(PropertyValue.int(1e300))
        XCTAssertNil(PropertyValue.int(UInt64.max))
    }

    func testOptionalDistinguishesNilFromNotANumber() {
        XCTAssertEqual(PropertyValue.optionalDouble(3), .some(3))
        XCTAssertEqual(PropertyValue.optionalDouble(Double?.none), .some(nil))
        XCTAssertEqual(PropertyValue.optionalDouble(Int?.none), .some(nil))
        XCTAssertEqual(PropertyValue.optionalDouble("x"), Double??.none)
    }
}
