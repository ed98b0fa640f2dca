// Tests of audio files as sampler zones: root keys from `smpl` chunks, pitch by key, onsets, loops, release, mapping defaults, errors.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class AudioFileInstrumentTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ag-zones-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A 16-bit WAV file of `channels` at 48 kHz, with a `smpl` chunk written here byte by byte
    /// (Microsoft's layout: unity note, pitch fraction of a semitone in 1/2^32, one forward loop
    /// whose end is the last frame played) when `unityNote` is given.
    func wav(_ name: String, _ channels: [[Double]], unityNote: Int? = nil, pitchFraction: UInt32 = 0,
             loop: (start: Int, lastFrame: Int)? = nil) throws -> String {
        var data = try WAVFile(sampleRate: 48000, sampleType: .int16, channels: channels).data()
        if let unityNote {
            var chunk = [UInt8]()
            func u32(_ v: UInt32) { chunk += withUnsafeBytes(of: v.littleEndian, Array.init) }
            chunk += Array("smpl".utf8)
            u32(36 + (loop == nil ? 0 : 24))
            u32(0); u32(0); u32(UInt32(1_000_000_000 / 48000))      // manufacturer, product, sample period (ns)
            u32(UInt32(unityNote)); u32(pitchFraction)
            u32(0); u32(0)                                          // SMPTE format, offset
            u32(loop == nil ? 0 : 1); u32(0)                        // loops, sampler data
            if let loop { u32(0); u32(0); u32(UInt32(loop.start)); u32(UInt32(loop.lastFrame)); u32(0); u32(0) }
            data += chunk
            let riff = UInt32(data.count - 8)
            data.replaceSubrange(4..<8, with: withUnsafeBytes(of: riff.littleEndian, Array.init))
        }
        let path = directory.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func sine(_ frequency: Double, seconds: Double, amplitude: Double = 0.5) -> [Double] {
        (0..<Int(seconds * 48000)).map { amplitude * sin(2 * .pi * frequency * Double($0) / 48000) }
    }

    /// Renders `events` through a sampler playing `files`, stereo, in slices of `slice`.
    func render(_ files: [String], events: [(Int64, MIDIEvent)], frames: Int, slice: Int = 512) throws -> [[Float]] {
        let sampler = try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(audioFiles: files))
        let g = try startedGraph([sampler], "s -> out", slice: slice)
        for (frame, e) in events { XCTAssertTrue(sampler.send(e, at: frame)) }
        return renderFrames(g, frames: frames, channels: 2, slices: [slice])
    }

    /// The frequency of the steady tone 0.1...0.9 s into `x`.
    func frequency(_ x: [Float]) throws -> Double {
        try XCTUnwrap(ToneFit(dominantToneOf: x[4800..<43200], sampleRate: 48000)).tones[0].frequency
    }

    /// A 440 Hz recording whose `smpl` chunk says unity note 57 (A3) plays at
    /// 440·2^((key − 57)/12) for keys 45, 57, 64 and 69, each within 1 cent of the formula
    /// (measured: within 0.01 cent). Read as key 60 (the default without a chunk), every note
    /// would be 300 cents flat. A recording 50 cents sharp of its unity note 69
    /// (pitch fraction 2^31) plays key 69 at 440 Hz.
    func testPitchFollowsTheKeyFromTheSmplRootKey() throws {
        let a = try wav("a440-root57.wav", [Self.sine(440, seconds: 1.2)], unityNote: 57)
        XCTAssertEqual(try AudioFileInstrument.zones(for: [a]).map(\.rootKey), [57])
        for key in [45, 57, 64, 69] {
            let out = try render([a], events: [(0, .noteOn(channel: 0, key: UInt8(key), velocity: 127))], frames: 48000)
            let f = try frequency(out[0]), expected = 440 * pow(2, Double(key - 57) / 12)
            print("key \(key): \(f) Hz, formula \(expected) Hz, \(1200 * log2(f / expected)) cents")
            XCTAssertEqual(1200 * log2(f / expected), 0, accuracy: 1, "key \(key)")
        }
        let sharp = try wav("sharp.wav", [Self.sine(440 * pow(2, 50.0 / 1200), seconds: 1.2)], unityNote: 69, pitchFraction: 0x8000_0000)
        let out = try render([sharp], events: [(0, .noteOn(channel: 0, key: 69, velocity: 127))], frames: 48000)
        let f = try frequency(out[0])
        print("50 cents sharp at unity 69, key 69: \(f) Hz (\(1200 * log2(f / 440)) cents from 440)")
        XCTAssertEqual(1200 * log2(f / 440), 0, accuracy: 1)
    }

    /// A note at frame F starts the file's samples at the SoundFont sampler's frame, 64·⌈F/64⌉
    /// (fluidsynth's block): silence before it, and the recording (seeded noise smoothed over 4
    /// frames, root key 60 by default, played at key 60) found in the output at exactly that lag
    /// by cross-correlation (after fluidsynth's first-block gain ramp; the first sample of the
    /// block is 0, the second not), with a normalised correlation above 0.9 (measured: 0.96; what
    /// differs is SoundFont 2's low-pass filter, open at 19.9 kHz, on the noise's top octave).
    /// For F = 10_001, 10_048 and 10_049 in slices of 512.
    func testANoteStartsTheRecordingAtItsFrameRoundedUpToTheBlock() throws {
        var rng = SeededRandom(seed: 7)
        let white = (0..<24003).map { _ in Double(rng.next() % 20001) / 20000 - 0.5 }
        let noise: [Double] = (0..<24000).map { (i: Int) -> Double in
            let s: Double = white[i] + white[i + 1] + white[i + 2] + white[i + 3]
            return s / 2
        }
        let path = try wav("noise.wav", [noise])
        let recording = try WAVFile(contentsOf: URL(fileURLWithPath: path)).samples[0]
        for frame: Int64 in [10_001, 10_048, 10_049] {
            let onset = Int((frame + 63) / 64 * 64)
            let out = try render([path], events: [(frame, .noteOn(channel: 0, key: 60, velocity: 127))], frames: 40_000)[0]
            XCTAssertEqual(Array(out[0..<onset]), [Float](repeating: 0, count: onset), "silent before \(onset)")
            XCTAssertNotEqual(out[onset + 1], 0)
            let reference = Array(recording[64..<8064])
            let window = Array(out[(onset + 64 - 200)..<(onset + 64 + 8200)])
            let lag = SignalMeasurement.bestLag(of: reference, in: window, maxLag: 400)
            XCTAssertEqual(lag.map { $0 - 200 }, 0, "note at \(frame): the recording starts at \(onset)")
            let r = try XCTUnwrap(SignalMeasurement.normalizedCrossCorrelation(of: reference, in: window, lag: 200))
            print("note at \(frame): onset \(onset), lag \((lag ?? 0) - 200), correlation \(r)")
            XCTAssertGreaterThan(r, 0.9)
        }
    }

    /// A 0.2 s recording of 480 Hz (100-frame period) whose `smpl` loop is its second half (a
    /// whole number of periods): key 60 held 1.5 s sounds a steady 480 Hz sine to the end, across
    /// ten loop jumps per second: over 0.3...1.4 s the sine fit leaves a residual below -60 dB
    /// (measured: -86 dB), and the level at 1.3 s is the level at 0.1 s within 0.1 dB. Without the
    /// loop the note would end at 0.2 s. Key 72 loops at twice the rate (960 Hz, within 1 cent).
    func testALoopContinuesSeamlessly() throws {
        let path = try wav("loop.wav", [Self.sine(480, seconds: 0.2)], unityNote: 60, loop: (start: 4800, lastFrame: 9599))
        XCTAssertEqual(try AudioFileInstrument.zones(for: [path])[0].loop, 4800..<9600)
        let out = try render([path], events: [(0, .noteOn(channel: 0, key: 60, velocity: 127))], frames: 72_000)[0]
        let fit = ToneFit(out[14400..<67200], sampleRate: 48000, frequencies: [480])
        let early = SignalMeasurement.rms(out[4800..<9600]), late = SignalMeasurement.rms(out[62400..<67200])
        print("loop: residual \(fit.thdPlusNoiseDB) dB; level at 0.1 s \(SignalMeasurement.dBFS(early)), at 1.3 s \(SignalMeasurement.dBFS(late)) dBFS")
        XCTAssertLessThan(fit.thdPlusNoiseDB, -60)
        XCTAssertEqual(SignalMeasurement.dBFS(late / early), 0, accuracy: 0.1)
        let octave = try render([path], events: [(0, .noteOn(channel: 0, key: 72, velocity: 127))], frames: 48000)[0]
        XCTAssertEqual(1200 * log2(try frequency(octave) / 960), 0, accuracy: 1)
    }

    /// A note off fades the looped note over the 0.1 s release, linearly in dB to -96 dB
    /// (fluidsynth's volume envelope): about -24 dB 25 ms after the note off, -48 dB at 50 ms
    /// (each within 3 dB, the envelope moving in 64-frame steps), and exact silence from 0.1 s
    /// plus two blocks on.
    func testANoteOffReleasesOverTheReleaseTime() throws {
        let path = try wav("loop.wav", [Self.sine(480, seconds: 0.2)], unityNote: 60, loop: (start: 4800, lastFrame: 9599))
        let off = 24000
        let out = try render([path], events: [(0, .noteOn(channel: 0, key: 60, velocity: 127)), (Int64(off), .noteOff(channel: 0, key: 60))],
                             frames: 36000)[0]
        let before = SignalMeasurement.rms(out[(off - 4800)..<off])
        func level(_ ms: Int) -> Double {
            let c = off + ms * 48
            return SignalMeasurement.dBFS(SignalMeasurement.rms(out[(c - 48)..<(c + 48)]) / before)
        }
        print("release: \(level(25)) dB at 25 ms, \(level(50)) dB at 50 ms")
        XCTAssertEqual(level(25), -24, accuracy: 3)
        XCTAssertEqual(level(50), -48, accuracy: 3)
        let silentFrom = off + Int(AudioFileInstrument.releaseSeconds * 48000) + 128
        XCTAssertEqual(SignalMeasurement.peak(out[silentFrom..<36000]), 0)
    }

    /// A stereo file plays as two voices panned hard: its left channel's 440 Hz on the left,
    /// its right channel's 660 Hz on the right (each within 1 cent, the other tone 60 dB down).
    func testAStereoFilePlaysItsChannelsLeftAndRight() throws {
        let path = try wav("stereo.wav", [Self.sine(440, seconds: 1.2), Self.sine(660, seconds: 1.2)], unityNote: 60)
        let out = try render([path], events: [(0, .noteOn(channel: 0, key: 60, velocity: 127))], frames: 48000)
        for (c, f) in [(0, 440.0), (1, 660.0)] {
            let fit = ToneFit(out[c][4800..<43200], sampleRate: 48000, frequencies: [440, 660])
            let other = f == 440 ? 660.0 : 440.0
            XCTAssertEqual(1200 * log2(try frequency(out[c]) / f), 0, accuracy: 1)
            XCTAssertLessThan(SignalMeasurement.dBFS(fit.amplitude(at: other)! / fit.amplitude(at: f)!), -60)
        }
    }

    /// Files without a chunk take root keys 60, 61, … in order; alone a zone spans the keyboard,
    /// with others each takes the keys nearest its root (a tie to the lower); a `smpl` root key
    /// is kept. Velocity ranges default to all.
    func testFilesWithoutPlacementTakeSuccessiveKeysFromMiddleC() throws {
        let a = try wav("a.wav", [Self.sine(440, seconds: 0.1)]), b = try wav("b.wav", [Self.sine(440, seconds: 0.1)])
        let c = try wav("c.wav", [Self.sine(440, seconds: 0.1)], unityNote: 72)
        XCTAssertEqual(try AudioFileInstrument.zones(for: [a]).map(\.keys), [0...127])
        let zones = try AudioFileInstrument.zones(for: [a, b, c])
        XCTAssertEqual(zones.map(\.rootKey), [60, 61, 72])
        XCTAssertEqual(zones.map(\.keys), [0...60, 61...66, 67...127])
        XCTAssertEqual(zones.map(\.velocities), [0...127, 0...127, 0...127])
        // Key 61 plays b only: its pitch is b's root pitch (440 Hz), not a's pitched up.
        let out = try render([a, b, c], events: [(0, .noteOn(channel: 0, key: 61, velocity: 127))], frames: 4800)[0]
        XCTAssertEqual(1200 * log2(try XCTUnwrap(SignalMeasurement.estimateFrequency(out[480..<4400], sampleRate: 48000)) / 440), 0, accuracy: 1)
    }

    /// A file that is not a sound file, a missing file and a four-channel file are one-line
    /// errors naming the file.
    func testBadFilesAreClearErrors() throws {
        let junk = directory.appendingPathComponent("junk.wav").path
        try Data("not a sound file".utf8).write(to: URL(fileURLWithPath: junk))
        let quad = try wav("quad.wav", Array(repeating: Self.sine(440, seconds: 0.1), count: 4))
        for (path, expected) in [(junk, "\(junk): cannot open"), ("/nonexistent.wav", "/nonexistent.wav: cannot open"),
                                 (quad, "\(quad) has 4 channels; a sampler zone takes a mono or stereo file")] {
            XCTAssertThrowsError(try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(audioFiles: [path]))) {
                XCTAssertTrue("\($0)".hasPrefix("node \"s\": \(expected)"), "\($0)")
                XCTAssertFalse("\($0)".contains("\n"))
            }
        }
    }

    /// A 16-bit mono AIFF file written here chunk by chunk (Apple's AIFF 1.3 layout, big-endian):
    /// `COMM` (48 kHz as an 80-bit float), `MARK` (markers 1 and 2 at frames 4800 and 9600),
    /// `INST` (`baseNote`, `detune`, low/high note and velocity, sustain loop forward from
    /// marker 1 to 2), `SSND`.
    func aiff(_ name: String, _ samples: [Double], baseNote: Int8, detune: Int8, keys: ClosedRange<UInt8>, velocities: ClosedRange<UInt8>) throws -> String {
        var out = [UInt8]()
        func u16(_ v: UInt16) { out += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) { u16(UInt16(v >> 16)); u16(UInt16(v & 0xFFFF)) }
        func chunk(_ id: String, _ body: () -> Void) {
            out += Array(id.utf8)
            let sizeAt = out.count
            u32(0)
            body()
            let size = out.count - sizeAt - 4
            out.replaceSubrange(sizeAt..<(sizeAt + 4), with: [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)])
            if size % 2 == 1 { out.append(0) }
        }
        out += Array("FORM".utf8); u32(0); out += Array("AIFF".utf8)
        chunk("COMM") {
            u16(1); u32(UInt32(samples.count)); u16(16)
            u16(0x400E); u32(0xBB80_0000); u32(0)             // 48000 = 0xBB80 · 2^(15 − 15), 80-bit extended
        }
        chunk("MARK") {
            u16(2)
            for (id, position) in [(UInt16(1), UInt32(4800)), (2, 9600)] { u16(id); u32(position); out += [1, UInt8(ascii: "m")] }
        }
        chunk("INST") {
            out += [UInt8(bitPattern: baseNote), UInt8(bitPattern: detune), keys.lowerBound, keys.upperBound, velocities.lowerBound, velocities.upperBound]
            u16(0)                                             // gain
            u16(1); u16(1); u16(2)                             // sustain loop: forward, markers 1...2
            u16(0); u16(0); u16(0)                             // release loop: none
        }
        chunk("SSND") {
            u32(0); u32(0)
            for x in samples { u16(UInt16(bitPattern: Int16((x * 32767).rounded()))) }
        }
        let form = out.count - 8
        out.replaceSubrange(4..<8, with: [UInt8(form >> 24), UInt8((form >> 16) & 0xFF), UInt8((form >> 8) & 0xFF), UInt8(form & 0xFF)])
        let path = directory.appendingPathComponent(name).path
        try Data(out).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An AIFF file's `INST` and `MARK` chunks place its zone: root key 57, keys 48...72,
    /// velocities 1...127, the sustain loop between the markers (4800..<9600, exclusive end as
    /// AIFF markers sit between frames), and `detune` +10 applied as a correction (AIFF's
    /// meaning, the opposite of a WAV `smpl` fraction): key 57 sounds 480·2^(10/1200) Hz within
    /// 1 cent, sustained through the loop past the 0.2 s recording; key 40 (outside) is silent.
    func testAnAIFFFilesInstrumentChunkPlacesTheZone() throws {
        let path = try aiff("loop.aiff", Self.sine(480, seconds: 0.2), baseNote: 57, detune: 10, keys: 48...72, velocities: 1...127)
        let zone = try XCTUnwrap(AudioFileInstrument.zones(for: [path]).first)
        XCTAssertEqual(zone.rootKey, 57)
        XCTAssertEqual(zone.keys, 48...72)
        XCTAssertEqual(zone.velocities, 1...127)
        XCTAssertEqual(zone.loop, 4800..<9600)
        XCTAssertEqual(zone.pitchCorrection, 10)
        let out = try render([path], events: [(0, .noteOn(channel: 0, key: 57, velocity: 127))], frames: 48000)[0]
        let f = try frequency(out), expected = 480 * pow(2, 10.0 / 1200)
        print("AIFF: key 57 \(f) Hz, formula \(expected) Hz")
        XCTAssertEqual(1200 * log2(f / expected), 0, accuracy: 1)
        XCTAssertEqual(SignalMeasurement.peak(try render([path], events: [(0, .noteOn(channel: 0, key: 40, velocity: 127))], frames: 4800)[0]), 0)
    }

    /// fluidsynth refusing a sample's sound data (it refuses zero frames) is reported as that,
    /// with the file and the frame count — it was reported as "out of memory".
    func testARefusedSampleIsNotReportedAsOutOfMemory() throws {
        let zone = SamplerZone(path: "/x/empty.wav", rootKey: 60, pitchCorrection: 0, keys: 0...127, velocities: 0...127, loop: nil)
        do {
            _ = try AudioFileInstrument.makeSample([], sampleRate: 48000, zone: zone)
            XCTFail("an empty sample was taken")
        } catch {
            XCTAssertEqual(error.description, "fluidsynth refused the sample /x/empty.wav (0 frames at 48000 Hz)")
        }
    }
}
