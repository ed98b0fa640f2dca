// Audio files as a sampler instrument (cf. AVAudioUnitSampler.loadAudioFiles(at:)): one zone per file, played by fluidsynth.
import CFluidSynth
import CSndFile
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Where one audio file sits in an instrument made from audio files: its root key, the keys and
/// velocities it answers, its loop. Read from the file by ``AudioFileInstrument/zones(for:)``.
///
/// Thread safety: a value; any thread.
struct SamplerZone: Hashable, Sendable {
    /// The file.
    var path: String
    /// The key at which the recording plays at its own pitch.
    var rootKey: Int
    /// Cents to add to the played pitch so that the root key sounds in tune (SoundFont 2's
    /// pitch correction: a recording 20 cents sharp of its root key has -20).
    var pitchCorrection: Int
    /// The keys that play this zone.
    var keys: ClosedRange<Int>
    /// The velocities that play this zone.
    var velocities: ClosedRange<Int>
    /// The loop, in the file's frames (the end excluded), nil when the file has none.
    var loop: Range<Int>?
    /// Whether the loop plays only while the key is held, the rest of the recording after the
    /// note off (SFZ's `loop_sustain`, SoundFont 2's sample mode 3); else until the release ends.
    var loopsWhileHeld = false
    /// How long the note takes to fade after its note off, seconds.
    var release = AudioFileInstrument.releaseSeconds
}

/// An instrument made of audio files, each file a zone (cf. `AVAudioUnitSampler.loadAudioFiles(at:)`),
/// installed in a libfluidsynth synthesizer as an in-memory SoundFont: one preset, answering every
/// bank and program, whose note-on starts the zones that hold the key and velocity (fluidsynth's
/// `fluid_synth_alloc_voice`, so the voices, envelopes, controllers, pitch bend and the render
/// path are the SoundFont sampler's).
///
/// What a file says is used (libsndfile's `SF_INSTRUMENT`: a WAV file's `smpl` chunk, an AIFF
/// file's `INST` and `MARK` chunks): the root key and its fine tuning, the key and velocity
/// ranges, the first loop. Where a file says nothing — Apple documents no default — files without
/// a root key take successive keys from middle C (60, 61, … in the order given); a zone whose file
/// gives no key range (WAV files never do; an AIFF range of 0...127 counts as none) is the whole
/// keyboard when it is the only file loaded, else the keys nearer its root key than any other
/// zone's root (a tie goes to the lower root), as a sampler maps a multisample.
///
/// How the zones play: pitch follows the key, `2^((key − root)/12)` times the recording's
/// (corrected by its fine tuning; fluidsynth's 4-point interpolation, the file's rate converted
/// to the synthesizer's); the attack is instantaneous (the recording's own onset is the attack);
/// a looped zone loops forward, from the note's start until its release has ended (SoundFont 2's
/// sample mode 1; backward and alternating loops play forward: fluidsynth has no others); a note
/// off releases over ``releaseSeconds``; velocity sets the level by SoundFont 2's default
/// modulators (concave, -96 dB at velocity 1, with its low-pass filter at low velocities). Mono
/// files play centred, stereo files as two voices panned hard left and right; more channels are
/// refused. Samples are held in memory at 24 bits.
///
/// Thread safety: made on a control thread; once installed, the synthesizer's render thread
/// calls the note-on callback (real-time safe: no allocation, no lock).
final class AudioFileInstrument: @unchecked Sendable {
    /// The zones, in the order of the files.
    let zones: [SamplerZone]

    /// How long a note takes to fade after its note off (the volume envelope's release), seconds.
    static let releaseSeconds = 0.1
    /// The first default root key (middle C).
    static let firstDefaultRootKey = 60

    /// What the render thread reads in the note-on callback (fixed once made).
    private struct RenderZone {
        var keyLow: Int32, keyHigh: Int32, velocityLow: Int32, velocityHigh: Int32
        var left: OpaquePointer
        var right: OpaquePointer?
        /// SoundFont 2's sample mode: 0 no loop, 1 loop to the end of the release, 3 loop while held.
        var sampleMode: Float
        /// The volume envelope's release, timecents.
        var release: Float
    }

    // MARK: Fixed at creation (read by the render thread)
    private let renderZones: UnsafeMutableBufferPointer<RenderZone>
    private let samples: [OpaquePointer]

    /// Reads `paths` into zones (``zones(for:)``) and samples.
    /// - Throws: a one-line reason naming the file (unreadable, not audio, no frames, more than two channels).
    convenience init(paths: [String]) throws(SamplerLoadError) {
        try self.init(zones: try Self.zones(for: paths))
    }

