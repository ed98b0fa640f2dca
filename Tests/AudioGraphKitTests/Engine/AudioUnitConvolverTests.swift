// AudioUnitConvolver through the engine API in manual rendering: a stereo response from a file, zero latency.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitConvolverTests: XCTestCase {
    func testConvolvesWithTheFilesResponse() throws {
        // h = [0.5 at 0, -0.25 at 10] (left), [1 at 3] (right): the output is exact sums of delayed input.
        var left = [Float](repeating: 0, count: 200), right = [Float](repeating: 0, count: 200)
        left[0] = 0.5; left[10] = -0.25; right[3] = 1
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: 48000, channels: [left, right]).write(to: url)
        let conv = AudioUnitConvolver(impulseResponseURL: url, normalize: false)
        let engine = try makeManualEngine(through: conv)
        try engine.start()
        let out = try render(engine, frames: 4800)
        func x(_ n: Int) -> Float { n < 0 ? 0 : sineSample(Int64(n), frequency: 440, rate: 48000) }
        for n in 0..<4800 {
            XCTAssertEqual(out[0][n], 0.5 * x(n) - 0.25 * x(n - 10), accuracy: 1e-6)
            XCTAssertEqual(out[1][n], x(n - 3), accuracy: 1e-6)
        }
    }

    func testAMissingFileFailsTheStart() throws {
        let conv = AudioUnitConvolver(impulseResponseURL: URL(fileURLWithPath: "/nonexistent/ir.wav"))
        let engine = try makeManualEngine(through: conv)
        XCTAssertThrowsError(try engine.start()) { XCTAssertTrue("\($0)".contains("/nonexistent/ir.wav"), "\($0)") }
    }
}
