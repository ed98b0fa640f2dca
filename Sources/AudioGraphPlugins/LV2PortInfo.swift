// What one port of an LV2 plugin is: index, symbol, kind, direction and control range.

/// The kind of data an LV2 port carries.
package enum LV2PortKind: String, Sendable, Hashable {
    /// Audio samples (`lv2:AudioPort`): a bus channel.
    case audio
    /// One control value per run (`lv2:ControlPort`): a parameter when it is an input.
    case control
    /// Control-voltage samples (`lv2:CVPort`): connected to silence (inputs) or scratch (outputs).
    case cv
    /// Atom sequences (`atom:AtomPort`): connected to host-owned buffers (``LV2AtomBuffers``:
    /// input sequences carrying the node's MIDI events when the port supports them, empty
    /// otherwise; output sequences with room).
    case atom
    /// Old-style events (`ev:EventPort`): not supported (refused unless optional).
    case event
    /// Anything else: not supported (refused unless optional).
    case other
}

/// One port of an LV2 plugin as its data describes it.
///
/// Thread safety: a value type; safe to share between threads.
package struct LV2PortInfo: Sendable, Hashable {
    /// The port index (`lv2:index`), the number `connect_port` takes.
    package var index: Int
    /// The port symbol (`lv2:symbol`), unique in the plugin: the parameter name of a control input.
    package var symbol: String
    /// The human name (`lv2:name`).
    package var name: String
    /// What the port carries.
    package var kind: LV2PortKind
    /// Whether the plugin reads it (true) or writes it (false).
    package var isInput: Bool
    /// `lv2:minimum`, `lv2:maximum`, `lv2:default` (nil when the plugin does not say).
    package var minimum: Double?
    package var maximum: Double?
    package var defaultValue: Double?
    /// Whether the port has `lv2:connectionOptional` (the host may leave it unconnected).
    package var isOptional: Bool
    /// Whether the port reports the plugin's latency in frames (`lv2:reportsLatency`).
    package var reportsLatency: Bool
    /// Whether the control is a switch (`lv2:toggled`).
    package var isToggled: Bool
    /// Whether the control takes whole numbers only (`lv2:integer`).
    package var isInteger: Bool = false
    /// Whether an atom port takes MIDI events (`atom:supports midi:MidiEvent`): an instrument's
    /// MIDI input, fed from the node's ``LV2Node/midiInput`` and sequences.
    package var supportsMIDI: Bool = false

    /// The value the host writes into this control input for the parameter value `value`:
    /// rounded for an integer port, 0 or 1 (at or above 0.5) for a toggled one, unchanged
    /// otherwise — so a ramp never hands the plugin a fractional step or switch. Real-time safe.
    @inline(__always)
    package func hostValue(_ value: Float) -> Float {
        Self.hostValue(value, toggled: isToggled, integer: isInteger)
    }

    /// ``hostValue(_:)`` for a port with these properties. Real-time safe.
    @inline(__always)
    static func hostValue(_ value: Float, toggled: Bool, integer: Bool) -> Float {
        if toggled { return value >= 0.5 ? 1 : 0 }
        if integer { return value.rounded() }
        return value
    }

    /// The range a control input accepts: the plugin's bounds, or (when it gives none) the
    /// whole finite range of a Float so that any value the plugin may read is allowed.
    package var controlRange: ClosedRange<Double> {
        let low = minimum ?? -Double(Float.greatestFiniteMagnitude)
        let high = maximum ?? Double(Float.greatestFiniteMagnitude)
        return low <= high ? low...high : high...low
    }

    /// The value a control input starts at: the plugin's default, else its minimum clamped into
    /// range, else 0 clamped.
    package var startValue: Double {
        let range = controlRange
        let value = defaultValue ?? minimum ?? 0
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
