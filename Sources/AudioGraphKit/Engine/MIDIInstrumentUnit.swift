// The MIDI-sending surface every instrument unit shares (AVAudioUnitMIDIInstrument's methods), with Linux's timed variants.
import Foundation

/// An engine unit that plays MIDI (cf. `AVAudioUnitMIDIInstrument`'s methods): the sampler
/// (``AudioUnitSampler``) and LV2 instruments (``AudioUnitLV2``). Events sent while the engine
/// runs apply at the start of the next slice rendered; the variants taking an ``AudioTime`` (a
/// Linux addition) apply at that frame of the engine's timeline exactly (its sample time, at
/// its rate; a host time only is converted through the last render time; a time already
/// rendered means the next slice). Events sent while the engine is not running are dropped, as
/// an Audio Unit that is not rendering drops them. Channels are 0...15; data bytes are masked
/// to 7 bits.
///
/// Thread safety: any thread but a render thread; never waits for the render thread.
public protocol MIDIInstrumentUnit: AnyObject {
    /// Sends one message, at `time` (nil: the next slice). The other methods call this.
    func send(_ event: MIDIEvent, at time: AudioTime?)
}

extension MIDIInstrumentUnit {
    /// Note on (cf. `startNote(_:withVelocity:onChannel:)`).
    public func startNote(_ note: UInt8, withVelocity velocity: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.noteOn(channel: channel, key: note, velocity: velocity), at: time)
    }
    /// Note off (cf. `stopNote(_:onChannel:)`).
    public func stopNote(_ note: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.noteOff(channel: channel, key: note), at: time)
    }
    /// Control change (cf. `sendController(_:withValue:onChannel:)`).
    public func sendController(_ controller: UInt8, withValue value: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.controlChange(channel: channel, controller: controller, value: value), at: time)
    }
    /// Pitch bend, 0...16383 (8192 centre) (cf. `sendPitchBend(_:onChannel:)`).
    public func sendPitchBend(_ pitchbend: UInt16, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.pitchBend(channel: channel, value: Int(pitchbend)), at: time)
    }
    /// Channel pressure (cf. `sendPressure(_:onChannel:)`).
    public func sendPressure(_ pressure: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.channelPressure(channel: channel, pressure: pressure), at: time)
    }
    /// Polyphonic key pressure (cf. `sendPressure(forKey:withValue:onChannel:)`).
    public func sendPressure(forKey key: UInt8, withValue value: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.keyPressure(channel: channel, key: key, pressure: value), at: time)
    }
    /// Program change (cf. `sendProgramChange(_:onChannel:)`).
    public func sendProgramChange(_ program: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.programChange(channel: channel, program: program), at: time)
    }
    /// Bank select (controllers 0 and 32) then program change (cf.
    /// `sendProgramChange(_:bankMSB:bankLSB:onChannel:)`).
    public func sendProgramChange(_ program: UInt8, bankMSB: UInt8, bankLSB: UInt8, onChannel channel: UInt8, at time: AudioTime? = nil) {
        send(.controlChange(channel: channel, controller: 0, value: bankMSB), at: time)
        send(.controlChange(channel: channel, controller: 32, value: bankLSB), at: time)
        send(.programChange(channel: channel, program: program), at: time)
    }
    /// A three-byte message (cf. `sendMIDIEvent(_:data1:data2:)`).
    public func sendMIDIEvent(_ midiStatus: UInt8, data1: UInt8, data2: UInt8, at time: AudioTime? = nil) {
        send(MIDIEvent(status: midiStatus, data1: data1, data2: data2), at: time)
    }
    /// A two-byte message (cf. `sendMIDIEvent(_:data1:)`).
    public func sendMIDIEvent(_ midiStatus: UInt8, data1: UInt8, at time: AudioTime? = nil) {
        send(MIDIEvent(status: midiStatus, data1: data1), at: time)
    }
    /// A system-exclusive message, `F0 … F7` (cf. `sendMIDISysExEvent(_:)`); at most
    /// ``MIDIEvent/maximumByteCount`` bytes on Linux (longer ones are dropped: a programmer
    /// error is not made of a device's reply).
    public func sendMIDISysExEvent(_ midiData: Data, at time: AudioTime? = nil) {
        guard let e = MIDIEvent(bytes: midiData), e.isSystemExclusive else { return }
        send(e, at: time)
    }
}

extension AudioNode {
    /// Sends `event` to this node's graph node when it plays MIDI and the engine runs.
    func sendMIDI(_ event: MIDIEvent, at time: AudioTime?) {
        guard let engine else { return }
        engine.withLock {
            guard engine.running, let receiver = graphNode as? MIDIEventReceiver, let graph = engine.graph else { return }
            receiver.send(event, at: time.flatMap { engine.graphFrame(for: $0, rate: graph.sampleRate) })
        }
    }
}

extension AudioEngine {
    /// The engine-timeline frame of `time` (nil when it has neither valid time). Under the lock.
    func graphFrame(for time: AudioTime, rate: Double) -> Int64? {
        if time.isSampleTimeValid {
            return time.sampleRate == rate || time.sampleRate <= 0 ? time.sampleTime
                : Int64((Double(time.sampleTime) * rate / time.sampleRate).rounded())
        }
        guard time.isHostTimeValid else { return nil }
        let frames: Int64 = live?.output.map { Int64($0.renderedFrames) } ?? manualState?.sampleTime ?? 0
        let seconds = (Double(time.hostTime) - Double(AudioTime.currentHostTime)) / 1e9
        return frames + Int64((seconds * rate).rounded())
    }
}
