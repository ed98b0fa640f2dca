// The engine API's sampler (cf. AVAudioUnitSampler) over the graph's SoundFont sampler node.
import AudioGraphNodes
import Foundation

/// The bank MSB that selects a SoundFont's melodic presets (cf. `kAUSampler_DefaultMelodicBankMSB`).
public let kAUSampler_DefaultMelodicBankMSB: UInt8 = 0x79
/// The bank MSB that selects a SoundFont's percussion presets, bank 128 (cf. `kAUSampler_DefaultPercussionBankMSB`).
public let kAUSampler_DefaultPercussionBankMSB: UInt8 = 0x78
/// The default bank LSB (cf. `kAUSampler_DefaultBankLSB`).
public let kAUSampler_DefaultBankLSB: UInt8 = 0x00

/// A SoundFont 2 sampler (cf. `AVAudioUnitSampler`), the graph's `sampler` node: libfluidsynth
/// plays the loaded instrument on every MIDI channel; program changes it receives choose other
/// presets of the same SoundFont. Before anything is loaded it plays program 0 of the default
/// General MIDI SoundFont (``SamplerProperties/defaultSoundFontPath``; Apple's default is a sine
/// instrument). Stereo output at the engine's rate.
///
/// ``loadAudioFiles(at:)`` makes an instrument of audio files, each file a zone placed by what
/// the file says (a WAV `smpl` chunk, AIFF `INST`/`MARK`: root key, fine tuning, key and
/// velocity range, loop) and, where it says nothing, by our documented defaults (successive
/// root keys from middle C; see `AudioFileInstrument` in Docs/Engine.md).
///
/// Where Linux differs: ``loadInstrument(at:)`` takes SoundFont 2 files (their first preset),
/// SFZ files and audio files (as ``loadAudioFiles(at:)`` with one file) — Apple's `.aupreset`,
/// `.exs` and DLS files do not exist here. Notes start on fluidsynth's 64-frame blocks (see ``SamplerNode``).
///
/// Thread safety: the engine's; the MIDI methods and parameters from any thread.
public final class AudioUnitSampler: AudioUnitMIDIInstrument, @unchecked Sendable {
    /// What the graph node loads.
    private var properties = SamplerProperties()

    /// Makes a sampler to attach to an engine.
    public init() { super.init(kindName: "sampler") }

    override var parameterTable: ParameterTable { SamplerNode.parameterTable }

    /// Loads preset `program` of the SoundFont at `bankURL` (cf.
    /// `loadSoundBankInstrument(at:program:bankMSB:bankLSB:)`): `bankMSB`
    /// ``kAUSampler_DefaultMelodicBankMSB`` selects SoundFont bank `bankLSB`,
    /// ``kAUSampler_DefaultPercussionBankMSB`` the percussion bank 128, any other MSB bank
    /// `bankMSB` (as a GS module reads bank select). On a running engine the new instrument
    /// replaces the old one at the next slice.
    /// - Throws: ``AudioEngineError/graph(call:_:)`` naming the file when it cannot be read, is
    ///   not a SoundFont 2 file or has no such preset (the previous instrument stays).
    public func loadSoundBankInstrument(at bankURL: URL, program: UInt8, bankMSB: UInt8, bankLSB: UInt8) throws {
        let bank: Int
        switch bankMSB {
        case kAUSampler_DefaultMelodicBankMSB: bank = Int(bankLSB)
        case kAUSampler_DefaultPercussionBankMSB: bank = 128
        default: bank = Int(bankMSB)
        }
        try load(SamplerProperties(soundFont: bankURL.path, program: Int(program & 0x7F), bank: bank),
                 call: "loadSoundBankInstrument(at:program:bankMSB:bankLSB:)")
    }

