// Tests of AudioFileReader.waveform against min/max/RMS computed directly from the whole file.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class AudioFileReaderWaveformTests: XCTestCase {
    func direct(_ samples: [Float], points: Int) -> [WaveformPoint] {
        let total = samples.count
        return (0..<points).map { i in
            let run = samples[(total * i / points)..<(total * (i + 1) / points)]
            guard !run.isEmpty else { return WaveformPoint(minimum: 0, maximum: 0, rms: 0) }
            let rms = (run.map { Double($0) * Double($0) }.reduce(0, +) / Double(run.count)).squareRoot()
            return WaveformPoint(minimum: run.min()!, maximum: run.max()!, rms: Float(rms))
        }
    }

    func assertClose(_ got: [WaveformPoint], _ expected: [WaveformPoint], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(got.count, expected.count, file: file, line: line)
        for (g, e) in zip(got, expected) {
            XCTAssertEqual(g.minimum, e.minimum, file: file, line: line)
            XCTAssertEqual(g.maximum, e.maximum, file: file, line: line)
            XCTAssertEqual(g.rms, e.rms, accuracy: 1e-6, file: file, line: line)
        }
    }

    func testPointsOfAStereoFileSpanningManyBlocks() throws {
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("w.wav").path
        let frames = 100_003   // > 12 read blocks, not a multiple of the point count
        let left = (0..<frames).map { Float(0.8 * sin(Double($0) * 0.001) * sin(Double($0) * 0.37)) }
        let right = (0..<frames).map { Float(($0 % 977) - 488) / 1000 }
        try TestFiles.writeSoundFile(path, [left, right], sampleRate: 44100)
        let points = try AudioFileReader.waveform(path: path, pointCount: 37)
        XCTAssertEqual(points.count, 2)
        assertClose(points[0], direct(left, points: 37))
        assertClose(points[1], direct(right, points: 37))
        assertClose(try AudioFileReader.waveform(path: path, pointCount: 1)[1], direct(right, points: 1))
    }

    func testMorePointsThanFramesGiveEmptyRunsAsZeros() throws {
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("short.wav").path
        let samples: [Float] = [0.5, -0.25, 0.125, 1, -1]
        try TestFiles.writeSoundFile(path, [samples], sampleRate: 8000)
        assertClose(try AudioFileReader.waveform(path: path, pointCount: 8)[0], direct(samples, points: 8))
    }

    func testBadArgumentsThrowOneLineErrors() throws {
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("x.wav").path
        try TestFiles.writeSoundFile(path, [[0, 1]], sampleRate: 8000)
        XCTAssertThrowsError(try AudioFileReader.waveform(path: path, pointCount: 0)) { error in
            XCTAssertFalse("\(error)".contains("\n"))
        }
        XCTAssertThrowsError(try AudioFileReader.waveform(path: path + ".missing", pointCount: 10))
    }
}