    /// Reads the files of `zones` (each file once) into samples.
    /// - Throws: a one-line reason naming the file (unreadable, not audio, no frames, more than two channels).
    init(zones: [SamplerZone]) throws(SamplerLoadError) {
        try FluidSynthInstance.loadLibrary()
        var made: [RenderZone] = []
        var samples: [OpaquePointer] = []
        var read: [String: (channels: [[Float]], rate: Double)] = [:]
        func cleanUp() { for s in samples { delete_fluid_sample(s) } }
        for zone in zones {
            let audio: [[Float]]
            let rate: Double
            if let r = read[zone.path] {
                (audio, rate) = r
            } else {
                do throws(AudioFileError) {
                    let r = try AudioFileReader.read(path: zone.path)
                    audio = r.channels
                    rate = r.info.sampleRate
                } catch {
                    cleanUp()
                    throw .init(error.description)
                }
                guard !audio.isEmpty, audio.count <= 2, !audio[0].isEmpty else {
                    cleanUp()
                    throw .init(audio.count > 2 ? "\(zone.path) has \(audio.count) channels; a sampler zone takes a mono or stereo file"
                                                : "\(zone.path) has no audio frames")
                }
                read[zone.path] = (audio, rate)
            }
            var voices: [OpaquePointer] = []
            for channel in audio {
                let s: OpaquePointer
                do throws(SamplerLoadError) {
                    s = try Self.makeSample(channel, sampleRate: rate, zone: zone)
                } catch {
                    cleanUp()
                    throw error
                }
                samples.append(s)
                voices.append(s)
            }
            made.append(RenderZone(keyLow: Int32(zone.keys.lowerBound), keyHigh: Int32(zone.keys.upperBound),
                                   velocityLow: Int32(zone.velocities.lowerBound), velocityHigh: Int32(zone.velocities.upperBound),
                                   left: voices[0], right: voices.count > 1 ? voices[1] : nil,
                                   sampleMode: zone.loop == nil ? 0 : zone.loopsWhileHeld ? 3 : 1,
                                   release: Float(1200 * log2(max(0.001, min(100, zone.release))))))
        }
        self.zones = zones
        self.samples = samples
        renderZones = .allocate(capacity: made.count)
        _ = renderZones.initialize(from: made)
    }

    deinit {
        renderZones.deallocate()
        for s in samples { delete_fluid_sample(s) }
    }

    /// A fluidsynth sample of `channel` (24 bits: 16 plus an extra low byte), copied into the
    /// library's own padded buffer.
    /// A fluidsynth sample holding `channel` of `zone`'s file, its loop and pitch set.
    /// - Throws: a one-line reason naming the file (no memory for the sample, or fluidsynth
    ///   refusing the sound data, with the frame count).
    static func makeSample(_ channel: [Float], sampleRate: Double, zone: SamplerZone) throws(SamplerLoadError) -> OpaquePointer {
        guard let s = new_fluid_sample() else { throw .init("fluidsynth: out of memory loading \(zone.path)") }
        var high = [Int16](repeating: 0, count: channel.count)
        var low = [CChar](repeating: 0, count: channel.count)
        for (i, x) in channel.enumerated() {
            let v = Int32((max(-1, min(1, Double(x))) * 8_388_607).rounded())
            high[i] = Int16(truncatingIfNeeded: v >> 8)
            low[i] = CChar(truncatingIfNeeded: v & 0xFF)
        }
        let ok = high.withUnsafeMutableBufferPointer { h in
            low.withUnsafeMutableBufferPointer { l in
                fluid_sample_set_sound_data(s, h.baseAddress, l.baseAddress, UInt32(channel.count), UInt32(sampleRate.rounded()), 1)
            }
        }
        guard ok == FLUID_OK else {
            delete_fluid_sample(s)
            throw .init("fluidsynth refused the sample \(zone.path) (\(channel.count) frames at \(Int(sampleRate.rounded())) Hz)")
        }
        // The copy starts 8 frames into fluidsynth's buffer (its interpolation margin): loop points are absolute.
        let margin: UInt32 = 8
        if let loop = zone.loop {
            fluid_sample_set_loop(s, margin + UInt32(loop.lowerBound), margin + UInt32(loop.upperBound))
        } else {
            fluid_sample_set_loop(s, margin, margin + UInt32(channel.count))
        }
        fluid_sample_set_pitch(s, Int32(zone.rootKey), Int32(zone.pitchCorrection))
        return s
    }

    // MARK: Reading the zones

    /// What one file says about its placement (nil where it says nothing).
    struct FileInstrument: Equatable {
        var rootKey: Int?
        var pitchCorrection = 0
        var keys: ClosedRange<Int>?
        var velocities: ClosedRange<Int> = 0...127
        var loop: Range<Int>?
    }

