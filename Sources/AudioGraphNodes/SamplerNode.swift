// The SoundFont 2 sampler instrument (cf. AUSampler / AVAudioUnitSampler), played by MIDI events.
import AudioGraphCore
import CFluidSynth
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A SoundFont 2 instrument (cf. `AVAudioUnitSampler`): a source whose output is what
/// libfluidsynth (``FluidSynthInstance``) plays for the MIDI events it receives through its
/// ``midiInput`` (``MIDIEventReceiver``: the engine API's `startNote`…, a sequencer's tracks,
/// its own `midiFile` and `notes` from a graph file). Stereo output (a mono connection gets the
/// average of the two). Instead of a SoundFont it can play audio files, each file a zone
/// (``SamplerProperties/audioFiles``, mapped as ``AudioFileInstrument`` says; the same voices),
/// or an SFZ instrument's regions (``SamplerProperties/sfz``, read by ``SFZFile``).
///
/// Events apply at their frame: the render splits the slice at each event's offset, so a note
/// starts at fluidsynth's first 64-frame block boundary at or after its frame, `64·⌈f/64⌉`
/// (see ``FluidSynthInstance``). Renders are bit-identical
/// across slice sizes.
///
/// Parameters: `gain` (dB, -90...12, 0; 0 dB is fluidsynth's own level, its `synth.gain` 0.2),
/// `pan` (-100...100, 0: a balance, the far side attenuated linearly), `tuning` (cents,
/// -2400...2400, 0: every channel's coarse and fine tune). Properties `soundfont`, `program`,
/// `bank` (``SamplerProperties``; all three at once: `instrument`, a ``SamplerProperties``) may
/// change while the graph runs: the new synthesizer is built
/// on the control thread and swapped in at a slice start (the sounding notes stop).
///
/// Thread safety: configure on a control thread; parameters and ``midiInput`` from any thread.
public final class SamplerNode: GraphNode, MIDIEventReceiver, @unchecked Sendable {
    /// The configuration.
    public private(set) var properties: SamplerProperties
    /// The node's MIDI input (events from any control thread).
    public let midiInput = MIDIInputPort()
    private let sampleRate: Double
    /// The synthesizer made at creation (or by the last property change), handed to the next kernel.
    private var synth: FluidSynthInstance
    /// The sequence tracks last attached (``MIDISequenceSources``), given to every new kernel.
    private var sequenceTracks: [MIDITrackSchedule] = []
    /// How many of `sequenceTracks` come first as the node's own (its `midiFile` and `notes`).
    private var ownTrackCount = 0

    /// The sampler's parameters: `gain` (dB), `pan`, `tuning` (cents).
    package static let parameterTable = ParameterTable([
        .init(.global, "gain", .decibels, -90, 12, 0),
        .init(.global, "pan", .generic, -100, 100, 0),
        .init(.global, "tuning", .generic, -2400, 2400, 0),
    ])

