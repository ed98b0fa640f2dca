// One MIDI message (a channel message or a short system-exclusive one) as a value, with its builders.

/// One MIDI message as a value: a channel voice message (note on/off, controller, program
/// change, pressure, pitch bend) or a system-exclusive message of at most
/// ``maximumByteCount`` bytes (`F0 … F7`), stored inline so that queues of events never
/// allocate. Instruments (``MIDIEventReceiver``s: the sampler, LV2 instruments), the sequencer
/// and the engine API's `AudioUnitMIDIInstrument` methods all speak it.
///
/// Thread safety: a value; any thread.
public struct MIDIEvent: Hashable, Sendable, CustomStringConvertible {
    /// The largest message held inline (system exclusive included, `F0` and `F7` counted).
    public static let maximumByteCount = 16

    // Bytes 0-7 and 8-15, little-endian.
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    /// The message's length in bytes (1...16).
    public private(set) var count: Int = 0

    /// A message from its bytes; nil when empty, longer than ``maximumByteCount``, or not
    /// starting with a status byte.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard !bytes.isEmpty, bytes.count <= Self.maximumByteCount, let first = bytes.first, first >= 0x80 else { return nil }
        for (i, b) in bytes.enumerated() { self[i] = b }
        count = bytes.count
    }

    /// A channel message: `status` (its channel in the low nibble) and up to two data bytes
    /// (masked to 7 bits), as many as the status takes.
    public init(status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0) {
        let s = status | 0x80
        self[0] = s
        self[1] = data1 & 0x7F
        self[2] = data2 & 0x7F
        count = Self.channelMessageLength(status: s)
        if count < 3 { self[2] = 0 }
        if count < 2 { self[1] = 0 }
    }

    /// The byte at `index` (0 for an index past ``count``).
    public subscript(index: Int) -> UInt8 {
        get {
            guard index >= 0 && index < 16 else { return 0 }
            return index < 8 ? UInt8(truncatingIfNeeded: low >> UInt64(index * 8))
                             : UInt8(truncatingIfNeeded: high >> UInt64((index - 8) * 8))
        }
        set {
            guard index >= 0 && index < 16 else { return }
            if index < 8 {
                let shift = UInt64(index * 8)
                low = (low & ~(0xFF << shift)) | (UInt64(newValue) << shift)
            } else {
                let shift = UInt64((index - 8) * 8)
                high = (high & ~(0xFF << shift)) | (UInt64(newValue) << shift)
            }
        }
    }

    /// The bytes as an array (control side; the render side reads the subscript).
    public var bytes: [UInt8] { (0..<count).map { self[$0] } }

    /// The status byte.
    public var status: UInt8 { self[0] }
    /// The message kind: the status byte's high nibble (0x80 note off … 0xE0 pitch bend, 0xF0 system).
    public var kind: UInt8 { status & 0xF0 }
    /// The channel (0...15) of a channel message.
    public var channel: UInt8 { status & 0x0F }
    /// The first data byte (key, controller, program, pressure, bend LSB).
    public var data1: UInt8 { self[1] }
    /// The second data byte (velocity, controller value, key pressure, bend MSB).
    public var data2: UInt8 { self[2] }
    /// Whether this is a system-exclusive message (`F0`).
    public var isSystemExclusive: Bool { status == 0xF0 }
    /// Whether this is a note on with a velocity above 0.
    public var isNoteOn: Bool { kind == 0x90 && data2 > 0 }
    /// Whether this is a note off (or a note on with velocity 0).
    public var isNoteOff: Bool { kind == 0x80 || (kind == 0x90 && data2 == 0) }
    /// The 14-bit value of a pitch bend (8192 = centre).
    public var pitchBendValue: Int { Int(data1) | (Int(data2) << 7) }

    /// How many bytes a channel or system-common message with `status` has (1 for unknown
    /// real-time/system bytes).
    public static func channelMessageLength(status: UInt8) -> Int {
        switch status & 0xF0 {
        case 0x80, 0x90, 0xA0, 0xB0, 0xE0: return 3
        case 0xC0, 0xD0: return 2
        default:
            switch status {
            case 0xF1, 0xF3: return 2
            case 0xF2: return 3
            default: return 1
            }
        }
    }

    // MARK: Builders (channel 0...15; data masked to 7 bits)

    /// Note on: `key` at `velocity` (0 is a note off, as MIDI says).
    public static func noteOn(channel: UInt8, key: UInt8, velocity: UInt8) -> MIDIEvent {
        MIDIEvent(status: 0x90 | (channel & 0x0F), data1: key, data2: velocity)
    }
    /// Note off of `key` (release velocity `velocity`).
    public static func noteOff(channel: UInt8, key: UInt8, velocity: UInt8 = 0) -> MIDIEvent {
        MIDIEvent(status: 0x80 | (channel & 0x0F), data1: key, data2: velocity)
    }
    /// Control change.
    public static func controlChange(channel: UInt8, controller: UInt8, value: UInt8) -> MIDIEvent {
        MIDIEvent(status: 0xB0 | (channel & 0x0F), data1: controller, data2: value)
    }
    /// Program change.
    public static func programChange(channel: UInt8, program: UInt8) -> MIDIEvent {
        MIDIEvent(status: 0xC0 | (channel & 0x0F), data1: program)
    }
    /// Channel pressure (aftertouch).
    public static func channelPressure(channel: UInt8, pressure: UInt8) -> MIDIEvent {
        MIDIEvent(status: 0xD0 | (channel & 0x0F), data1: pressure)
    }
    /// Polyphonic key pressure.
    public static func keyPressure(channel: UInt8, key: UInt8, pressure: UInt8) -> MIDIEvent {
        MIDIEvent(status: 0xA0 | (channel & 0x0F), data1: key, data2: pressure)
    }
    /// Pitch bend, `value` 0...16383 (8192 = centre; clamped).
    public static func pitchBend(channel: UInt8, value: Int) -> MIDIEvent {
        let v = min(max(value, 0), 16383)
        return MIDIEvent(status: 0xE0 | (channel & 0x0F), data1: UInt8(v & 0x7F), data2: UInt8(v >> 7))
    }

    public var description: String { bytes.map { String($0, radix: 16, uppercase: true) }.joined(separator: " ") }
}

/// A MIDI event at a frame of the render timeline (``sampleTime``; ``MIDIEventReceiver/nextSlice``:
/// at the start of the next slice rendered).
///
/// Thread safety: a value; any thread.
public struct TimedMIDIEvent: Hashable, Sendable {
    /// The message.
    public var event: MIDIEvent
    /// The graph frame it applies at.
    public var sampleTime: Int64

    public init(event: MIDIEvent, sampleTime: Int64) {
        self.event = event
        self.sampleTime = sampleTime
    }
}
