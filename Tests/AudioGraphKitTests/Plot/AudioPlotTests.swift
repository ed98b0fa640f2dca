// Tests of AudioPlot: pictures read back with cairo (size, curve rows, spectral peak column, sweep) and SVG parsed as XML.
import AudioGraphKit
import CCairo
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import AudioGraphTesting
import XCTest

final class AudioPlotTests: XCTestCase {
    /// A PNG read back with cairo: its size and ARGB pixels.
    struct Picture {
        var width: Int
        var height: Int
        var pixels: [UInt32]
        func rgb(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
            let p = pixels[y * width + x]
            return (Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF))
        }
    }

    func readPNG(_ path: String) throws -> Picture {
        let surface = cairo_image_surface_create_from_png(path)!
        defer { cairo_surface_destroy(surface) }
        XCTAssertEqual(cairo_surface_status(surface), CAIRO_STATUS_SUCCESS, "\(path) is not a PNG cairo reads")
        let w = Int(cairo_image_surface_get_width(surface)), h = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = try XCTUnwrap(cairo_image_surface_get_data(surface))
        var pixels = [UInt32](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w { pixels[y * w + x] = UnsafeRawPointer(data + y * stride + x * 4).loadUnaligned(as: UInt32.self) }
        }
        return Picture(width: w, height: h, pixels: pixels)
    }

    // The layout written out independently of AudioPlot: 64 px left, 16 right, 30 top, 42 bottom.
    func area(_ w: Int, _ h: Int) -> (x: Int, y: Int, width: Int, height: Int) { (64, 30, w - 80, h - 72) }

    func testPlotAreaIsTheDocumentedLayout() {
        let a = AudioPlot.plotArea(width: 800, height: 400), b = area(800, 400)
        XCTAssertEqual([a.x, a.y, a.width, a.height], [b.x, b.y, b.width, b.height])
    }

    func testWaveformOfSinesReachesTheirPeakRowsInEachLane() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("sines.wav").path, png = dir.appendingPathComponent("w.png").path
        let n = 48000
        // 1 kHz: every column (65 frames) holds a whole period, so reaches both peaks.
        let full = (0..<n).map { Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let half = full.map { $0 * 0.5 }
        try TestFiles.writeSoundFile(wav, [full, half], sampleRate: 48000)
        try AudioPlot.draw(file: wav, to: png, kind: .waveform, width: 800, height: 400)
        let p = try readPNG(png)
        XCTAssertEqual([p.width, p.height], [800, 400])
        let a = area(800, 400)
        // Two lanes 14 px apart.
        let lane = (Double(a.height) - 14) / 2
        // The curve is blue: b well above r.
        func curveRows(_ x: Int, from y0: Int, to y1: Int) -> [Int] {
            (y0..<y1).filter { let c = p.rgb(x, $0); return c.b - c.r > 80 }
        }
        for x in [a.x + 100, a.x + 400, a.x + 700] {
            let top0 = Double(a.y), top1 = Double(a.y) + lane + 14
            let rows0 = curveRows(x, from: a.y, to: Int(top1) - 7)
            let rows1 = curveRows(x, from: Int(top1) - 7, to: a.y + a.height)
            // Full scale: from the lane's top to its bottom (±1.5 px of antialiasing).
            XCTAssertEqual(Double(try XCTUnwrap(rows0.first)), top0, accuracy: 1.5, "column \(x)")
            XCTAssertEqual(Double(try XCTUnwrap(rows0.last)), top0 + lane, accuracy: 1.5, "column \(x)")
            // Half scale: a quarter lane in from each edge.
            XCTAssertEqual(Double(try XCTUnwrap(rows1.first)), top1 + lane / 4, accuracy: 1.5, "column \(x)")
            XCTAssertEqual(Double(try XCTUnwrap(rows1.last)), top1 + 3 * lane / 4, accuracy: 1.5, "column \(x)")
        }
        // --channel 1 alone fills the plot area: top a quarter in.
        try AudioPlot.draw(file: wav, to: png, kind: .waveform, width: 800, height: 400, channel: 1)
        let q = try readPNG(png)
        let rows = (a.y..<(a.y + a.height)).filter { let c = q.rgb(a.x + 400, $0); return c.b - c.r > 80 }
        XCTAssertEqual(Double(try XCTUnwrap(rows.first)), Double(a.y) + Double(a.height) / 4, accuracy: 1.5)
    }

    func testSpectrumOfOneKilohertzPeaksAtOneKilohertzOnTheLogAxis() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("tone.wav").path, png = dir.appendingPathComponent("s.png").path
        let tone = (0..<48000).map { Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        try TestFiles.writeSoundFile(wav, [tone], sampleRate: 48000)
        try AudioPlot.draw(file: wav, to: png, kind: .spectrum, width: 1000, height: 400)
        let p = try readPNG(png)
        XCTAssertEqual([p.width, p.height], [1000, 400])
        let a = area(1000, 400)
        // The curve is red; its highest pixel is the peak.
        var best = (x: -1, y: Int.max)
        for y in a.y..<(a.y + a.height) {
            for x in a.x..<(a.x + a.width) {
                let c = p.rgb(x, y)
                if c.r - c.b > 80 && y < best.y { best = (x, y) }
            }
            if best.x >= 0 { break }
        }
        let expectedX = Double(a.x) + Double(a.width) * log(1000.0 / 20) / log(24000.0 / 20)
        XCTAssertEqual(Double(best.x), expectedX, accuracy: 3)
        // 0 dBFS (less the Hann window's scalloping, at most 1.42 dB) is the top of the area.
        XCTAssertEqual(Double(best.y), Double(a.y) + 1.42 / 120 * Double(a.height) / 2, accuracy: 3)
    }

    func testSpectrogramOfALogSweepRisesAlongItsFrequency() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("sweep.wav").path, png = dir.appendingPathComponent("g.png").path
        // 100 Hz → 10 kHz in 2 s: f(t) = 100·100^(t/2), phase = 2π·100·T/ln(100)·(100^(t/T) − 1).
        let T = 2.0, k = log(100.0)
        let sweep = (0..<96000).map { n -> Float in
            let t = Double(n) / 48000
            return Float(0.5 * sin(2 * Double.pi * 100 * T / k * (exp(k * t / T) - 1)))
        }
        try TestFiles.writeSoundFile(wav, [sweep], sampleRate: 48000)
        try AudioPlot.draw(file: wav, to: png, kind: .spectrogram, width: 800, height: 400)
        let p = try readPNG(png)
        XCTAssertEqual([p.width, p.height], [800, 400])
        let a = area(800, 400)
        var previous = Int.max
        for fraction in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let column = Int(fraction * Double(a.width))
            let x = a.x + column
            let t = (Double(column) + 0.5) / Double(a.width) * T
            let f = 100 * pow(100, t / T)
            let expectedRow = Double(a.y + a.height) - Double(a.height) * log(f / 20) / log(24000.0 / 20)
            // The brightest pixel of the column (the colour map rises in r + g + b).
            let row = (a.y..<(a.y + a.height)).max { r1, r2 in
                let c1 = p.rgb(x, r1), c2 = p.rgb(x, r2)
                return c1.r + c1.g + c1.b < c2.r + c2.g + c2.b
            }!
            // Within a bin (48000/2048 Hz) of the frequency, in rows of the log axis.
            let binRows = 48000.0 / 2048 / f / log(24000.0 / 20) * Double(a.height)
            XCTAssertEqual(Double(row), expectedRow, accuracy: max(3, binRows), "at \(t) s, \(f) Hz")
            XCTAssertLessThan(row, previous, "the sweep rises")
            previous = row
        }
    }

    func testSVGParsesAsXMLWithItsSize() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("tone.wav").path, svg = dir.appendingPathComponent("s.svg").path
        try TestFiles.writeSoundFile(wav, [(0..<4800).map { Float(0.5 * sin(Double($0) * 0.1)) }], sampleRate: 48000)
        for kind in PlotKind.allCases {
            try AudioPlot.draw(file: wav, to: svg, kind: kind, width: 640, height: 300)
            final class Root: NSObject, XMLParserDelegate {
                var name: String?
                var attributes: [String: String] = [:]
                func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?,
                            qualifiedName: String?, attributes: [String: String]) {
                    if name == nil { name = element; self.attributes = attributes }
                }
            }
            let parser = XMLParser(contentsOf: URL(fileURLWithPath: svg))!
            let root = Root()
            parser.delegate = root
            XCTAssertTrue(parser.parse(), "\(kind): \(String(describing: parser.parserError))")
            XCTAssertEqual(root.name, "svg")
            func number(_ s: String?) -> Double? { s.flatMap { Double($0.replacingOccurrences(of: "pt", with: "")) } }
            XCTAssertEqual(number(root.attributes["width"]), 640, "\(kind)")
            XCTAssertEqual(number(root.attributes["height"]), 300, "\(kind)")
        }
    }

    func testBadInputThrowsAndWritesNothing() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("tone.wav").path
        try TestFiles.writeSoundFile(wav, [[0, 0.5, -0.5, 0]], sampleRate: 48000)
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: dir.appendingPathComponent("x.jpg").path)) {
            XCTAssertEqual($0 as? PlotError, .unknownImageType(path: dir.appendingPathComponent("x.jpg").path))
        }
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: dir.appendingPathComponent("x.png").path, channel: 1)) {
            XCTAssertEqual($0 as? PlotError, .noSuchChannel(path: wav, channel: 1, channelCount: 1))
        }
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: dir.appendingPathComponent("x.png").path, width: 10))
        XCTAssertThrowsError(try AudioPlot.draw(file: dir.appendingPathComponent("none.wav").path,
                                                to: dir.appendingPathComponent("x.png").path))
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: dir.appendingPathComponent("no/such/dir/x.png").path)) {
            guard case .cairo? = $0 as? PlotError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(fileNames(dir), ["tone.wav"])
    }
}

