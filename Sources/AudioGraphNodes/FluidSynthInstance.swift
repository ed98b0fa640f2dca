// One libfluidsynth synthesizer with a SoundFont loaded, configured for the render thread.
import AudioGraphCore
import CFluidSynth
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Synchronization

/// A libfluidsynth synthesizer (the SoundFont 2 voice engine of ``SamplerNode``) with one
/// SoundFont loaded, configured so that its render path neither locks nor allocates:
/// `synth.threadsafe-api` off (no mutex around API calls: only the render thread calls it once
/// made), `synth.cpu-cores` 1 (no worker threads), no reverb or chorus (the graph has its own
/// reverb node), samples loaded whole at creation (`synth.dynamic-sample-loading` off), and the
/// library's log functions unset (a warning on the render thread would print). Voices
/// (`synth.polyphony`, 256) are preallocated.
///
/// fluidsynth renders in blocks of 64 frames and applies events at block starts: an event
/// applied when the synth has rendered `p` frames sounds from frame `64 * ceil(p / 64)` of its
/// timeline (at most 63 frames, 1.3 ms at 48 kHz, late). Its output depends only on that, never
/// on how the writes are split, so renders are bit-identical across slice sizes.
///
/// Thread safety: made and freed on a control thread; ``apply(_:)`` and ``render(left:right:frameCount:)``
/// from one render thread at a time (real-time safe).
final class FluidSynthInstance: @unchecked Sendable {
    /// The SoundFont's path (an audio-file instrument: its files, comma-separated).
    let path: String
    // MARK: Fixed at creation (the library's objects; used by the render thread)
    private let settings: OpaquePointer
    private let synth: OpaquePointer
    private let soundFontID: Int32

    private static let logsSilenced: Bool = {
        for level in [FLUID_PANIC, FLUID_ERR, FLUID_WARN, FLUID_INFO, FLUID_DBG] {
            fluid_set_log_function(Int32(level.rawValue), nil, nil)
        }
        return true
    }()

    /// Loads `path` for a synth at `sampleRate`. `program` nil: General MIDI (each channel's
    /// preset from bank 0, program 0 until program changes say otherwise; channel 10 drums);
    /// else every channel plays `program` of SoundFont bank `bank` (128: percussion).
    /// - Throws: a one-line reason (no such file, not a SoundFont 2 file, no such preset).
    init(path: String, sampleRate: Double, program: Int?, bank: Int) throws(SamplerLoadError) {
        try Self.loadLibrary()
        _ = Self.logsSilenced
        self.path = path
        guard FileSystemPath.isReadable(path) else { throw .init("cannot read SoundFont \(path)") }
        guard fluid_is_soundfont(path) != 0 else { throw .init("\(path) is not a SoundFont 2 file") }
        // A RIFF whose size disagrees with the file's is refused here: fluidsynth would hand it on
        // to libinstpatch's loader, which prints GLib warnings on stderr before failing.
        guard Self.riffSizeMatches(path) else { throw .init("\(path) is not a SoundFont 2 file (its RIFF size does not match the file's)") }
        let (s, syn) = try Self.makeSynthesizer(sampleRate: sampleRate)
        let id = fluid_synth_sfload(syn, path, 1)
        guard id != FLUID_FAILED else {
            delete_fluid_synth(syn)
            delete_fluid_settings(s)
            throw .init("\(path) is not a SoundFont 2 file fluidsynth can load")
        }
        if let program {
            // Checked before the stored properties are set: a throw after that would run deinit.
            guard let sfont = fluid_synth_get_sfont_by_id(syn, id),
                  fluid_sfont_get_preset(sfont, Int32(bank), Int32(program)) != nil else {
                delete_fluid_synth(syn)
                delete_fluid_settings(s)
                throw .init("\(path) has no preset \(program) in bank \(bank)")
            }
            for channel in 0..<Int32(16) {
                fluid_synth_program_select(syn, channel, id, Int32(bank), Int32(program))
            }
        }
        settings = s
        synth = syn
        soundFontID = id
    }

    /// Makes a synthesizer whose every channel plays `instrument`'s audio-file zones
    /// (``AudioFileInstrument``; program changes keep it).
    /// - Throws: a one-line reason.
    init(instrument: AudioFileInstrument, sampleRate: Double) throws(SamplerLoadError) {
        _ = Self.logsSilenced
        path = instrument.zones.map(\.path).joined(separator: ", ")
        let (s, syn) = try Self.makeSynthesizer(sampleRate: sampleRate)
        guard let id = instrument.install(in: syn) else {
            delete_fluid_synth(syn)
            delete_fluid_settings(s)
            throw .init("fluidsynth: cannot install the audio files \(path)")
        }
        for channel in 0..<Int32(16) {
            fluid_synth_program_select(syn, channel, id, 0, 0)
        }
        settings = s
        synth = syn
        soundFontID = id
    }

    /// Settings and a synthesizer configured for the render thread (see the type's documentation).
    /// Loads libfluidsynth (once; it is opened on first use, not at start-up), so that a missing
    /// library is this one-line error instead of the process ending at the first fluidsynth call.
    /// Control threads.
    static func loadLibrary() throws(SamplerLoadError) {
        guard let reason = LazyLibrary.fluidSynth.loadFailure else { return }
        throw .init("cannot load libfluidsynth, so sampler nodes cannot play: \(reason)")
    }

