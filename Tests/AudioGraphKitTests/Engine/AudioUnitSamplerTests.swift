// Tests of AudioUnitSampler's audio-file loading: loadAudioFiles(at:) zones by root key, loadInstrument(at:) with an audio file, errors.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitSamplerTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ag-sampler-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A 16-bit mono WAV of a `frequency` sine (1.5 s), with a `smpl` chunk naming `unityNote`
    /// (written here byte by byte) when one is given.
    func tone(_ name: String, _ frequency: Double, unityNote: Int? = nil) throws -> URL {
        let samples = (0..<72000).map { 0.5 * sin(2 * Double.pi * frequency * Double($0) / 48000) }
        var data = try WAVFile(sampleRate: 48000, sampleType: .int16, channels: [samples]).data()
        if let unityNote {
            var chunk = Array("smpl".utf8)
            for v: UInt32 in [36, 0, 0, 20833, UInt32(unityNote), 0, 0, 0, 0, 0] { chunk += withUnsafeBytes(of: v.littleEndian, Array.init) }
            data += chunk
            data.replaceSubrange(4..<8, with: withUnsafeBytes(of: UInt32(data.count - 8).littleEndian, Array.init))
        }
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// A started manual-rendering engine with a sampler into the main mixer.
    func samplerEngine() throws -> (AudioEngine, AudioUnitSampler) {
        let engine = AudioEngine()
        try engine.enableManualRenderingMode(.offline, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!, maximumFrameCount: 4096)
        let sampler = AudioUnitSampler()
        engine.attach(sampler)
        engine.connect(sampler, to: engine.mainMixerNode, format: nil)
        try engine.start()
        return (engine, sampler)
    }

    /// The frequency one note on `key` sounds (0.1...0.9 s after it starts).
    func frequency(_ engine: AudioEngine, _ sampler: AudioUnitSampler, key: UInt8) throws -> Double {
        sampler.startNote(key, withVelocity: 127, onChannel: 0)
        let out = try render(engine, frames: 48000)
        sampler.stopNote(key, onChannel: 0)
        _ = try render(engine, frames: 9600)    // the release
        return try XCTUnwrap(ToneFit(dominantToneOf: out[0][4800..<43200], sampleRate: 48000)).tones[0].frequency
    }

    /// loadAudioFiles(at:) on a running engine: `a` (440 Hz, `smpl` unity note 69) and `b`
    /// (300 Hz, no chunk: root key 60) become two zones, b below the midpoint of their roots
    /// (keys 0...64) and a above it; each key sounds its zone's recording at
    /// root·2^((key − root)/12), within 1 cent (measured: within 0.001 cent).
    func testLoadAudioFilesPlacesEachFileByItsRootKey() throws {
        let a = try tone("a.wav", 440, unityNote: 69), b = try tone("b.wav", 300)
        let (engine, sampler) = try samplerEngine()
        try sampler.loadAudioFiles(at: [a, b])
        for (key, expected) in [(69, 440.0), (72, 440 * pow(2, 3.0 / 12)), (65, 440 * pow(2, -4.0 / 12)),
                                (60, 300.0), (64, 300 * pow(2, 4.0 / 12)), (48, 150.0)] {
            let f = try frequency(engine, sampler, key: UInt8(key))
            print("key \(key): \(f) Hz, formula \(expected) Hz")
            XCTAssertEqual(1200 * log2(f / expected), 0, accuracy: 1, "key \(key)")
        }
    }

    /// loadInstrument(at:) takes an audio file as Apple's does: one zone at the file's root key
    /// (69 here: key 81 sounds 880 Hz); a SoundFont still loads as a SoundFont.
    func testLoadInstrumentTakesAnAudioFile() throws {
        let a = try tone("a.wav", 440, unityNote: 69)
        let (engine, sampler) = try samplerEngine()
        try sampler.loadInstrument(at: a)
        XCTAssertEqual(1200 * log2(try frequency(engine, sampler, key: 81) / 880), 0, accuracy: 1)
        try sampler.loadInstrument(at: URL(fileURLWithPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"))
        XCTAssertGreaterThan(try frequency(engine, sampler, key: 69), 0)
    }

    /// A missing file and a file that is no sound file are errors naming the file; the
    /// instrument loaded before keeps playing.
    func testBadAudioFilesAreClearErrorsAndKeepTheInstrument() throws {
        let a = try tone("a.wav", 440, unityNote: 69)
        let junk = directory.appendingPathComponent("junk.aif")
        try Data("not audio".utf8).write(to: junk)
        let (engine, sampler) = try samplerEngine()
        try sampler.loadAudioFiles(at: [a])
        for bad in [URL(fileURLWithPath: "/nonexistent.wav"), junk] {
            XCTAssertThrowsError(try sampler.loadAudioFiles(at: [a, bad])) {
                XCTAssertTrue("\($0)".contains("\(bad.path): cannot open"), "\($0)")
            }
        }
        XCTAssertThrowsError(try sampler.loadInstrument(at: junk)) { XCTAssertTrue("\($0)".contains(junk.path), "\($0)") }
        XCTAssertEqual(1200 * log2(try frequency(engine, sampler, key: 69) / 440), 0, accuracy: 1)
    }
}

extension AudioUnitSamplerTests {
    /// loadInstrument(at:) with an `.sfz` file (a Linux addition): its region plays the sample
    /// from its `pitch_keycenter` (key 72 of a 440 Hz sample centred on 69 sounds 440·2^(3/12)).
    func testLoadInstrumentTakesAnSFZFile() throws {
        let a = try tone("a.wav", 440)
        let sfz = directory.appendingPathComponent("i.sfz")
        try Data("<region> sample=\(a.lastPathComponent) pitch_keycenter=69\n".utf8).write(to: sfz)
        let (engine, sampler) = try samplerEngine()
        try sampler.loadInstrument(at: sfz)
        XCTAssertEqual(1200 * log2(try frequency(engine, sampler, key: 72) / (440 * pow(2, 3.0 / 12))), 0, accuracy: 1)
    }
}
