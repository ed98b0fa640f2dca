// PrintfFormat: C's printf formatting without Foundation, the same text as String(format:).
import AudioGraphCore
import Foundation
import XCTest

final class PrintfFormatTests: XCTestCase {
    /// The formats the command line prints with (`%.2f`, `%6.2f`, `%.1f`, `%3d`) give the text
    /// Foundation's `String(format:)` gives, for ordinary, negative, rounding, huge and
    /// non-finite values.
    func testTheTextIsFoundationsText() {
        let values: [Double] = [0, -0.0, 1, -1, 0.005, 0.015, 2.675, -6.0206, 123456.789, 1e300, -1e-300,
                                .infinity, -.infinity, .nan, .pi]
        for format in ["%.2f", "%6.2f", "%.1f"] {
            for v in values {
                XCTAssertEqual(PrintfFormat.string(format, v), String(format: format, v), "\(format) \(v)")
            }
        }
        for n in [0, 7, 42, 100, -5, 12345] {
            XCTAssertEqual(PrintfFormat.string("%3d", n), String(format: "%3d", n), "%3d \(n)")
        }
    }

    /// A result longer than the first buffer (128 bytes) comes out whole.
    func testALongResultIsWhole() {
        let text = PrintfFormat.string("%.2f", 1e200)
        XCTAssertGreaterThan(text.count, 200)
        XCTAssertEqual(text, String(format: "%.2f", 1e200))
    }
}
