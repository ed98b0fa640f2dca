// Tests of AudioSequencer: MIDI files into the sampler at the frames of their tempo maps, transport, slice-size independence.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioSequencerTests: XCTestCase {
    typealias W = StandardMIDIFileWriter
    static let soundFont = URL(fileURLWithPath: "/usr/share/sounds/sf2/TimGM6mb.sf2")

    /// 480 ticks per quarter; 120 BPM, 240 BPM from tick 960, 60 BPM from tick 1440; notes off the 64-frame grid.
    static let tempoFile = W(format: 1, division: 480, tracks: [
        [W.tempo(500_000, at: 0), W.tempo(250_000, at: 960), W.tempo(1_000_000, at: 1440)],
        [7, 487, 961, 1203, 1447, 1921].flatMap { W.note(UInt8(60 + $0 % 12), at: $0, length: 200) },
    ])

    /// The seconds of `tick` in `tempoFile`, by hand from its three tempo spans.
    static func formulaSeconds(_ tick: Int) -> Double {
        let t = Double(tick)
        if tick <= 960 { return t / 480 * 0.5 }
        if tick <= 1440 { return 1.0 + (t - 960) / 480 * 0.25 }
        return 1.25 + (t - 1440) / 480 * 1.0
    }

    /// A manual-rendering engine with a flute sampler into the main mixer, started.
    func samplerEngine(maximum: AudioFrameCount = 4096, program: UInt8 = 73) throws -> (AudioEngine, AudioUnitSampler) {
        let engine = AudioEngine()
        try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!, maximumFrameCount: maximum)
        let sampler = AudioUnitSampler()
        engine.attach(sampler)
        engine.connect(sampler, to: engine.mainMixerNode, format: nil)
        try sampler.loadSoundBankInstrument(at: Self.soundFont, program: program, bankMSB: UInt8(kAUSampler_DefaultMelodicBankMSB), bankLSB: UInt8(kAUSampler_DefaultBankLSB))
        try engine.start()
        return (engine, sampler)
    }

    /// The sequencer playing the three-tempo file renders exactly what the sampler renders for
    /// the same notes sent with `startNote(…, at:)` at round(seconds(tick) * 48000), the seconds
    /// by hand from the tempo spans: the events reach the sampler at those frames.
    func testAFilePlaysAtTheFramesOfItsTempoMap() throws {
        let (engine, _) = try samplerEngine()
        let sequencer = AudioSequencer(audioEngine: engine)
        try sequencer.load(from: Self.tempoFile.data())
        XCTAssertEqual(sequencer.tracks.count, 2)
        XCTAssertEqual(sequencer.tracks[1].lengthInSeconds, Self.formulaSeconds(2121), accuracy: 1e-12)
        XCTAssertEqual(sequencer.seconds(forBeats: 3.5), Self.formulaSeconds(1680), accuracy: 1e-12)
        XCTAssertEqual(sequencer.beats(forSeconds: Self.formulaSeconds(1100)), 1100.0 / 480, accuracy: 1e-9)
        try sequencer.start()
        XCTAssertTrue(sequencer.isPlaying)
        let played = try render(engine, frames: 4 * 48000, piece: 1000)
        XCTAssertEqual(sequencer.currentPositionInSeconds, 4, accuracy: 1e-9)

        let (reference, sampler) = try samplerEngine()
        for tick in [7, 487, 961, 1203, 1447, 1921] {
            let key = UInt8(60 + tick % 12)
            sampler.startNote(key, withVelocity: 100, onChannel: 0, at: AudioTime(sampleTime: Int64((Self.formulaSeconds(tick) * 48000).rounded()), atRate: 48000))
            sampler.stopNote(key, onChannel: 0, at: AudioTime(sampleTime: Int64((Self.formulaSeconds(tick + 200) * 48000).rounded()), atRate: 48000))
        }
        let expected = try render(reference, frames: 4 * 48000, piece: 1000)
        XCTAssertGreaterThan(SignalMeasurement.peak(expected[0]), 0.01)
        XCTAssertEqual(played, expected)
    }

    /// A General MIDI-like file (three tracks: melody with program changes and pitch bends,
    /// bass, drums on channel 10; two tempo changes) rendered by the engine in pieces of 1000
    /// and of 441 frames (slices of at most 4096 and 512 frames): the same samples bit for bit.
    func testAFileRendersTheSameAcrossSliceSizes() throws {
        var melody: [W.Event] = [.init(tick: 0, bytes: [0xC0, 0])]
        var bass: [W.Event] = [.init(tick: 0, bytes: [0xC1, 33])]
        var drums: [W.Event] = []
        for bar in 0..<16 {
            let t = bar * 1920
            for i in 0..<8 { melody += W.note(UInt8(60 + (bar * 5 + i * 3) % 24), at: t + i * 240, length: 200) }
            if bar % 4 == 0 { melody.append(.init(tick: t, bytes: [0xC0, UInt8(bar * 3)])); melody.append(.init(tick: t + 100, bytes: [0xE0, 0, 80])) }
            for i in 0..<4 { bass += W.note(UInt8(36 + (bar + i) % 12), channel: 1, at: t + i * 480, length: 400) }
            for i in 0..<8 { drums += W.note(i % 2 == 0 ? 36 : 42, channel: 9, at: t + i * 240, length: 60) }
        }
        let file = W(format: 1, division: 480, tracks: [[W.tempo(500_000, at: 0), W.tempo(400_000, at: 1920 * 4), W.tempo(600_000, at: 1920 * 10)],
                                                       melody, bass.map { $0 }, drums])
        func renderFile(piece: Int, maximum: AudioFrameCount) throws -> [[Float]] {
            let engine = AudioEngine()
            try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!, maximumFrameCount: maximum)
            let sampler = AudioUnitSampler()
            engine.attach(sampler)
            engine.connect(sampler, to: engine.mainMixerNode, format: nil)
            try engine.start()
            let sequencer = AudioSequencer(audioEngine: engine)
            try sequencer.load(from: file.data())
            try sequencer.start()
            return try render(engine, frames: 20 * 48000, piece: piece)
        }
        let a = try renderFile(piece: 1000, maximum: 4096)
        let b = try renderFile(piece: 441, maximum: 512)
        XCTAssertGreaterThan(SignalMeasurement.peak(a[0]), 0.05)
        XCTAssertEqual(a, b)
    }

    /// Transport: the position while stopped and set; stop releases the notes (the output
    /// decays to silence); rate 2 plays the file's events twice as fast (the second note of the
    /// tempo file at frame round(seconds / 2 * 48000)); a muted track is silent, a soloed one plays alone.
    func testTransportPositionRateStopMuteAndSolo() throws {
        let (engine, _) = try samplerEngine()
        let sequencer = AudioSequencer(audioEngine: engine)
        XCTAssertThrowsError(try sequencer.start())   // no file
        let drone = W(format: 1, division: 480, tracks: [[W.tempo(500_000, at: 0)], W.note(69, at: 0, length: 480 * 40), W.note(76, at: 0, length: 480 * 40)])
        try sequencer.load(from: drone.data())
        sequencer.currentPositionInBeats = 2
        XCTAssertEqual(sequencer.currentPositionInSeconds, 1, accuracy: 1e-12)
        sequencer.currentPositionInSeconds = 0
        try sequencer.start()
        _ = try render(engine, frames: 48000)
        XCTAssertEqual(sequencer.currentPositionInSeconds, 1, accuracy: 1e-9)
        sequencer.stop()
        XCTAssertFalse(sequencer.isPlaying)
        XCTAssertEqual(sequencer.currentPositionInSeconds, 1, accuracy: 1e-9)
        let afterStop = try render(engine, frames: 96000)
        XCTAssertLessThan(SignalMeasurement.peak(afterStop[0][48000...]), 1e-4, "released notes die out")

        let (e2, _) = try samplerEngine()
        let s2 = AudioSequencer(audioEngine: e2)
        try s2.load(from: drone.data())
        s2.tracks[1].isMuted = true
        s2.tracks[2].isMuted = true
        try s2.start()
        XCTAssertEqual(SignalMeasurement.peak(try render(e2, frames: 24000)[0]), 0, "every track muted")

        // Rate 2 against the same notes sent at the halved frames.
        let (e3, _) = try samplerEngine()
        let s3 = AudioSequencer(audioEngine: e3)
        try s3.load(from: Self.tempoFile.data())
        s3.rate = 2
        try s3.start()
        let fast = try render(e3, frames: 2 * 48000)
        let (e4, sampler4) = try samplerEngine()
        for tick in [7, 487, 961, 1203, 1447, 1921] {
            let key = UInt8(60 + tick % 12)
            sampler4.startNote(key, withVelocity: 100, onChannel: 0, at: AudioTime(sampleTime: Int64((Self.formulaSeconds(tick) / 2 * 48000).rounded()), atRate: 48000))
            sampler4.stopNote(key, onChannel: 0, at: AudioTime(sampleTime: Int64((Self.formulaSeconds(tick + 200) / 2 * 48000).rounded()), atRate: 48000))
        }
        XCTAssertEqual(fast, try render(e4, frames: 2 * 48000))
    }

    /// A damaged file is a one-line error naming the byte.
    func testDamagedFilesAreClearErrors() throws {
        let sequencer = AudioSequencer()
        XCTAssertThrowsError(try sequencer.load(from: Data("MThd\0\0\0\u{6}\0\u{2}\0\u{1}\0`".utf8))) {
            XCTAssertEqual("\($0)", "data: byte 8: format 2 files are not supported (only 0 and 1)")
        }
    }
}
