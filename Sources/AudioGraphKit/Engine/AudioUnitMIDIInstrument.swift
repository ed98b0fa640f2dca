// The engine API's MIDI instrument base class (cf. AVAudioUnitMIDIInstrument).
import Foundation

/// A unit that makes sound from MIDI (cf. `AVAudioUnitMIDIInstrument`): a source with no input
/// bus and one output, played with the ``MIDIInstrumentUnit`` methods (`startNote`,
/// `sendController`, … and their timed variants) and by an ``AudioSequencer``'s tracks.
///
/// Thread safety: the engine's; the MIDI methods from any thread but a render thread.
public class AudioUnitMIDIInstrument: AudioUnit, MIDIInstrumentUnit, SequenceDestination, @unchecked Sendable {
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
        handSequenceTracks(to: node)
    }
}

/// An engine node an ``AudioSequencer`` can play tracks into: it keeps the schedules and hands
/// them to every graph node made for it.
protocol SequenceDestination: AudioNode {
    /// The schedules playing into the node (of every sequencer). Under the engine's lock.
    var sequenceTracks: [MIDITrackSchedule] { get set }
}

extension SequenceDestination {
    /// Replaces the schedules of `clock`'s sequence with `schedules`, on the graph node too.
    func attachSequence(_ schedules: [MIDITrackSchedule], clock: MIDIPlaybackClock) {
        guard let engine else { return }
        engine.withLock {
            sequenceTracks = sequenceTracks.filter { $0.clock !== clock } + schedules
            pushSequenceTracks(engine)
        }
    }

    /// Removes the schedules of `clock`'s sequence.
    func detachSequence(clock: MIDIPlaybackClock) {
        guard let engine else { return }
        engine.withLock {
            sequenceTracks = sequenceTracks.filter { $0.clock !== clock }
            pushSequenceTracks(engine)
        }
    }

    /// Hands the schedules to `node`, a graph node just made for this one (from its
    /// `didMakeGraphNode`: a rebuilt graph keeps playing the sequences).
    func handSequenceTracks(to node: GraphNode) {
        guard !sequenceTracks.isEmpty else { return }
        try? node.setProperty(MIDISequenceSources.propertyName, MIDISequenceSources(tracks: sequenceTracks))
    }

    /// Hands the schedules to the graph node (applied at the next slice). Under the lock.
    private func pushSequenceTracks(_ engine: AudioEngine) {
        guard let gn = graphNode else { return }
        do throws(AudioGraphError) {
            try gn.setProperty(MIDISequenceSources.propertyName, MIDISequenceSources(tracks: sequenceTracks))
            if let graph = engine.graph, engine.changeDepth == 0 { try engine.commit(graph) }
        } catch {
            engine.recordEditFault(.graph(call: "AudioSequencer", error))
        }
    }
}