    private static func makeSynthesizer(sampleRate: Double) throws(SamplerLoadError) -> (OpaquePointer, OpaquePointer) {
        try loadLibrary()
        guard let s = new_fluid_settings() else { throw .init("fluidsynth: out of memory") }
        fluid_settings_setint(s, "synth.threadsafe-api", 0)
        fluid_settings_setint(s, "synth.cpu-cores", 1)
        fluid_settings_setint(s, "synth.reverb.active", 0)
        fluid_settings_setint(s, "synth.chorus.active", 0)
        fluid_settings_setint(s, "synth.dynamic-sample-loading", 0)
        fluid_settings_setnum(s, "synth.sample-rate", min(max(sampleRate, 8000), 96000))
        guard let syn = new_fluid_synth(s) else {
            delete_fluid_settings(s)
            throw .init("fluidsynth: cannot make a synthesizer at \(sampleRate) Hz")
        }
        return (s, syn)
    }

    /// Whether the RIFF header's size plus 8 is the file's size.
    static func riffSizeMatches(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        var header = [UInt8](repeating: 0, count: 12)
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 12, 0) }) == 12 else { return false }
        let end = UInt64(info.st_size)
        let size = UInt64(header[4]) | UInt64(header[5]) << 8 | UInt64(header[6]) << 16 | UInt64(header[7]) << 24
        return size + 8 == end
    }

    deinit {
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }

    /// The SoundFont presets (bank, program, name) — for listings and checks. Control thread.
    var presets: [(bank: Int, program: Int, name: String)] {
        guard let sfont = fluid_synth_get_sfont_by_id(synth, soundFontID) else { return [] }
        var result: [(Int, Int, String)] = []
        fluid_sfont_iteration_start(sfont)
        while let p = fluid_sfont_iteration_next(sfont) {
            result.append((Int(fluid_preset_get_banknum(p)), Int(fluid_preset_get_num(p)), String(cString: fluid_preset_get_name(p))))
        }
        return result
    }

    /// Tunes every channel by `cents` (coarse semitones plus fine cents, as MIDI's RPN tuning
    /// would): `globalTuning`. Render thread; real-time safe.
    func setTuning(cents: Double) {
        let semitones = (cents / 100).rounded(.towardZero)
        let fine = cents - semitones * 100
        // Int channels: iterating a Range<Int32> goes through generic code that allocates in debug builds.
        for channel in 0..<16 {
            fluid_synth_set_gen(synth, Int32(channel), Int32(GEN_COARSETUNE.rawValue), Float(semitones))
            fluid_synth_set_gen(synth, Int32(channel), Int32(GEN_FINETUNE.rawValue), Float(fine))
        }
    }

    /// Plays one MIDI message. Render thread; real-time safe.
    @inline(__always)
    func apply(_ e: MIDIEvent) {
        let ch = Int32(e.channel), d1 = Int32(e.data1), d2 = Int32(e.data2)
        switch e.kind {
        case 0x80: fluid_synth_noteoff(synth, ch, d1)
        case 0x90: if d2 > 0 { fluid_synth_noteon(synth, ch, d1, d2) } else { fluid_synth_noteoff(synth, ch, d1) }
        case 0xA0: fluid_synth_key_pressure(synth, ch, d1, d2)
        case 0xB0: fluid_synth_cc(synth, ch, d1, d2)
        case 0xC0: fluid_synth_program_change(synth, ch, d1)
        case 0xD0: fluid_synth_channel_pressure(synth, ch, d1)
        case 0xE0: fluid_synth_pitch_bend(synth, ch, Int32(e.pitchBendValue))
        default:
            guard e.isSystemExclusive, e.count >= 3, e[e.count - 1] == 0xF7 else { return }
            // Between F0 and F7, copied to the stack (at most 14 bytes).
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: MIDIEvent.maximumByteCount) { buffer in
                for i in 1..<(e.count - 1) { buffer[i - 1] = CChar(bitPattern: e[i]) }
                _ = fluid_synth_sysex(synth, buffer.baseAddress, Int32(e.count - 2), nil, nil, nil, 0)
            }
        }
    }

    /// Renders `frameCount` frames (non-interleaved stereo). Render thread; real-time safe.
    @inline(__always)
    func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount: Int) {
        guard frameCount > 0 else { return }
        fluid_synth_write_float(synth, Int32(frameCount), left, 0, 1, right, 0, 1)
    }

    /// Silences every voice at once and resets the controllers (a node reset). Render thread.
    func allSoundsOff() {
        for channel in 0..<16 {
            fluid_synth_all_sounds_off(synth, Int32(channel))
            fluid_synth_cc(synth, Int32(channel), 121, 0)
        }
    }
}

/// Why a SoundFont could not be loaded (one line, naming the file).
public struct SamplerLoadError: Error, CustomStringConvertible, Sendable {
    /// The reason, naming the file.
    public let description: String
    init(_ description: String) { self.description = description }
}