    /// A sampler at `sampleRate` loading `properties`' SoundFont.
    /// - Throws: ``AudioGraphError/nodeSetupFailed(node:reason:)`` naming the file when it cannot be loaded.
    public init(id: String, sampleRate: Double, properties: SamplerProperties = SamplerProperties()) throws(AudioGraphError) {
        self.properties = properties
        self.sampleRate = sampleRate
        synth = try Self.makeSynth(id: id, properties: properties, sampleRate: sampleRate)
        let ownTracks = try properties.tracksFromStart(node: id)
        super.init(id: id, typeName: "sampler", inputBusCount: 0, outputBusCount: 1,
                   parameters: Self.parameterTable.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0),
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: 2))
        sequenceTracks = ownTracks
        ownTrackCount = ownTracks.count
    }

    private static func makeSynth(id: String, properties: SamplerProperties, sampleRate: Double) throws(AudioGraphError) -> FluidSynthInstance {
        if let sfz = properties.sfz {
            do throws(SamplerLoadError) {
                return try FluidSynthInstance(instrument: AudioFileInstrument(zones: SFZFile.zones(contentsOf: sfz)), sampleRate: sampleRate)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        if !properties.audioFiles.isEmpty {
            do throws(SamplerLoadError) {
                return try FluidSynthInstance(instrument: AudioFileInstrument(paths: properties.audioFiles), sampleRate: sampleRate)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        guard let path = properties.resolvedSoundFont else {
            throw .nodeSetupFailed(node: id, reason: "no SoundFont given and no General MIDI SoundFont installed (tried "
                                   + SamplerProperties.defaultSoundFontCandidates.joined(separator: ", ") + ")")
        }
        do throws(SamplerLoadError) {
            return try FluidSynthInstance(path: path, sampleRate: sampleRate, program: properties.program, bank: properties.bank)
        } catch {
            throw .nodeSetupFailed(node: id, reason: error.description)
        }
    }

    /// The `sampler` node type: a source, `properties` ``SamplerProperties`` (all three may
    /// change while the graph runs), parameters ``parameterTable``.
    package static let descriptor = NodeTypeDescriptor(
        name: "sampler", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["soundfont", "program", "bank", "sfz"] + SamplerProperties.midiKeys,
        runtimePropertyKeys: ["soundfont", "program", "bank"],
        parameters: parameterTable,
        decode: { reader in
            var result = SamplerProperties()
            if let file = reader.file("soundfont") {
                if !FileSystemPath.isReadable(file.path) {
                    reader.reportInvalid("soundfont", "cannot read \(file.name)")
                } else if fluid_is_soundfont(file.path) == 0 {
                    reader.reportInvalid("soundfont", "\(file.name) is not a SoundFont 2 file")
                } else {
                    result.soundFont = file.path
                }
            }
            if let file = reader.file("sfz") {
                do throws(SamplerLoadError) {
                    _ = try SFZFile.zones(contentsOf: file.path)
                    result.sfz = file.path
                } catch {
                    reader.reportInvalid("sfz", error.description)
                }
            }
            if let p = reader.integer("program", in: 0...127) { result.program = p }
            if let b = reader.integer("bank", in: 0...16383) { result.bank = b }
            result.decodeMIDI(reader)
            return result
        },
        typedProperty: { name, options in
            guard let p = options as? SamplerProperties else { return nil }
            switch name {
            case "soundfont": return p.soundFont
            case "program": return p.program
            case "bank": return p.bank
            case "sfz": return p.sfz
            default: return nil
            }
        },
        playbackEnd: { options, _ in (options as? SamplerProperties)?.playbackLength },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            try SamplerNode(id: context.id, sampleRate: context.sampleRate,
                            properties: context.options(as: SamplerProperties.self) ?? SamplerProperties())
        })

    /// The presets of the loaded SoundFont (bank, program, name). Control thread.
    public var presets: [(bank: Int, program: Int, name: String)] { synth.presets }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: declaredFormat.sampleRate ?? graphSampleRate, channelCount: declaredFormat.channelCount ?? 2)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        // A kernel made again (a new plan at another rate) gets its own synthesizer.
        if let rate = outputFormats.first?.sampleRate, rate != sampleRate || kernel != nil {
            synth = try Self.makeSynth(id: id, properties: properties, sampleRate: rate)
        }
        let k = SamplerKernel(node: self, synth: synth, maximumFramesPerSlice: maximumFramesPerSlice)
        if !sequenceTracks.isEmpty { k.receive(MIDISequenceSources(tracks: sequenceTracks)) }
        return k
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        var p = pendingProperties ?? properties
        switch name {
        case "instrument":
            guard let v = value as? SamplerProperties else { throw .invalidProperty(node: id, name: name, reason: "expected SamplerProperties") }
            p = v
        case "soundfont":
            guard let path = value as? String? else { throw .invalidProperty(node: id, name: name, reason: "expected a file path") }
            p.soundFont = path
        case "program":
            guard let v = value as? Int? ?? (PropertyValue.int(value).map { Optional($0) }), (v ?? 0) >= 0 && (v ?? 0) <= 127 else {
                throw .invalidProperty(node: id, name: name, reason: "expected a program 0...127 or null")
            }
            p.program = v
        case "bank":
            guard let v = PropertyValue.int(value), v >= 0 && v <= 16383 else {
                throw .invalidProperty(node: id, name: name, reason: "expected a bank 0...16383")
            }
            p.bank = v
        case MIDISequenceSources.propertyName:
            guard value is MIDISequenceSources else { throw .invalidProperty(node: id, name: name, reason: "expected MIDISequenceSources") }
            return
        default:
            throw .invalidProperty(node: id, name: name, reason: "no such property")
        }
        pendingSynth = try Self.makeSynth(id: id, properties: p, sampleRate: outputFormats.first?.sampleRate ?? sampleRate)
        pendingProperties = p
    }

    // The synthesizer `validateProperty` built, taken by `applyProperty`.
    private var pendingSynth: FluidSynthInstance?
    private var pendingProperties: SamplerProperties?

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        if name == MIDISequenceSources.propertyName, let m = value as? MIDISequenceSources {
            // The node's own file and notes keep playing beside what is attached.
            let own = ownTrackCount > 0 ? Array(sequenceTracks.prefix(ownTrackCount)) : []
            sequenceTracks = own + m.tracks
            return own.isEmpty ? m : MIDISequenceSources(tracks: sequenceTracks)
        }
        guard let s = pendingSynth, let p = pendingProperties else { return nil }
        pendingSynth = nil
        pendingProperties = nil
        properties = p
        synth = s
        return SamplerKernel.NewSynth(synth: s)
    }
}