    /// Loads an instrument file (cf. `loadInstrument(at:)`): a SoundFont 2 file, whose first
    /// preset (lowest bank, then program) every channel plays; an SFZ file (`.sfz`, a Linux
    /// addition: its regions as zones, see Docs/Engine.md); or an audio file (any file
    /// libsndfile reads), loaded as ``loadAudioFiles(at:)`` loads one file: a new instrument of
    /// one zone, placed by the file's root key and key range when it has them (else root key
    /// 60 over the whole keyboard).
    /// - Throws: ``AudioEngineError/graph(call:_:)`` naming the file.
    public func loadInstrument(at instrumentURL: URL) throws {
        let path = instrumentURL.path
        if path.lowercased().hasSuffix(".sfz") {
            try load(SamplerProperties(sfz: path), call: "loadInstrument(at:)")
            return
        }
        guard Self.isSoundFont(path) else {
            try load(SamplerProperties(audioFiles: [path]), call: "loadInstrument(at:)")
            return
        }
        let first: (bank: Int, program: Int)
        do {
            let probe = try SamplerNode(id: graphID, sampleRate: 48000, properties: SamplerProperties(soundFont: path, program: nil))
            guard let p = probe.presets.min(by: { ($0.bank, $0.program) < ($1.bank, $1.program) }) else {
                throw AudioGraphError.nodeSetupFailed(node: graphID, reason: "\(path) has no presets")
            }
            first = (p.bank, p.program)
        } catch let e as AudioGraphError {
            throw AudioEngineError.graph(call: "loadInstrument(at:)", e)
        }
        try load(SamplerProperties(soundFont: path, program: first.program, bank: first.bank), call: "loadInstrument(at:)")
    }

    /// Whether `path` is meant as a SoundFont: named `.sf2`, or starting as a SoundFont 2 file
    /// does (`RIFF`, size, `sfbk`); anything else goes to the audio-file loader, whose error
    /// names the file when it is no sound file either.
    private static func isSoundFont(_ path: String) -> Bool {
        if path.lowercased().hasSuffix(".sf2") { return true }
        guard let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        guard let header = try? h.read(upToCount: 12), header.count == 12 else { return false }
        return header.prefix(4) == Data("RIFF".utf8) && header.suffix(4) == Data("sfbk".utf8)
    }

    /// Loads audio files as a new instrument, each file in its own zone (cf. `loadAudioFiles(at:)`):
    /// a file's root key, fine tuning, key and velocity ranges and first loop are used when the
    /// file has them (a WAV `smpl` chunk, AIFF `INST` and `MARK` chunks). Apple documents no
    /// default; ours: files without a root key take keys 60, 61, … in the order given; a zone
    /// without a key range covers the whole keyboard when it is the only one, else the keys
    /// nearest its root key. Pitch follows the key (`2^((key − root)/12)`), loops play forward
    /// until the release has ended, a note off fades over 0.1 s, velocity scales the level (SoundFont 2's
    /// default curve). Mono or stereo files; held in memory. On a running engine the new instrument
    /// replaces the old one at the next slice.
    /// - Throws: ``AudioEngineError/graph(call:_:)`` naming the file when one cannot be read, is
    ///   not a sound file, or has more than two channels (the previous instrument stays).
    public func loadAudioFiles(at audioFiles: [URL]) throws {
        try load(SamplerProperties(audioFiles: audioFiles.map(\.path)), call: "loadAudioFiles(at:)")
    }

    private func load(_ p: SamplerProperties, call: String) throws {
        // Checked now, on the caller's thread, so that the error names the file.
        do {
            _ = try SamplerNode(id: graphID, sampleRate: 48000, properties: p)
        } catch {
            throw AudioEngineError.graph(call: call, error)
        }
        guard let engine else { properties = p; return }
        try engine.withLock {
            properties = p
            guard let gn = graphNode else { return }
            do throws(AudioGraphError) {
                try gn.setProperty("instrument", p)
                if let graph = engine.graph, engine.changeDepth == 0 { try engine.commit(graph) }
            } catch {
                throw AudioEngineError.graph(call: call, error)
            }
        }
    }

    /// The overall gain in dB, -90...12 (0) (cf. `masterGain`).
    public var masterGain: Float {
        get { Float(storedParameter("gain", default: 0)) }
        set { setStoredParameter("gain", Double(newValue), call: "masterGain") }
    }

    /// The stereo balance, -100 (left)...100 (right) (0) (cf. `stereoPan`).
    public var stereoPan: Float {
        get { Float(storedParameter("pan", default: 0)) }
        set { setStoredParameter("pan", Double(newValue), call: "stereoPan") }
    }

    /// The tuning of every note in cents, -2400...2400 (0) (cf. `globalTuning`).
    public var globalTuning: Float {
        get { Float(storedParameter("tuning", default: 0)) }
        set { setStoredParameter("tuning", Double(newValue), call: "globalTuning") }
    }

    /// Stereo at the engine's rate unless the connection says otherwise.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: 2) ?? engineFormat
    }

    /// The synthesizer's voices are its state: never swapped for a fresh node while running.
    override var canBeReplacedWhileRunning: Bool { false }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try SamplerNode(id: graphID, sampleRate: outputFormat?.sampleRate ?? sampleRate, properties: properties)
        return declaring(outputFormat, on: node)
    }
}