    /// The zones of `paths` (see the type's documentation for the defaults).
    /// - Throws: a one-line reason naming the file.
    static func zones(for paths: [String]) throws(SamplerLoadError) -> [SamplerZone] {
        guard !paths.isEmpty else { throw .init("no audio files given") }
        var read: [(String, FileInstrument)] = []
        for path in paths { read.append((path, try instrument(of: path))) }
        var nextDefault = firstDefaultRootKey
        var zones: [SamplerZone] = []
        for (path, info) in read {
            let root: Int
            if let r = info.rootKey { root = r } else { root = min(nextDefault, 127); nextDefault += 1 }
            zones.append(SamplerZone(path: path, rootKey: root, pitchCorrection: info.pitchCorrection, keys: info.keys ?? 0...127,
                                     velocities: info.velocities, loop: info.loop))
        }
        if zones.count > 1 {
            let roots = Set(zones.map(\.rootKey)).sorted()
            for (i, (_, info)) in read.enumerated() where info.keys == nil {
                let r = zones[i].rootKey, j = roots.firstIndex(of: r)!
                let low = j == 0 ? 0 : (roots[j - 1] + r) / 2 + 1
                let high = j == roots.count - 1 ? 127 : (r + roots[j + 1]) / 2
                zones[i].keys = low...high
            }
        }
        return zones
    }

    /// What `path` says about its placement (libsndfile's `SF_INSTRUMENT`), after checking it
    /// is a mono or stereo sound file with frames.
    static func instrument(of path: String) throws(SamplerLoadError) -> FileInstrument {
        var sfinfo = SF_INFO()
        let file: OpaquePointer
        do throws(AudioFileError) { file = try AudioFileReader.open(path, &sfinfo) } catch { throw .init(error.description) }
        defer { sf_close(file) }
        guard sfinfo.frames > 0 else { throw .init("\(path) has no audio frames") }
        guard sfinfo.channels <= 2 else {
            throw .init("\(path) has \(sfinfo.channels) channels; a sampler zone takes a mono or stereo file")
        }
        var inst = SF_INSTRUMENT()
        guard sf_command(file, Int32(SFC_GET_INSTRUMENT), &inst, Int32(MemoryLayout<SF_INSTRUMENT>.size)) == SF_TRUE else {
            return FileInstrument()
        }
        var result = FileInstrument()
        result.rootKey = max(0, min(127, Int(inst.basenote)))
        // A WAV `smpl` chunk's fraction says how far the recording is above its unity note (so
        // the correction is its negative); an AIFF `INST` chunk's detune is the correction itself.
        let major = sfinfo.format & Int32(SF_FORMAT_TYPEMASK)
        let isAIFF = major == Int32(SF_FORMAT_AIFF)
        result.pitchCorrection = isAIFF ? Int(inst.detune) : -Int(inst.detune)
        let keyLow = max(0, min(127, Int(inst.key_lo))), keyHigh = max(0, min(127, Int(inst.key_hi)))
        if keyLow <= keyHigh && !(keyLow == 0 && keyHigh == 127) { result.keys = keyLow...keyHigh }
        let velLow = max(0, min(127, Int(inst.velocity_lo))), velHigh = max(0, min(127, Int(inst.velocity_hi)))
        if velLow <= velHigh { result.velocities = velLow...velHigh }
        if inst.loop_count > 0 {
            // The array of anonymous structs does not import: the first loop is read from its
            // C layout (int mode; uint32_t start, end, count) right after `loop_count`.
            let at = MemoryLayout<SF_INSTRUMENT>.offset(of: \SF_INSTRUMENT.loop_count)! + MemoryLayout<Int32>.size
            let (mode, start, end) = withUnsafeBytes(of: &inst) { raw in
                (raw.load(fromByteOffset: at, as: Int32.self), Int(raw.load(fromByteOffset: at + 4, as: UInt32.self)),
                 min(Int(raw.load(fromByteOffset: at + 8, as: UInt32.self)), Int(sfinfo.frames)))
            }
            if mode != Int32(SF_LOOP_NONE) && end - start >= 2 { result.loop = start..<end }
        }
        return result
    }

    // MARK: The in-memory SoundFont

