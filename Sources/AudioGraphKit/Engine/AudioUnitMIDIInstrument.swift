// The engine API's MIDI instrument base class (cf. AVAudioUnitMIDIInstrument).
import Foundation

/// A unit that makes sound from MIDI (cf. `AVAudioUnitMIDIInstrument`): a source with no input
/// bus and one output, played with the ``MIDIInstrumentUnit`` methods (`startNote`,
/// `sendController`, … and their timed variants) and by an ``AudioSequencer``'s tracks.
///
/// Thread safety: the engine's; the MIDI methods from any thread but a render thread.
public class AudioUnitMIDIInstrument: AudioUnit, MIDIInstrumentUnit, @unchecked Sendable {
    /// No input bus: an instrument is a source.
    public override var numberOfInputs: Int { 0 }

    /// The sequence tracks playing into this unit (re-attached to every graph node made for it).
    var sequenceTracks: [MIDITrackSchedule] = []

    /// Sends one message (see ``MIDIInstrumentUnit``).
    public func send(_ event: MIDIEvent, at time: AudioTime?) {
        sendMIDI(event, at: time)
    }

    override func didMakeGraphNode(_ node: GraphNode) {
        super.didMakeGraphNode(node)
        if !sequenceTracks.isEmpty {
            try? node.setProperty(MIDISequenceSources.propertyName, MIDISequenceSources(tracks: sequenceTracks))
        }
    }
}