/// Render side of ``SamplerNode``.
final class SamplerKernel: NodeKernel, @unchecked Sendable {
    /// A synthesizer for another SoundFont or preset, swapped in at a slice start.
    final class NewSynth: KernelMessage, @unchecked Sendable {
        let synth: FluidSynthInstance
        init(synth: FluidSynthInstance) { self.synth = synth }
    }

    // MARK: Fixed at creation
    private let gainIndex: Int
    private let panIndex: Int
    private let tuningIndex: Int
    private let collector: MIDIEventCollector
    private let scratchLeft: UnsafeMutablePointer<Float>
    private let scratchRight: UnsafeMutablePointer<Float>

    // MARK: Render thread only
    private var synth: FluidSynthInstance
    private var tuning: Double = 0

    init(node: SamplerNode, synth: FluidSynthInstance, maximumFramesPerSlice: Int) {
        func index(_ name: String) -> Int { node.parameterIndex(of: ParameterAddress(name: name))! }
        gainIndex = index("gain")
        panIndex = index("pan")
        tuningIndex = index("tuning")
        self.synth = synth
        collector = MIDIEventCollector(port: node.midiInput)
        scratchLeft = .allocate(capacity: maximumFramesPerSlice)
        scratchLeft.initialize(repeating: 0, count: maximumFramesPerSlice)
        scratchRight = .allocate(capacity: maximumFramesPerSlice)
        scratchRight.initialize(repeating: 0, count: maximumFramesPerSlice)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        scratchLeft.deallocate()
        scratchRight.deallocate()
    }

    override func receive(_ message: KernelMessage) {
        if let m = message as? NewSynth {
            m.retired = synth
            synth = m.synth
            if tuning != 0 { synth.setTuning(cents: tuning) }
        } else if let m = message as? MIDISequenceSources {
            collector.install(m)
        }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let stereo = out.channelCount >= 2
        let left = stereo ? out.channel(0) : scratchLeft
        let right = stereo ? out.channel(1) : scratchRight

        let tuningValues = parameterValues(tuningIndex, context)
        let t = tuningValues.isConstant ? parameterStates[tuningIndex].current : Double(tuningValues[0])
        if t != tuning {
            tuning = t
            synth.setTuning(cents: t)
        }

        let count = collector.collect(context)
        var position = 0
        for i in 0..<count {
            let offset = min(collector.offset(at: i), n)
            if offset > position {
                synth.render(left: left + position, right: right + position, frameCount: offset - position)
                position = offset
            }
            synth.apply(collector.event(at: i))
        }
        synth.render(left: left + position, right: right + position, frameCount: n - position)

        let gain = parameterValues(gainIndex, context)
        let pan = parameterValues(panIndex, context)
        if gain.isConstant && pan.isConstant {
            let g = Self.linear(parameterStates[gainIndex].current), p = parameterStates[panIndex].current
            let gl = Float(g * Self.leftWeight(p)), gr = Float(g * Self.rightWeight(p))
            if gl != 1 { for i in 0..<n { left[i] *= gl } }
            if gr != 1 { for i in 0..<n { right[i] *= gr } }
        } else {
            for i in 0..<n {
                let g = Self.linear(Double(gain[i])), p = Double(pan[i])
                left[i] *= Float(g * Self.leftWeight(p))
                right[i] *= Float(g * Self.rightWeight(p))
            }
        }
        if !stereo {
            for i in 0..<n { left[i] = 0.5 * (left[i] + right[i]) }
            out.channel(0).update(from: left, count: n)
        } else {
            for c in 2..<max(2, out.channelCount) { out.channel(c).update(repeating: 0, count: n) }
        }
        outputIsSilent[0] = InputBuffer.isAllZero(out, frameCount: n)
    }

    @inline(__always)
    private static func linear(_ decibels: Double) -> Double {
        decibels <= -90 ? 0 : pow(10, decibels / 20)
    }

    @inline(__always)
    private static func leftWeight(_ pan: Double) -> Double { pan > 0 ? 1 - pan / 100 : 1 }
    @inline(__always)
    private static func rightWeight(_ pan: Double) -> Double { pan < 0 ? 1 + pan / 100 : 1 }
}

