// The timePitch example graphs do what the README says: karaoke's key change, the podcast at 1.5x.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

extension ExampleGraphsTests {
    /// Graphs/karaoke.json: the `key` timePitch drops the whole mix by 200 cents at 3 s (an
    /// update). The bass (a 110 Hz triangle) is fitted at 110 Hz and at 110 * 2^(-200/1200)
    /// = 98.0 Hz before and after.
    func testKaraokeKeyChangeLowersTheBassTwoSemitonesAtThreeSeconds() throws {
        let v = try GraphLoader.load(Self.graphsFolder.appendingPathComponent("karaoke.json").path)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let y = try renderToFile(v, dir.appendingPathComponent("k.wav").path)
        let sr = y.sampleRate
        let lowered = 110 * pow(2, -200.0 / 1200)
        func fit(_ from: Double, _ to: Double) -> (at110: Double, atLowered: Double) {
            let fit = ToneFit(y.channels[0][Int(from * sr)..<Int(to * sr)], sampleRate: sr, frequencies: [110, lowered])
            return (fit.tones[0].amplitude, fit.tones[1].amplitude)
        }
        let before = fit(1, 2.5), after = fit(3.5, 4.5)
        XCTAssertGreaterThan(before.at110, 0.05)
        XCTAssertLessThan(before.atLowered, before.at110 / 20, "no 98 Hz before the key change")
        XCTAssertGreaterThan(after.atLowered, 0.05)
        XCTAssertLessThan(after.at110, after.atLowered / 20, "no 110 Hz after it")
        XCTAssertEqual(after.atLowered, before.at110, accuracy: before.at110 * 0.15, "the same level, lower")
    }

    /// Graphs/podcast.json: the speech file played at rate 1.5 starts where it starts and ends
    /// at its own end / 1.5 (first and last 20 ms window above -40 dBFS RMS).
    func testPodcastPlaysTheSpeechOneAndAHalfTimesAsFast() throws {
        let v = try GraphLoader.load(Self.graphsFolder.appendingPathComponent("podcast.json").path)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let y = try renderToFile(v, dir.appendingPathComponent("p.wav").path)
        let speech = try AudioFileReader.read(path: Self.graphsFolder.appendingPathComponent("podcast-speech.flac").path)
        XCTAssertEqual(speech.info.sampleRate, y.sampleRate)
        func speaking(_ x: [Float], _ sr: Double) -> (first: Double, last: Double) {
            let w = Int(0.02 * sr)
            let windows = (0..<(x.count / w)).filter {
                SignalMeasurement.dBFS(SignalMeasurement.rms(x[($0 * w)..<(($0 + 1) * w)])) > -40
            }
            return (Double(windows.first ?? 0) * 0.02, Double((windows.last ?? 0) + 1) * 0.02)
        }
        let source = speaking(speech.channels[0], speech.info.sampleRate)
        let faster = speaking(y.channels[0], y.sampleRate)
        XCTAssertEqual(faster.first, source.first / 1.5, accuracy: 0.03)
        XCTAssertEqual(faster.last, source.last / 1.5, accuracy: 0.05)
        XCTAssertLessThan(faster.last, Double(y.channels[0].count) / y.sampleRate, "the graph's duration holds all of it")
    }
}
