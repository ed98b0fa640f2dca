// Tests of the SoundFont sampler: against fluidsynth's own command-line rendering, event timing, slice-size independence, errors.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class SamplerNodeTests: XCTestCase {
    static let soundFont = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isReadableFile(atPath: Self.soundFont), "timgm6mb-soundfont is not installed (make deps)")
    }

    /// Renders `events` (frame, event) through a sampler with `properties`, `frames` frames in
    /// slices of `slice` (or the pattern), stereo.
    func render(_ properties: SamplerProperties, events: [(Int64, MIDIEvent)], frames: Int, slice: Int = 512,
                slices: [Int]? = nil) throws -> [[Float]] {
        let sampler = try SamplerNode(id: "s", sampleRate: 48000, properties: properties)
        let g = try startedGraph([sampler], "s -> out", slice: slices?.max() ?? slice)
        for (frame, e) in events { XCTAssertTrue(sampler.send(e, at: frame)) }
        return renderFrames(g, frames: frames, channels: 2, slices: slices ?? [slice])
    }

    /// fluidsynth's command line renders `midi` (float WAV, 48 kHz, no reverb or chorus, its default gain 0.2).
    func fluidsynthRender(_ midi: Data) throws -> WAVFile {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ag-sampler-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let mid = dir.appendingPathComponent("in.mid"), wav = dir.appendingPathComponent("out.wav")
        try midi.write(to: mid)
        let p = try ChildProcess(executable: "/usr/bin/fluidsynth",
                                 arguments: ["-n", "-i", "-q", "-R", "0", "-C", "0", "-g", "0.2", "-r", "48000", "-O", "float",
                                             "-T", "wav", "-F", wav.path, Self.soundFont, mid.path],
                                 environment: [:])
        XCTAssertEqual(p.wait(timeout: 60), 0)
        return try WAVFile(contentsOf: wav)
    }

    static func onset(_ x: [Float], threshold: Float = 1e-4) -> Int? { x.firstIndex { abs($0) > threshold } }

    /// A flute A4 (program 73, key 69, velocity 100, 1 s) rendered by the sampler and by
    /// `fluidsynth -F` from a MIDI file with the same note: after aligning the onsets (the
    /// player's is one 64-frame block later), level (RMS over the note) within 0.05 dB, pitch
    /// within 0.1 cent, and the samples themselves within -60 dB of the note's peak (measured:
    /// identical).
    func testANoteMatchesFluidSynthsOwnRendering() throws {
        let smf = StandardMIDIFileWriter(format: 0, division: 480, tracks: [
            [StandardMIDIFileWriter.tempo(500_000, at: 0), .init(tick: 0, bytes: [0xC0, 73])]
                + StandardMIDIFileWriter.note(69, velocity: 100, at: 480, length: 960)])
        let reference = try fluidsynthRender(smf.data())
        let ours = try render(SamplerProperties(soundFont: Self.soundFont, program: 73), events: [
            (24000, .noteOn(channel: 0, key: 69, velocity: 100)), (72000, .noteOff(channel: 0, key: 69))], frames: 120_000)
        let refLeft = reference.samples[0].map { Float($0) }
        let r0 = try XCTUnwrap(Self.onset(refLeft)), o0 = try XCTUnwrap(Self.onset(ours[0]))
        let n = 44_000
        for c in 0..<2 {
            let a = Array(ours[c][o0..<(o0 + n)]), b = reference.samples[c][r0..<(r0 + n)].map { Float($0) }
            let la = SignalMeasurement.dBFS(SignalMeasurement.rms(a)), lb = SignalMeasurement.dBFS(SignalMeasurement.rms(b))
            let steady = 4800..<28800
            let fa = try XCTUnwrap(SignalMeasurement.estimateFrequency(a[steady], sampleRate: 48000))
            let fb = try XCTUnwrap(SignalMeasurement.estimateFrequency(b[steady], sampleRate: 48000))
            let cents = 1200 * log2(fa / fb)
            let diff = SignalMeasurement.dBFS(SignalMeasurement.maxAbsDifference(a, b) / SignalMeasurement.peak(b))
            print("sampler vs fluidsynth -F, channel \(c): onset \(o0) vs \(r0); level \(la) vs \(lb) dB; pitch \(fa) vs \(fb) Hz (\(cents) cents); max difference \(diff) dB re peak")
            XCTAssertEqual(la, lb, accuracy: 0.05)
            XCTAssertEqual(cents, 0, accuracy: 0.1)
            XCTAssertLessThan(diff, -60)
        }
    }

    /// The flute's fundamental over 0.1...0.6 s after the onset: the frequency in 300...700 Hz
    /// whose DFT magnitude is largest (1 Hz grid, then golden-section search to 1e-4 Hz).
    func steadyFrequency(_ x: [Float]) throws -> Double {
        let o = try XCTUnwrap(Self.onset(x))
        let w = Array(x[(o + 4800)..<(o + 28800)])
        let m = { (f: Double) in dftMagnitude(w, frequency: f, sampleRate: 48000) }
        var best = 300.0, bestMagnitude = 0.0
        for f in stride(from: 300.0, through: 700, by: 1) {
            let v = m(f)
            if v > bestMagnitude { best = f; bestMagnitude = v }
        }
        var a = best - 1, b = best + 1
        let r = (sqrt(5.0) - 1) / 2
        while b - a > 1e-4 {
            let c = b - r * (b - a), d = a + r * (b - a)
            if m(c) > m(d) { b = d } else { a = c }
        }
        return (a + b) / 2
    }

    /// Pitch bend (full up: 8191/8192 of the default ±2 semitones) and `tuning` (-100 cents)
    /// move the pitch by their formulas' ratios, within 1 cent (measured: -0.65 and -0.56 cent:
    /// the flute sample's loop), and the unbent A4 is within 2 cents of 440 Hz.
    func testPitchBendAndTuningMoveThePitchByTheirFormulas() throws {
        let flute = SamplerProperties(soundFont: Self.soundFont, program: 73)
        let note: [(Int64, MIDIEvent)] = [(0, .noteOn(channel: 0, key: 69, velocity: 100))]
        let plain = try steadyFrequency(render(flute, events: note, frames: 40_000)[0])
        let bent = try steadyFrequency(render(flute, events: [(0, .pitchBend(channel: 0, value: 16383))] + note, frames: 40_000)[0])
        let sampler = try SamplerNode(id: "s", sampleRate: 48000, properties: flute)
        try sampler.setParameter("tuning", -100)
        let g = try startedGraph([sampler], "s -> out")
        sampler.send(.noteOn(channel: 0, key: 69, velocity: 100), at: 0)
        let tuned = try steadyFrequency(renderFrames(g, frames: 40_000, channels: 2)[0])
        let bendCents = 1200 * log2(bent / plain), tuneCents = 1200 * log2(tuned / plain)
        print("frequencies: plain \(plain), bent \(bent), tuned \(tuned)")
        print("pitch bend 16383: \(bendCents) cents (formula \(200 * 8191.0 / 8192)); tuning -100: \(tuneCents) cents")
        XCTAssertEqual(bendCents, 200 * 8191.0 / 8192, accuracy: 1)
        XCTAssertEqual(tuneCents, -100, accuracy: 1)
        XCTAssertEqual(1200 * log2(plain / 440), 0, accuracy: 2)
    }

    /// An event at frame F sounds from fluidsynth's next 64-frame block: the render equals the
    /// render of the same note at frame 0 delayed by 64 * ceil(F / 64) frames, sample for sample,
    /// also when F falls in the middle of a 4096-frame slice (applied at the slice start, the
    /// note would start at 8192).
    func testANoteStartsAtItsFrameRoundedUpToFluidSynthsBlock() throws {
        let flute = SamplerProperties(soundFont: Self.soundFont, program: 73)
        let atZero = try render(flute, events: [(0, .noteOn(channel: 0, key: 69, velocity: 100))], frames: 30_000, slice: 4096)
        for frame: Int64 in [10_000, 10_048, 10_049] {
            let shift = Int((frame + 63) / 64 * 64)
            let late = try render(flute, events: [(frame, .noteOn(channel: 0, key: 69, velocity: 100))], frames: 30_000, slice: 4096)
            XCTAssertEqual(Array(late[0][0..<shift]), [Float](repeating: 0, count: shift), "silent before frame \(shift)")
            XCTAssertEqual(Array(late[0][shift..<30_000]), Array(atZero[0][0..<(30_000 - shift)]), "note at \(frame) = note at 0 delayed by \(shift)")
        }
    }

    /// Forty notes, controllers, pitch bends and program changes at scattered frames render the
    /// same samples bit for bit in slices of 512 and in an irregular pattern of 17, 441, 1000 and 64.
    func testRenderIsIdenticalAcrossSliceSizes() throws {
        var rng = SeededRandom(seed: 20)
        var events: [(Int64, MIDIEvent)] = []
        for i in 0..<40 {
            let frame = Int64(rng.next() % 90_000), ch = UInt8(i % 4), key = UInt8(48 + rng.next() % 36)
            events.append((frame, .noteOn(channel: ch, key: key, velocity: UInt8(40 + rng.next() % 80))))
            events.append((frame + Int64(rng.next() % 20_000), .noteOff(channel: ch, key: key)))
            if i % 5 == 0 { events.append((frame, .pitchBend(channel: ch, value: Int(rng.next() % 16384)))) }
            if i % 7 == 0 { events.append((frame, .controlChange(channel: ch, controller: 7, value: UInt8(rng.next() % 128)))) }
            if i % 9 == 0 { events.append((frame, .programChange(channel: ch, program: UInt8(rng.next() % 128)))) }
        }
        let gm = SamplerProperties(soundFont: Self.soundFont)
        let a = try render(gm, events: events, frames: 120_000, slice: 512)
        let b = try render(gm, events: events, frames: 120_000, slices: [17, 441, 1000, 64])
        XCTAssertGreaterThan(SignalMeasurement.peak(a[0]), 0.01)
        XCTAssertEqual(a, b)
    }

    /// A file that is not a SoundFont, and a missing preset, are one-line errors naming the file.
    func testBadSoundFontsAreClearErrors() throws {
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("ag-not-a-soundfont-\(UUID().uuidString).sf2")
        try Data("RIFF....sfbk but not really".utf8).write(to: junk)
        defer { try? FileManager.default.removeItem(at: junk) }
        XCTAssertThrowsError(try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(soundFont: junk.path))) {
            XCTAssertEqual("\($0)", "node \"s\": \(junk.path) is not a SoundFont 2 file (its RIFF size does not match the file's)")
        }
        XCTAssertThrowsError(try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(soundFont: "/nonexistent.sf2"))) {
            XCTAssertEqual("\($0)", "node \"s\": cannot read SoundFont /nonexistent.sf2")
        }
        XCTAssertThrowsError(try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(soundFont: Self.soundFont, program: 5, bank: 77))) {
            XCTAssertEqual("\($0)", "node \"s\": \(Self.soundFont) has no preset 5 in bank 77")
        }
    }
}