extension SamplerProperties {
    /// The graph-file keys of what plays from the graph's start (a sampler's, an LV2 instrument's).
    package static let midiKeys = ["midiFile", "midiTracks", "midiChannels", "notes"]

    /// Reads ``midiFile``, ``midiTracks``, ``midiChannels`` and ``notes`` from a graph file's
    /// `properties` (problems reported at their keys) and sets ``lastEventTime``.
    package mutating func decodeMIDI(_ reader: any NodePropertyReader) {
        var result = self
        var last: Double?
        if let file = reader.file("midiFile") {
            do throws(MIDIFileError) {
                let midi = try MIDIFile(contentsOf: file.path)
                result.midiFile = file.path
                if let tracks = reader.integers("midiTracks", in: 0...65535) {
                    if let bad = tracks.first(where: { $0 >= midi.tracks.count }) {
                        reader.reportInvalid("midiTracks", "\(file.name) has \(midi.tracks.count) tracks (0...\(midi.tracks.count - 1)); \(bad) is not one")
                    } else {
                        result.midiTracks = tracks
                    }
                }
                if let channels = reader.integers("midiChannels", in: 0...15) { result.midiChannels = channels }
                last = result.midiSchedules(midi, clock: MIDIPlaybackClock()).compactMap { $0.count > 0 ? $0.time(at: $0.count - 1) : nil }.max()
            } catch {
                reader.reportInvalid("midiFile", error.description)
            }
        }
        if let count = reader.count("notes") {
            for i in 0..<count {
                guard let n = reader.element("notes", i, allowed: ["time", "key", "duration", "velocity", "channel"],
                                             required: ["time", "key", "duration"]),
                      let time = n.time("time"), let key = n.integer("key", in: 0...127),
                      let duration = n.number("duration", in: 0...1e6) else { continue }
                let note = SamplerNote(time: time, key: key, duration: duration,
                                       velocity: n.integer("velocity", in: 1...127) ?? 100, channel: n.integer("channel", in: 0...15) ?? 0)
                result.notes.append(note)
                last = max(last ?? 0, time + duration)
            }
        }
        result.lastEventTime = last
        self = result
    }

    /// The schedules of ``midiFile`` and ``notes`` on a clock started for the first slice the
    /// node renders (the graph's start, or when it is added); empty when neither is set.
    /// - Throws: ``AudioGraphError/nodeSetupFailed(node:reason:)`` when the file cannot be read.
    package func tracksFromStart(node id: String) throws(AudioGraphError) -> [MIDITrackSchedule] {
        guard midiFile != nil || !notes.isEmpty else { return [] }
        let clock = MIDIPlaybackClock()
        var tracks: [MIDITrackSchedule] = []
        if let path = midiFile {
            do throws(MIDIFileError) {
                tracks = midiSchedules(try MIDIFile(contentsOf: path), clock: clock)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        if !notes.isEmpty { tracks.append(noteSchedule(clock: clock)) }
        clock.start(atSeconds: 0, rate: 1, anchorFrame: nil)
        return tracks
    }

    /// The chosen tracks of `midi` (``midiTracks``, ``midiChannels``) as schedules of `clock`.
    package func midiSchedules(_ midi: MIDIFile, clock: MIDIPlaybackClock) -> [MIDITrackSchedule] {
        let tracks = midiTracks ?? Array(midi.tracks.indices)
        return tracks.filter { $0 < midi.tracks.count }.map { index in
            var t = midi.timedEvents(track: index)
            if let channels = midiChannels {
                let keep = t.events.map { e in !(e.kind >= 0x80 && e.kind < 0xF0) || channels.contains(Int(e.channel)) }
                t.times = zip(t.times, keep).filter(\.1).map(\.0)
                t.events = zip(t.events, keep).filter(\.1).map(\.0)
            }
            return MIDITrackSchedule(clock: clock, times: t.times, events: t.events)
        }
    }

    /// ``notes`` as one schedule of `clock` (note-offs before note-ons at the same time).
    package func noteSchedule(clock: MIDIPlaybackClock) -> MIDITrackSchedule {
        var timed: [(Double, Int, MIDIEvent)] = []
        for n in notes {
            timed.append((n.time, 1, .noteOn(channel: UInt8(n.channel), key: UInt8(n.key), velocity: UInt8(n.velocity))))
            timed.append((n.time + n.duration, 0, .noteOff(channel: UInt8(n.channel), key: UInt8(n.key))))
        }
        timed.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        return MIDITrackSchedule(clock: clock, times: timed.map(\.0), events: timed.map(\.2))
    }
}
