// Atom sequence buffers for a plugin instance's atom ports: MIDI events into inputs, outputs with room.
import AudioGraphCore
import CLilv

/// The memory behind one instance's atom ports (`atom:AtomPort`, e.g. a MIDI or event port):
/// each input gets a well-formed `LV2_Atom_Sequence` — empty, or, for ports that support
/// `midi:MidiEvent`, the slice's MIDI events (``appendMIDI(_:frame:)``, frame-stamped) — each
/// output a buffer of ``LV2InstanceFeatures/sequenceSize`` bytes whose header says how much
/// room the plugin has. ``prepare()`` rewrites the headers before every run, as the atom spec
/// asks (a plugin writes its output's size; it must not trust an input's to stay). What a
/// plugin writes to an atom output is dropped.
///
/// Thread safety: made and connected on a control thread; ``prepare()`` on the render thread
/// only (real-time safe: writes a few words); freed on a control thread.
final class LV2AtomBuffers: @unchecked Sendable {
    // MARK: Fixed at creation
    private let inputs: [UnsafeMutableRawPointer]
    private let outputs: [UnsafeMutableRawPointer]
    private let sequenceType: UInt32
    private let chunkType: UInt32
    private let midiType: UInt32
    /// Which of `inputs` take MIDI events (contiguous copy: `midiList`).
    private let midiCount: Int
    private let midiList: UnsafeMutablePointer<UnsafeMutableRawPointer>
    // Contiguous copies of `inputs`/`outputs` so that `prepare` touches no array machinery.
    private let inputList: UnsafeMutablePointer<UnsafeMutableRawPointer>
    private let outputList: UnsafeMutablePointer<UnsafeMutableRawPointer>

    /// Allocates a buffer for every atom port of `info` and connects it on `instance`.
    init(info: LV2PluginInfo, instance: LV2Instance, map: LV2URIDMap) {
        sequenceType = map.map(LV2URI.atomSequence)
        chunkType = map.map(LV2URI.atomChunk)
        midiType = map.map(LV2URI.midiEvent)
        var ins: [UnsafeMutableRawPointer] = [], outs: [UnsafeMutableRawPointer] = [], midi: [UnsafeMutableRawPointer] = []
        for port in info.ports where port.kind == .atom {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: LV2InstanceFeatures.sequenceSize,
                                                          alignment: MemoryLayout<UInt64>.alignment)
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: LV2InstanceFeatures.sequenceSize)
            if port.isInput { ins.append(buffer) } else { outs.append(buffer) }
            if port.isInput && port.supportsMIDI { midi.append(buffer) }
            instance.connect(port: port.index, toRaw: buffer)
        }
        inputs = ins
        outputs = outs
        inputList = .allocate(capacity: max(1, ins.count))
        inputList.initialize(from: ins, count: ins.count)
        outputList = .allocate(capacity: max(1, outs.count))
        outputList.initialize(from: outs, count: outs.count)
        midiCount = midi.count
        midiList = .allocate(capacity: max(1, midi.count))
        midiList.initialize(from: midi, count: midi.count)
        prepare()
    }

    deinit {
        inputs.forEach { $0.deallocate() }
        outputs.forEach { $0.deallocate() }
        inputList.deallocate()
        outputList.deallocate()
        midiList.deallocate()
    }

    /// Whether the instance has an atom input that takes MIDI.
    var takesMIDI: Bool { midiCount > 0 }

    /// Appends `event` at `frame` (of the coming run) to every MIDI input's sequence, after
    /// ``prepare()``, in frame order (the caller's). A SysEx goes whole; an event that does not
    /// fit the buffer is dropped (false). Render thread; real-time safe.
    @inline(__always)
    func appendMIDI(_ event: MIDIEvent, frame: Int) -> Bool {
        let payload = event.count
        let eventBytes = MemoryLayout<LV2_Atom_Event>.size + ((payload + 7) & ~7)
        var fitted = true
        for i in 0..<midiCount {
            let seq = midiList[i].assumingMemoryBound(to: LV2_Atom_Sequence.self)
            let used = MemoryLayout<LV2_Atom>.size + Int(seq.pointee.atom.size)
            guard used + eventBytes <= LV2InstanceFeatures.sequenceSize else { fitted = false; continue }
            let at = midiList[i] + used
            let e = at.assumingMemoryBound(to: LV2_Atom_Event.self)
            e.pointee.time.frames = Int64(frame)
            e.pointee.body.size = UInt32(payload)
            e.pointee.body.type = midiType
            let data = (at + MemoryLayout<LV2_Atom_Event>.size).assumingMemoryBound(to: UInt8.self)
            for k in 0..<payload { data[k] = event[k] }
            seq.pointee.atom.size += UInt32(eventBytes)
        }
        return fitted
    }

    /// Whether the instance has no atom port (nothing to prepare).
    var isEmpty: Bool { inputs.isEmpty && outputs.isEmpty }

    /// Resets every input to an empty sequence (size: just the body header; unit 0: frames) and
    /// every output to a chunk of the buffer's room. Render thread; real-time safe.
    @inline(__always)
    func prepare() {
        let bodyHeader = UInt32(MemoryLayout<LV2_Atom_Sequence_Body>.size)
        for i in 0..<inputs.count {
            let seq = inputList[i].assumingMemoryBound(to: LV2_Atom_Sequence.self)
            seq.pointee.atom.size = bodyHeader
            seq.pointee.atom.type = sequenceType
            seq.pointee.body.unit = 0
            seq.pointee.body.pad = 0
        }
        for i in 0..<outputs.count {
            let atom = outputList[i].assumingMemoryBound(to: LV2_Atom.self)
            atom.pointee.size = UInt32(LV2InstanceFeatures.sequenceSize - MemoryLayout<LV2_Atom>.size)
            atom.pointee.type = chunkType
        }
    }
}