extension AudioPlotTests {
    /// Samples in memory draw the same picture as the same samples in a file (and leave nothing
    /// behind); an empty file draws axes only.
    func testBufferDrawsTheSamePictureAsItsFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("tone.wav").path
        let tone = (0..<9600).map { Float(0.8 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        try TestFiles.writeSoundFile(wav, [tone, tone.map { -$0 }], sampleRate: 48000)
        for kind in PlotKind.allCases {
            let a = dir.appendingPathComponent("a.png").path, b = dir.appendingPathComponent("b.png").path
            try AudioPlot.draw(file: wav, to: a, kind: kind, width: 400, height: 200, title: "x")
            try AudioPlot.draw(channels: [tone, tone.map { -$0 }], sampleRate: 48000, to: b, kind: kind,
                               width: 400, height: 200, title: "x")
            let pa = try readPNG(a), pb = try readPNG(b)
            XCTAssertEqual([pb.width, pb.height], [400, 200])
            XCTAssertEqual(pa.pixels, pb.pixels, "\(kind)")
        }
        XCTAssertEqual(fileNames(dir), ["a.png", "b.png", "tone.wav"])
        XCTAssertThrowsError(try AudioPlot.draw(channels: [[0, 1], [0]], sampleRate: 48000,
                                                to: dir.appendingPathComponent("c.png").path))
        // No frames: the axes, no curve.
        try AudioPlot.draw(channels: [[]], sampleRate: 48000, to: dir.appendingPathComponent("e.png").path, kind: .spectrogram)
        try AudioPlot.draw(channels: [[]], sampleRate: 48000, to: dir.appendingPathComponent("e.png").path)
        XCTAssertEqual(try readPNG(dir.appendingPathComponent("e.png").path).width, 1200)
    }

    // MARK: Bounded cost (issue 22)

    /// A spectrogram of a 10-frame, 1024-channel file took 22-29 s (every one of the 1120
    /// columns read and transformed all 1024 channels of the same frames). Now columns with the
    /// same frames share one analysis: well under a second even in a debug build's loops, and
    /// the picture is the same as the first column's analysis repeated.
    func testSpectrogramOfAShortManyChannelFileIsFast() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("wide.wav").path, png = dir.appendingPathComponent("wide.png").path
        let channels = (0..<1024).map { c in (0..<10).map { n in Float(0.5 * sin(Double(n + c) * 0.7)) } }
        try TestFiles.writeSoundFile(wav, channels, sampleRate: 48000)
        let started = Date()
        try AudioPlot.draw(file: wav, to: png, kind: .spectrogram, width: 1200, height: 400)
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 3, "1024 channels x 10 frames")
        XCTAssertEqual(try readPNG(png).width, 1200)
    }

    /// A 16384 x 16384 spectrogram peaked at 2.24 GB; pictures needing more than 2 GiB are
    /// refused before anything is read or written, with one line saying why.
    func testPicturesBeyondTheMemoryLimitAreRefused() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("a.wav").path, png = dir.appendingPathComponent("big.png").path
        try TestFiles.writeSoundFile(wav, [[Float](repeating: 0.1, count: 4800)], sampleRate: 48000)
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: png, kind: .spectrogram, width: 16384, height: 16384)) { error in
            XCTAssertEqual((error as? PlotError).map { "\($0)" },
                           "a 16384x16384 picture needs about 2.3 GB while drawing, more than the 2.1 GB a plot may use; draw a smaller one")
        }
        XCTAssertEqual(fileNames(dir), ["a.wav"])
        // 2 x the ARGB surface, plus 8 bytes per bin and column of a spectrogram.
        XCTAssertEqual(AudioPlot.memoryNeeded(kind: .waveform, width: 8192, height: 8192), 2 * 8192 * 8192 * 4)
        XCTAssertLessThan(AudioPlot.memoryNeeded(kind: .spectrogram, width: 8192, height: 16384), AudioPlot.maximumMemory)
    }

    /// A cairo that cannot be loaded (the loader's test hook) is a one-line error naming the
    /// library, and no picture (nor partial file) is left.
    func testAMissingCairoIsAOneLineError() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("s.wav").path, png = dir.appendingPathComponent("w.png").path
        try TestFiles.writeSoundFile(wav, [[Float](repeating: 0.5, count: 4800)], sampleRate: 48000)
        setenv("AG_LAZY_LIBRARY_MISSING", "libcairo.so.2", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertThrowsError(try AudioPlot.draw(file: wav, to: png)) { error in
            XCTAssertEqual("\(error)", "cannot load cairo: libcairo.so.2: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["s.wav"])
    }
}
