// Tests of SFZ instruments as sampler zones: regions on the keyboard with inherited opcodes, loop modes, note names, errors naming file and line.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class SFZFileTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ag-sfz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("samples"), withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func tone(_ name: String, _ frequency: Double, seconds: Double) throws {
        let samples = (0..<Int(seconds * 48000)).map { 0.5 * sin(2 * Double.pi * frequency * Double($0) / 48000) }
        try WAVFile(sampleRate: 48000, sampleType: .int16, channels: [samples]).write(to: directory.appendingPathComponent("samples/" + name))
    }

    func sfz(_ text: String) throws -> String {
        let path = directory.appendingPathComponent("i.sfz").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func render(_ path: String, _ events: [(Int64, MIDIEvent)], frames: Int) throws -> [Float] {
        let sampler = try SamplerNode(id: "s", sampleRate: 48000, properties: SamplerProperties(sfz: path))
        let g = try startedGraph([sampler], "s -> out", slice: 512)
        for (frame, e) in events { XCTAssertTrue(sampler.send(e, at: frame)) }
        return renderFrames(g, frames: frames, channels: 2)[0]
    }

    func frequency(_ x: [Float]) throws -> Double {
        try XCTUnwrap(ToneFit(dominantToneOf: x[4800..<43200], sampleRate: 48000)).tones[0].frequency
    }

    /// Two regions under a group and a global (opcodes inherited, the region's own winning;
    /// `default_path`; a sample name with a space; note names; comments): the zones say so, and
    /// key 64 plays the 440 Hz sample centred on A4 at 440·2^(−5/12), key 48 the 300 Hz sample
    /// tuned −20 cents at 300·2^(−20/1200), each within 1 cent; key 72 (in no region) is silent.
    func testRegionsPlaceTheirSamplesOnTheKeyboard() throws {
        try tone("a 440.wav", 440, seconds: 1.2)
        try tone("b.wav", 300, seconds: 1.2)
        let path = try sfz("""
            // an instrument
            <control> default_path=samples/
            <global> ampeg_release=0.05 /* every region */ lovel=1
            <group> hivel=120
            <region> sample=a 440.wav lokey=c4 hikey=b4 pitch_keycenter=a4
            <region>
            sample=b.wav key=48 tune=-20 hivel=127
            """)
        let zones = try SFZFile.zones(contentsOf: path)
        XCTAssertEqual(zones.map(\.path), [directory.appendingPathComponent("samples/a 440.wav").path, directory.appendingPathComponent("samples/b.wav").path])
        XCTAssertEqual(zones.map(\.keys), [60...71, 48...48])
        XCTAssertEqual(zones.map(\.rootKey), [69, 48])
        XCTAssertEqual(zones.map(\.velocities), [1...120, 1...127])
        XCTAssertEqual(zones.map(\.pitchCorrection), [0, -20])
        XCTAssertEqual(zones.map(\.release), [0.05, 0.05])
        for (key, expected) in [(64, 440 * pow(2, -5.0 / 12)), (48, 300 * pow(2, -20.0 / 1200))] {
            let f = try frequency(render(path, [(0, .noteOn(channel: 0, key: UInt8(key), velocity: 100))], frames: 48000))
            print("sfz key \(key): \(f) Hz, formula \(expected)")
            XCTAssertEqual(1200 * log2(f / expected), 0, accuracy: 1)
        }
        XCTAssertEqual(SignalMeasurement.peak(try render(path, [(0, .noteOn(channel: 0, key: 72, velocity: 100))], frames: 4800)), 0)
    }

    /// A file saved with a UTF-8 byte-order mark reads as without it (as Foundation's UTF-8
    /// decoding, which the reader used before, dropped it); a file that is not UTF-8 reads as
    /// Latin-1 (`é` in a sample name). Failed with the mark kept: the `<control>` header behind it
    /// went unread, and with it `default_path`.
    func testAByteOrderMarkIsDroppedAndLatin1IsRead() throws {
        try tone("b.wav", 300, seconds: 0.2)
        let path = directory.appendingPathComponent("bom.sfz")
        try Data([0xEF, 0xBB, 0xBF] + Array("<control> default_path=samples/\n<region> sample=b.wav key=48\n".utf8)).write(to: path)
        XCTAssertEqual(try SFZFile.zones(contentsOf: path.path).map(\.keys), [48...48])
        try tone("caf\u{E9}.wav", 300, seconds: 0.2)
        let latin1 = directory.appendingPathComponent("latin1.sfz")
        try Data(Array("<control> default_path=samples/\n<region> sample=caf".utf8) + [0xE9] + Array(".wav key=50\n".utf8)).write(to: latin1)
        let zones = try SFZFile.zones(contentsOf: latin1.path)
        XCTAssertEqual(zones.map(\.keys), [50...50])
        XCTAssertEqual(zones.map(\.path), [directory.appendingPathComponent("samples/caf\u{E9}.wav").path])
    }

    /// `loop_continuous` with `loop_start`/`loop_end` (the end included) sustains a 0.2 s 480 Hz
    /// sample for 1.5 s (sine-fit residual below −60 dB over 0.3...1.4 s); `one_shot` plays a
    /// 0.5 s sample to its end through a note off at 0.05 s (the level at 0.3 s within 1 dB of
    /// the level before the note off), where `no_loop` has faded by then (below −90 dB).
    func testLoopModes() throws {
        try tone("t.wav", 480, seconds: 0.2)
        try tone("long.wav", 480, seconds: 0.5)
        let looped = try render(try sfz("<region> sample=samples/t.wav loop_mode=loop_continuous loop_start=4800 loop_end=9599"),
                                [(0, .noteOn(channel: 0, key: 60, velocity: 127))], frames: 72000)
        let fit = ToneFit(looped[14400..<67200], sampleRate: 48000, frequencies: [480])
        print("sfz loop_continuous: residual \(fit.thdPlusNoiseDB) dB")
        XCTAssertLessThan(fit.thdPlusNoiseDB, -60)
        let events: [(Int64, MIDIEvent)] = [(0, .noteOn(channel: 0, key: 60, velocity: 127)), (2400, .noteOff(channel: 0, key: 60))]
        let oneShot = try render(try sfz("<region> sample=samples/long.wav loop_mode=one_shot"), events, frames: 24000)
        let cut = try render(try sfz("<region> sample=samples/long.wav loop_mode=no_loop"), events, frames: 24000)
        let before = SignalMeasurement.rms(oneShot[960..<1920])
        print("sfz one_shot: \(SignalMeasurement.dBFS(SignalMeasurement.rms(oneShot[14400..<15360]) / before)) dB at 0.3 s; no_loop: \(SignalMeasurement.dBFS(SignalMeasurement.rms(cut[14400..<15360]) / before)) dB")
        XCTAssertEqual(SignalMeasurement.dBFS(SignalMeasurement.rms(oneShot[14400..<15360]) / before), 0, accuracy: 1)
        XCTAssertLessThan(SignalMeasurement.dBFS(SignalMeasurement.rms(cut[14400..<15360]) / before), -90)
    }

    /// Note names: c4 = 60, sharps and flats, octave −1 to 9.
    func testNoteNames() {
        XCTAssertEqual(["c4", "C#4", "db4", "a4", "c-1", "g9", "b3", "60"].map(SFZFile.noteNumber), [60, 61, 61, 69, 0, 127, 59, 60])
        XCTAssertNil(SFZFile.noteNumber("h4"))
        XCTAssertNil(SFZFile.noteNumber("g#9"))
    }

    /// A missing sample, a bad key, an unknown loop mode, a loop past the sample's end, a region
    /// without a sample and `#include` are one-line errors naming the file and the line.
    func testErrorsNameTheFileAndLine() throws {
        try tone("t.wav", 480, seconds: 0.2)
        func problem(_ text: String) throws -> String {
            let path = try sfz(text)
            do {
                _ = try SFZFile.zones(contentsOf: path)
                return "no error"
            } catch { return error.description }
        }
        let p = directory.appendingPathComponent("i.sfz").path
        XCTAssertTrue(try problem("<region> sample=samples/t.wav\n<region> sample=missing.wav").hasPrefix("\(p): line 2: sample: "))
        XCTAssertEqual(try problem("<region>\nsample=samples/t.wav lokey=h9"), "\(p): line 2: lokey: h9 is not a key 0...127 or a note name")
        XCTAssertEqual(try problem("<region> sample=samples/t.wav loop_mode=bounce"),
                       "\(p): line 1: loop_mode: bounce is not no_loop, one_shot, loop_continuous or loop_sustain")
        XCTAssertEqual(try problem("<region> sample=samples/t.wav loop_start=10 loop_end=9600"),
                       "\(p): line 1: loop_end: the loop 10...9600 is not within the sample's 9600 frames")
        XCTAssertEqual(try problem("<region> lokey=60\n<region> sample=samples/t.wav"), "\(p): the <region> ending before line 2 has no sample")
        XCTAssertEqual(try problem("#include \"other.sfz\"\n<region> sample=samples/t.wav"), "\(p): line 1: #include is not supported")
        XCTAssertEqual(try problem("// nothing"), "\(p) has no <region>")
    }

    func problem(_ text: String) throws -> String {
        let path = try sfz(text)
        do {
            _ = try SFZFile.zones(contentsOf: path)
            return "no error"
        } catch { return error.description }
    }

    /// A note name whose octave is outside −1...9 (even one near Int.max, whose MIDI number
    /// overflowed) and a number outside 0...127 are one-line errors, not a trap.
    func testKeysOutsideTheMIDIRangeAreErrors() throws {
        try tone("t.wav", 480, seconds: 0.2)
        let p = directory.appendingPathComponent("i.sfz").path
        XCTAssertNil(SFZFile.noteNumber("c9223372036854775807"))
        XCTAssertNil(SFZFile.noteNumber("c-9223372036854775808"))
        XCTAssertNil(SFZFile.noteNumber("c10"))
        XCTAssertNil(SFZFile.noteNumber("128"))
        XCTAssertEqual(try problem("<region> sample=samples/t.wav\nkey=c9223372036854775807"),
                       "\(p): line 2: key: c9223372036854775807 is not a key 0...127 or a note name")
        XCTAssertEqual(try problem("<region> sample=samples/t.wav hikey=-1"), "\(p): line 1: hikey: -1 is not a key 0...127 or a note name")
    }

    /// A 2 MB line of `a=b c c c …` (a value that never ends before the line does) is read in
    /// well under a second (the scan is linear; it was quadratic: minutes).
    func testALongHostileLineIsReadInLinearTime() throws {
        try tone("t.wav", 480, seconds: 0.2)
        let line = "a=b" + String(repeating: " c", count: 1_000_000)
        let path = try sfz("<region> sample=samples/t.wav " + line)
        let start = Date()
        let zones = try SFZFile.zones(contentsOf: path)
        let seconds = Date().timeIntervalSince(start)
        print("2 MB hostile SFZ line read in \(seconds) s")
        XCTAssertEqual(zones.count, 1)
        XCTAssertLessThan(seconds, 1)
    }

    /// A conflict between opcodes names one that is in the region, with its line (it said
    /// `line 0: hikey` when only `key` and `lokey` were given).
    func testConflictsNameAnOpcodeThatIsPresent() throws {
        try tone("t.wav", 480, seconds: 0.2)
        let p = directory.appendingPathComponent("i.sfz").path
        XCTAssertEqual(try problem("<region> sample=samples/t.wav\nkey=60\nlokey=70"), "\(p): line 3: lokey: 70 is above key 60")
        XCTAssertEqual(try problem("<region> sample=samples/t.wav lokey=70 hikey=60"), "\(p): line 1: hikey: 60 is below lokey 70")
    }

    /// CRLF and CR line ends count as one line each: an error on the third line says line 3.
    func testCRLFAndCRLineNumbers() throws {
        try tone("t.wav", 480, seconds: 0.2)
        let p = directory.appendingPathComponent("i.sfz").path
        XCTAssertEqual(try problem("// x\r\n<region> sample=samples/t.wav\r\nlokey=h9\r\n"), "\(p): line 3: lokey: h9 is not a key 0...127 or a note name")
        XCTAssertEqual(try problem("// x\r<region> sample=samples/t.wav\rlokey=h9\r"), "\(p): line 3: lokey: h9 is not a key 0...127 or a note name")
        XCTAssertEqual(try SFZFile.zones(contentsOf: try sfz("<region>\r\nsample=samples/t.wav\r\nkey=61\r\n")).map(\.keys), [61...61])
    }

    /// `loop_start` alone loops to the sample's last frame, `loop_end` alone from its first (as
    /// SFZ players do; they were ignored); a `loop_start` past the end names `loop_start`.
    func testALoopEndGivenAloneTakesTheOtherFromTheSample() throws {
        try tone("t.wav", 480, seconds: 0.2)
        let p = directory.appendingPathComponent("i.sfz").path
        XCTAssertEqual(try SFZFile.zones(contentsOf: try sfz("<region> sample=samples/t.wav loop_start=4800")).map(\.loop), [4800..<9600])
        XCTAssertEqual(try SFZFile.zones(contentsOf: try sfz("<region> sample=samples/t.wav loopend=4799")).map(\.loop), [0..<4800])
        XCTAssertEqual(try problem("<region> sample=samples/t.wav\nloop_start=9600"),
                       "\(p): line 2: loop_start: the loop 9600...9599 is not within the sample's 9600 frames")
    }
}