    /// Adds this instrument to `synth` as a SoundFont of one preset (bank 0, program 0, answering
    /// every bank and program) and returns its id. The synthesizer keeps the instrument alive
    /// until it is deleted. Control thread.
    func install(in synth: OpaquePointer) -> Int32? {
        guard let sfont = new_fluid_sfont(Self.sfontName, Self.sfontPreset, Self.iterationStart, Self.iterationNext, Self.sfontFree) else {
            return nil
        }
        guard let preset = new_fluid_preset(sfont, Self.presetName, Self.presetBank, Self.presetNumber, Self.presetNoteOn, Self.presetFree) else {
            _ = delete_fluid_sfont(sfont)
            return nil
        }
        let context = Unmanaged.passRetained(InstalledFont(instrument: self, preset: preset)).toOpaque()
        fluid_sfont_set_data(sfont, context)
        fluid_preset_set_data(preset, Unmanaged.passUnretained(self).toOpaque())
        let id = fluid_synth_add_sfont(synth, sfont)
        guard id != FLUID_FAILED else {
            _ = Self.sfontFree(sfont)
            return nil
        }
        return id
    }

    /// What the SoundFont's data points at: the instrument (kept alive) and its one preset.
    private final class InstalledFont {
        let instrument: AudioFileInstrument
        let preset: OpaquePointer
        var iterated = false
        init(instrument: AudioFileInstrument, preset: OpaquePointer) {
            self.instrument = instrument
            self.preset = preset
        }
    }

    private static func font(_ sfont: OpaquePointer?) -> InstalledFont? {
        guard let sfont, let data = fluid_sfont_get_data(sfont) else { return nil }
        return Unmanaged<InstalledFont>.fromOpaque(data).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let name: UnsafeMutablePointer<CChar> = strdup("Audio files")!

    private static let sfontName: fluid_sfont_get_name_t = { _ in UnsafePointer(AudioFileInstrument.name) }
    private static let sfontPreset: fluid_sfont_get_preset_t = { sfont, _, _ in AudioFileInstrument.font(sfont)?.preset }
    private static let iterationStart: fluid_sfont_iteration_start_t = { sfont in AudioFileInstrument.font(sfont)?.iterated = false }
    private static let iterationNext: fluid_sfont_iteration_next_t = { sfont in
        guard let f = AudioFileInstrument.font(sfont), !f.iterated else { return nil }
        f.iterated = true
        return f.preset
    }
    private static let sfontFree: fluid_sfont_free_t = { sfont in
        guard let sfont else { return 0 }
        if let data = fluid_sfont_get_data(sfont) {
            let f = Unmanaged<InstalledFont>.fromOpaque(data).takeRetainedValue()
            delete_fluid_preset(f.preset)
        }
        return delete_fluid_sfont(sfont)
    }
    private static let presetName: fluid_preset_get_name_t = { _ in UnsafePointer(AudioFileInstrument.name) }
    private static let presetBank: fluid_preset_get_banknum_t = { _ in 0 }
    private static let presetNumber: fluid_preset_get_num_t = { _ in 0 }
    private static let presetFree: fluid_preset_free_t = { _ in }
    private static let presetNoteOn: fluid_preset_noteon_t = { preset, synth, channel, key, velocity in
        guard let preset, let synth, let data = fluid_preset_get_data(preset) else { return FLUID_FAILED }
        Unmanaged<AudioFileInstrument>.fromOpaque(data).takeUnretainedValue().noteOn(synth: synth, channel: channel, key: key, velocity: velocity)
        return FLUID_OK
    }

    /// Starts the zones that hold `key` and `velocity`. Render thread (fluidsynth's note-on); real-time safe.
    private func noteOn(synth: OpaquePointer, channel: Int32, key: Int32, velocity: Int32) {
        for i in 0..<renderZones.count {
            let z = renderZones[i]
            guard key >= z.keyLow && key <= z.keyHigh && velocity >= z.velocityLow && velocity <= z.velocityHigh else { continue }
            start(z.left, pan: z.right == nil ? 0 : -500, zone: z, synth: synth, channel: channel, key: key, velocity: velocity)
            if let right = z.right {
                start(right, pan: 500, zone: z, synth: synth, channel: channel, key: key, velocity: velocity)
            }
        }
    }

    @inline(__always)
    private func start(_ sample: OpaquePointer, pan: Float, zone: RenderZone, synth: OpaquePointer,
                       channel: Int32, key: Int32, velocity: Int32) {
        guard let voice = fluid_synth_alloc_voice(synth, sample, channel, key, velocity) else { return }
        fluid_voice_gen_set(voice, Int32(GEN_SAMPLEMODE.rawValue), zone.sampleMode)
        // -32768 timecents: no attack ramp (fluidsynth's attack time of 0).
        fluid_voice_gen_set(voice, Int32(GEN_VOLENVATTACK.rawValue), -32768)
        fluid_voice_gen_set(voice, Int32(GEN_VOLENVRELEASE.rawValue), zone.release)
        fluid_voice_gen_set(voice, Int32(GEN_PAN.rawValue), pan)
        fluid_synth_start_voice(synth, voice)
    }
}
