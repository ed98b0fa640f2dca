// One parameter of an engine node as a connection target (Web Audio's AudioParam as the destination of connect).

/// A parameter of an ``AudioNode`` that audio can be connected to (Web Audio's `AudioParam` as
/// the destination of `AudioNode.connect`; a Linux addition): `engine.connect(lfo, to:
/// gain.gainParameter)`. The connected output, down-mixed to mono, is added to the parameter's
/// value per sample and the sum clamped to its range (``ParameterConnection``). Made by the
/// node's named properties (``AudioGainNode/gainParameter``, …) or ``AudioNode/parameter(_:)``
/// with the graph address (`"delayTime"`, `"band.0.frequency"`, `"input.1.pan"`).
///
/// Thread safety: a value; safe to share between threads (the node is the engine's).
public struct AudioNodeParameter: @unchecked Sendable {
    /// The node the parameter belongs to.
    public let node: AudioNode
    /// Its address in the node's parameter table.
    public let address: String
}

/// One output bus feeding a parameter in the engine's model.
struct EngineParameterConnection {
    let source: AudioNode
    let sourceBus: Int
    let parameter: AudioNodeParameter
}

extension AudioNode {
    /// The parameter at `address` (the graph node's address: `"gain"`, `"band.0.frequency"`), as a
    /// destination of ``AudioEngine/connect(_:to:fromBus:)``. The address is checked when the
    /// engine builds its graph (an unknown one is an edit the engine refuses: ``AudioEngine/editFaultCount``).
    public func parameter(_ address: String) -> AudioNodeParameter { AudioNodeParameter(node: self, address: address) }
}

extension AudioEngine {
    /// Connects `node`'s output bus `bus` to `parameter` (Web Audio's `connect(AudioParam)`): its
    /// audio, down-mixed to mono, is added to the parameter's value per sample. Both nodes must
    /// be attached; the source must run at the rate of the parameter's node. Connecting the same
    /// bus to the same parameter again does nothing. While running, the change lands at the next
    /// slice (inside `performChanges` with its list); a connection the graph refuses (a cycle
    /// through parameters, an unknown address, another rate) is undone and counted in
    /// ``editFaultCount``.
    public func connect(_ node: AudioNode, to parameter: AudioNodeParameter, fromBus bus: AudioNodeBus = 0) {
        withLock {
            let snapshot = Snapshot(self)
            let call = "connect(_:to:fromBus:)"
            requireAttached(node, call)
            requireAttached(parameter.node, call)
            node.checkBus(bus, count: node.numberOfOutputs, call, scope: "output")
            if node === parameter.node { engineProgrammerError(call, node, "a node cannot feed its own parameter") }
            if structure().reaches(from: Self.ruleID(parameter.node), to: Self.ruleID(node)) {
                engineProgrammerError(call, parameter.node, "connecting \(node) to its parameter \(parameter.address) would make a cycle")
            }
            guard !parameterConnections.contains(where: { $0.source === node && $0.sourceBus == bus
                && $0.parameter.node === parameter.node && $0.parameter.address == parameter.address }) else { return }
            parameterConnections.append(EngineParameterConnection(source: node, sourceBus: bus, parameter: parameter))
            applyEdit(call, undo: snapshot)
        }
    }

    /// Removes the connection from `node`'s output bus `bus` to `parameter` (none: nothing happens).
    public func disconnect(_ node: AudioNode, from parameter: AudioNodeParameter, fromBus bus: AudioNodeBus = 0) {
        withLock {
            let snapshot = Snapshot(self)
            parameterConnections.removeAll { $0.source === node && $0.sourceBus == bus
                && $0.parameter.node === parameter.node && $0.parameter.address == parameter.address }
            applyEdit("disconnect(_:from:fromBus:)", undo: snapshot)
        }
    }
}
