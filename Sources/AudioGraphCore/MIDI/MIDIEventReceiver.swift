// What a node that plays MIDI offers: its input port, which the engine API, the sequencer and graph files send to.

/// A graph node that plays MIDI (an instrument: the sampler, an LV2 instrument): events sent
/// to its ``midiInput`` apply at the next slice or at a given frame, and sequences attached
/// with ``MIDISequenceSources`` (through ``GraphNode/setProperty(_:_:)`` with
/// ``MIDISequenceSources/propertyName``) play into it sample-exactly.
///
/// Thread safety: ``midiInput`` may be used from any control thread.
public protocol MIDIEventReceiver: AnyObject, Sendable {
    /// The node's event queue (lives as long as the node; its kernels drain it).
    var midiInput: MIDIInputPort { get }
}

extension MIDIEventReceiver {
    /// Queues `event` for the node: at graph frame `sampleTime`, or at the start of the next
    /// slice when nil (also when the frame has already been rendered). False when the queue is
    /// full (the event is dropped and counted). Any control thread; never blocks on the render thread.
    @discardableResult
    public func send(_ event: MIDIEvent, at sampleTime: Int64? = nil) -> Bool {
        midiInput.send(event, at: sampleTime)
    }
}
