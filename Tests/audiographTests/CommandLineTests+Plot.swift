// Tests of `audiograph plot`: a graph rendered first and drawn as PNG, a file as SVG, and bad input.
import AudioGraphKit
import CCairo
import Foundation
import AudioGraphTesting
import XCTest

extension CommandLineTests {
    func testPlotOfAGraphWritesAPNGOfTheAskedSize() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "sine.json", in: dir)
        let r = try run(["plot", "sine.json", "-o", "sine.png", "--kind", "spectrum", "--width", "500", "--height", "250"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let surface = cairo_image_surface_create_from_png(dir.appendingPathComponent("sine.png").path)!
        defer { cairo_surface_destroy(surface) }
        XCTAssertEqual(cairo_surface_status(surface), CAIRO_STATUS_SUCCESS)
        XCTAssertEqual(cairo_image_surface_get_width(surface), 500)
        XCTAssertEqual(cairo_image_surface_get_height(surface), 250)
        XCTAssertEqual(fileNames(dir), ["sine.json", "sine.png"], "the temporary render is gone")
    }

    func testPlotOfAFileWritesSVGAndBadInputIsOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("t.wav").path, [(0..<4800).map { Float(sin(Double($0) * 0.2)) }], sampleRate: 48000)
        let ok = try run(["plot", "t.wav", "-o", "t.svg", "--kind", "spectrogram"], in: dir)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let svg = try String(contentsOf: dir.appendingPathComponent("t.svg"), encoding: .utf8)
        XCTAssertTrue(svg.contains("<svg"), String(svg.prefix(200)))
        let missing = try run(["plot", "none.wav", "-o", "x.png"], in: dir)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        let channel = try run(["plot", "t.wav", "-o", "x.png", "--channel", "3"], in: dir)
        XCTAssertEqual(channel.status, 1)
        XCTAssertEqual(channel.stderrLines, ["t.wav: no channel 3 (the file has 1 channel, numbered from 0)"])
        XCTAssertEqual(try run(["plot", "t.wav", "-o", "x.jpg"], in: dir).status, 2)
        XCTAssertEqual(try run(["plot", "t.wav", "-o", "x.png", "--kind", "bars"], in: dir).status, 2)
        XCTAssertEqual(try run(["plot", "t.wav", "-o", "x.png", "--width", "10"], in: dir).status, 2)
        XCTAssertEqual(fileNames(dir), ["t.svg", "t.wav"], "nothing half-written")
    }
}
