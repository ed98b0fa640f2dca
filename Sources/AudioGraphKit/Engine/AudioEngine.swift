// The engine API's engine: AVAudioEngine's calls over the AUGraph-style AudioGraph.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

/// An audio engine (cf. AVAudioEngine): attach nodes, connect them, `start()`, and audio plays
/// through PulseAudio; or enable manual rendering and pull it yourself.
///
/// The engine keeps a model of its nodes and connections. `prepare()` (or `start()`) builds an
/// ``AudioGraph`` from it: one ``GraphNode`` for each attached node, formats propagated from the
/// sources towards the output, every buffer allocated. While the graph exists, each call that
/// edits the model (attach, connect, disconnect, detach, mixing properties) becomes one
/// pending-change list applied at the next render slice; ``performChanges(_:)`` applies
/// everything its closure does as one list, sample-exactly and validated as a whole.
///
/// Programmer errors (connecting a node that is not attached, a bus that does not exist, a node
/// feeding itself or a cycle) stop the program with one line naming the call, the node and the
/// reason, where Apple's API raises an exception; calls that throw on Apple's platforms throw an
/// ``AudioEngineError``. Runtime conditions never stop it: a parameter value out of range is
/// clamped to the node's range (as Audio Units clamp; NaN is ignored), an edit the running graph
/// refuses is undone and counted (``editFaultCount``), a schedule a player cannot take is counted
/// (``AudioPlayerNode/scheduleFaultCount``).
///
/// Thread safety:
///
/// | call | thread | blocks? |
/// |---|---|---|
/// | attach, connect, disconnect, detach, formats, performChanges | any control thread | the engine's lock; an edit while running waits (≤ 1 s) for the render thread to adopt it |
/// | prepare, start, pause, stop, reset | control thread | allocates; `start` connects to PulseAudio |
/// | renderOffline | the thread that drives manual rendering | no |
/// | manualRenderingBlock | the application's real-time thread | never: real-time safe |
/// | mixing properties (volume, pan, position, …) and unit parameters | any thread | the engine's lock, which an edit on a running engine holds up to 1 s; the render thread never waits (values reach it lock-free) |
public final class AudioEngine: @unchecked Sendable {
    /// The format used when no device can be asked (no PulseAudio server): 48 kHz stereo.
    static let fallbackFormat = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!

    // MARK: Control threads only (guarded by `lock`)
    let lock = NSRecursiveLock()
    var attached: [AudioNode] = []
    var connections: [EngineConnection] = []
    /// Output buses feeding parameters (``connect(_:to:fromBus:)``, audio into parameters).
    var parameterConnections: [EngineParameterConnection] = []
    var kindCounters: [String: Int] = [:]
    var outputNodeStorage: AudioOutputNode?
    var mainMixerStorage: AudioMixerNode?
    var inputNodeStorage: AudioInputNode?
    /// The graph while prepared or running.
    var graph: AudioGraph?
    /// Depth of `performChanges` calls (edits apply when the outermost one returns).
    var changeDepth = 0
    /// Parameter changes made inside `performChanges`, applied with its list.
    var pendingParameters: [PendingChange] = []
    var running = false
    var manualMode: AudioEngineManualRenderingMode?
    var manualFormat: AudioFormat?
    var manualMaximumFrames: AudioFrameCount = 4096
    /// Threads that render each slice in `.offline` manual mode (see `manualRenderingThreadCount`).
    var manualThreads = 1
    /// The live session while started with PulseAudio.
    var live: LiveSession?
    /// The device formats asked of PulseAudio (once per engine).
    var deviceFormats: (output: AudioFormat, input: AudioFormat)?
    /// Manual rendering's state (sample time, conversion scratch).
    var manualState: ManualRenderState?
    /// Edits the running graph refused (see ``editFaultCount``).
    var editFaults: (count: Int, last: AudioEngineError?) = (0, nil)
    /// The nodes of a loaded graph file by their ids there (`init(contentsOf:)`).
    var namedNodes: [String: AudioNode] = [:]
    /// Voice processing on the I/O nodes (``AudioIONode/setVoiceProcessingEnabled(_:)``).
    let voiceProcessing = VoiceProcessingSettings()

    /// Makes an engine with nothing attached (the output node exists once asked for or started).
    public init() {}

    deinit {
        stop()
    }

    // MARK: Nodes

    /// The nodes attached to the engine (the implicit ones once they exist).
    public var attachedNodes: Set<AudioNode> {
        withLock { Set(attached) }
    }

    /// Attaches `node` (a node may belong to one engine). Attaching it again does nothing.
    public func attach(_ node: AudioNode) {
        withLock {
            let snapshot = Snapshot(self)
            if node.engine === self { return }
            if let other = node.engine, other !== self {
                engineProgrammerError("attach(_:)", node, "the node is attached to another engine")
            }
            register(node)
            applyEdit("attach(_:)", undo: snapshot)
        }
    }

    /// Detaches `node`, breaking its connections first. Detaching a node that is not attached
    /// is a programmer error.
    public func detach(_ node: AudioNode) {
        withLock {
            let snapshot = Snapshot(self)
            requireAttached(node, "detach(_:)")
            if node === outputNodeStorage || node === mainMixerStorage || node === inputNodeStorage {
                // Apple's implicit nodes can be detached only by breaking their connections.
                connections.removeAll { $0.source === node || $0.destination === node }
                applyEdit("detach(_:)", undo: snapshot)
                return
            }
            connections.removeAll { $0.source === node || $0.destination === node }
            parameterConnections.removeAll { $0.source === node || $0.parameter.node === node }
            attached.removeAll { $0 === node }
            applyEdit("detach(_:)", undo: snapshot)
            guard !attached.contains(where: { $0 === node }) else { return }  // refused: undone
            for (_, tap) in node.taps { tap.liveTap = nil }
            node.engine = nil
            node.graphNode = nil
        }
    }

    /// The engine's output node (created on first access; always there once the engine runs).
    public var outputNode: AudioOutputNode {
        withLock {
            if let n = outputNodeStorage { return n }
            let n = AudioOutputNode()
            outputNodeStorage = n
            register(n, id: "output")
            applyEdit("outputNode")
            return n
        }
    }

    /// The engine's main mixer (created on first access and connected to the output node).
    public var mainMixerNode: AudioMixerNode {
        withLock {
            if let n = mainMixerStorage { return n }
            let output = outputNode
            let n = AudioMixerNode()
            mainMixerStorage = n
            register(n, id: "mainMixer")
            connections.append(EngineConnection(source: n, sourceBus: 0, destination: output, destinationBus: 0))
            applyEdit("mainMixerNode")
            return n
        }
    }

    /// The engine's input node (created on first access): audio captured from PulseAudio's
    /// default source (or the device set with `setDevice(_:)`).
    public var inputNode: AudioInputNode {
        withLock {
            if let n = inputNodeStorage { return n }
            let n = AudioInputNode()
            inputNodeStorage = n
            register(n, id: "input")
            applyEdit("inputNode")
            return n
        }
    }

    // MARK: Connections

    /// Connects `node1`'s output bus 0 to `node2`'s input bus 0 — or, when `node2` is a mixer
    /// (an `AudioMixerNode` or an `AudioEnvironmentNode`, a mixer in Apple's class hierarchy), to
    /// its `nextAvailableInputBus`. `format` nil: the source bus's current format.
    public func connect(_ node1: AudioNode, to node2: AudioNode, format: AudioFormat?) {
        withLock {
            let bus = (node2 as? AudioMixerNode)?.nextAvailableInputBus
                ?? (node2 as? AudioEnvironmentNode)?.nextAvailableInputBus ?? 0
            connect(node1, to: node2, fromBus: 0, toBus: bus, format: format)
        }
    }

    /// Connects `node1`'s output bus `bus1` to `node2`'s input bus `bus2`, one to one: whatever
    /// fed `bus2` and whatever `bus1` fed before are disconnected. `format` sets the format of
    /// the source bus (nil: its current one).
    public func connect(_ node1: AudioNode, to node2: AudioNode, fromBus bus1: AudioNodeBus, toBus bus2: AudioNodeBus,
                        format: AudioFormat?) {
        withLock {
            let snapshot = Snapshot(self)
            let call = "connect(_:to:fromBus:toBus:format:)"
            // One to one: what fed bus2 and what bus1 fed are replaced (checked without them).
            let replaced = { (c: EngineConnection) in (c.destination === node2 && c.destinationBus == bus2)
                || (c.source === node1 && c.sourceBus == bus1) }
            requireConnectable(node1, bus1, to: node2, bus2, call, in: structure(excluding: replaced))
            connections.removeAll(where: replaced)
            if let format { node1.connectionFormats[bus1] = format }
            connections.append(EngineConnection(source: node1, sourceBus: bus1, destination: node2, destinationBus: bus2))
            applyEdit(call, undo: snapshot)
        }
    }

    /// Connects `sourceNode`'s bus `sourceBus` to every point in `destNodes` (fan-out: the
    /// source renders once per slice for all). Connections of that source bus to nodes not
    /// listed are broken; what fed each destination bus before is disconnected.
    public func connect(_ sourceNode: AudioNode, to destNodes: [AudioConnectionPoint], fromBus sourceBus: AudioNodeBus,
                        format: AudioFormat?) {
        withLock {
            let snapshot = Snapshot(self)
            let call = "connect(_:to:fromBus:format:)"
            let points: [(AudioNode, Int)] = destNodes.compactMap { p in p.node.map { ($0, p.bus) } }
            let replaced = { (c: EngineConnection) in
                (c.source === sourceNode && c.sourceBus == sourceBus)
                    || points.contains { $0.0 === c.destination && $0.1 == c.destinationBus }
            }
            let rules = structure(excluding: replaced)
            if points.isEmpty {
                requireAttached(sourceNode, call)
                sourceNode.checkBus(sourceBus, count: sourceNode.numberOfOutputs, call, scope: "output")
            }
            for (n, b) in points { requireConnectable(sourceNode, sourceBus, to: n, b, call, in: rules) }
            connections.removeAll(where: replaced)
            if let format { sourceNode.connectionFormats[sourceBus] = format }
            for (n, b) in points {
                connections.append(EngineConnection(source: sourceNode, sourceBus: sourceBus, destination: n, destinationBus: b))
            }
            applyEdit(call, undo: snapshot)
        }
    }

    /// Disconnects every input bus of `node`.
    public func disconnectNodeInput(_ node: AudioNode) {
        disconnect(node, .input, bus: nil, "disconnectNodeInput(_:)")
    }

    /// Disconnects input bus `bus` of `node`.
    public func disconnectNodeInput(_ node: AudioNode, bus: AudioNodeBus) {
        disconnect(node, .input, bus: bus, "disconnectNodeInput(_:bus:)")
    }

    /// Disconnects every output bus of `node`.
    public func disconnectNodeOutput(_ node: AudioNode) {
        disconnect(node, .output, bus: nil, "disconnectNodeOutput(_:)")
    }

    /// Disconnects output bus `bus` of `node` (from every destination it feeds).
    public func disconnectNodeOutput(_ node: AudioNode, bus: AudioNodeBus) {
        disconnect(node, .output, bus: bus, "disconnectNodeOutput(_:bus:)")
    }

    /// Which side of a node a disconnect call names.
    private enum ConnectionSide: String {
        case input, output
    }

    /// The disconnect calls' one edit: removes the connections into (`.input`) or out of
    /// (`.output`) `node`, at `bus` (checked to exist) or at every bus when nil.
    private func disconnect(_ node: AudioNode, _ side: ConnectionSide, bus: AudioNodeBus?, _ call: String) {
        withLock {
            let snapshot = Snapshot(self)
            requireAttached(node, call)
            if let bus {
                node.checkBus(bus, count: side == .input ? node.numberOfInputs : node.numberOfOutputs, call, scope: side.rawValue)
            }
            connections.removeAll { c in
                switch side {
                case .input: c.destination === node && (bus == nil || c.destinationBus == bus)
                case .output: c.source === node && (bus == nil || c.sourceBus == bus)
                }
            }
            applyEdit(call, undo: snapshot)
        }
    }

    /// What feeds input bus `inputBus` of `node` (nil: nothing).
    public func inputConnectionPoint(for node: AudioNode, inputBus: AudioNodeBus) -> AudioConnectionPoint? {
        withLock {
            connections.first { $0.destination === node && $0.destinationBus == inputBus }
                .map { AudioConnectionPoint(node: $0.source, bus: $0.sourceBus) }
        }
    }

    /// Where output bus `outputBus` of `node` goes (empty: nowhere).
    public func outputConnectionPoints(for node: AudioNode, outputBus: AudioNodeBus) -> [AudioConnectionPoint] {
        withLock {
            connections.filter { $0.source === node && $0.sourceBus == outputBus }
                .map { AudioConnectionPoint(node: $0.destination, bus: $0.destinationBus) }
        }
    }

    // MARK: Changes as one list

    /// Runs `changes` and applies every edit it makes (attach, connect, disconnect, detach,
    /// mixing properties, parameters) as one pending-change list: while the engine runs they
    /// take effect together at one slice boundary, sample-exactly; validated as a whole, so if
    /// anything is invalid nothing is applied, the engine's model is restored and the error is
    /// thrown (a Linux addition; on Apple's platforms each call applies on its own).
    public func performChanges(_ changes: () throws -> Void) throws {
        try withLock { () throws in
            let snapshot = Snapshot(self)
            changeDepth += 1
            do {
                try changes()
            } catch {
                changeDepth -= 1
                if changeDepth == 0 { snapshot.restore(self); pendingParameters = [] }
                throw error
            }
            changeDepth -= 1
            guard changeDepth == 0 else { return }
            do throws(AudioGraphError) {
                try reconcileGraph()
            } catch {
                snapshot.restore(self)
                pendingParameters = []
                throw AudioEngineError.graph(call: "performChanges(_:)", error)
            }
        }
    }

    // MARK: Internals

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func register(_ node: AudioNode, id: String? = nil) {
        node.engine = self
        if let id {
            node.graphID = id
        } else {
            let n = (kindCounters[node.kindName] ?? 0) + 1
            kindCounters[node.kindName] = n
            node.graphID = "\(node.kindName)\(n)"
        }
        attached.append(node)
    }

    /// The model as the graph's structural rules see it (``GraphStructure``, the rules every
    /// front door shares): the attached nodes, keyed by identity, with their bus counts, and the
    /// model's connections except those `replaced` (what a one-to-one connect breaks first).
    func structure(excluding replaced: (EngineConnection) -> Bool = { _ in false }) -> GraphStructure {
        var rules = GraphStructure()
        for n in attached where n.engine === self {
            rules.commit(.addNode(NodeShape(id: Self.ruleID(n), inputBusCount: n.maximumInputBuses,
                                            outputBusCount: n.numberOfOutputs, isOutput: false)))
        }
        for c in connections where !replaced(c) {
            rules.commit(.connect(source: BusPoint(node: Self.ruleID(c.source), bus: c.sourceBus),
                                  destination: BusPoint(node: Self.ruleID(c.destination), bus: c.destinationBus)))
        }
        // Audio into parameters: the cycle rule follows them too.
        for c in parameterConnections where c.source.engine === self && c.parameter.node.engine === self {
            rules.addParameterEdge(from: Self.ruleID(c.source), to: Self.ruleID(c.parameter.node))
        }
        return rules
    }

    /// A node's key in ``structure(excluding:)``: its identity (two engines' nodes never match).
    static func ruleID(_ node: AudioNode) -> String { String(UInt(bitPattern: ObjectIdentifier(node).hashValue)) }

    /// Stops the program with the engine API's one-line message (as Apple's raises) when
    /// connecting `source`'s bus `sourceBus` to `destination`'s bus `destinationBus` breaks one of
    /// the graph's structural rules in `rules`: a node not attached, a bus that does not exist, a
    /// cycle (a node feeding itself included).
    func requireConnectable(_ source: AudioNode, _ sourceBus: Int, to destination: AudioNode, _ destinationBus: Int,
                            _ call: String, in rules: GraphStructure) {
        let edit = StructuralEdit.connect(source: BusPoint(node: Self.ruleID(source), bus: sourceBus),
                                          destination: BusPoint(node: Self.ruleID(destination), bus: destinationBus))
        for (site, error) in rules.problems(edit) {
            let node = site == .source ? source : destination
            switch error {
            case .nodeNotFound:
                engineProgrammerError(call, node, "the node is not attached to this engine")
            case let .busOutOfRange(_, scope, bus, count):
                engineProgrammerError(call, node, "\(scope == .output ? "output" : "input") bus \(bus) does not exist (the node has \(count))")
            case .cycle:
                if source === destination { engineProgrammerError(call, source, "a node cannot feed itself") }
                engineProgrammerError(call, destination, "connecting \(source) to it would make a cycle")
            default:
                // A taken input cannot happen: what fed it was replaced.
                break
            }
        }
    }

    func requireAttached(_ node: AudioNode, _ call: String) {
        guard node.engine === self, attached.contains(where: { $0 === node }) else {
            engineProgrammerError(call, node, "the node is not attached to this engine")
        }
    }

    /// Applies an edit of the model to the graph (if there is one): at once, or with the
    /// enclosing `performChanges` list. An edit the graph refuses (a format a running node cannot
    /// change to, a rebuild that failed) is a runtime condition, not a programmer error: the model
    /// goes back to `snapshot` (taken before the edit; nil for edits that cannot be undone here),
    /// the graph plays on as it was, and the refusal is counted (``editFaultCount``).
    func applyEdit(_ call: String, undo snapshot: Snapshot? = nil) {
        guard changeDepth == 0 else { return }
        do throws(AudioGraphError) {
            try reconcileGraph()
        } catch {
            snapshot?.restore(self)
            recordEditFault(.graph(call: call, error))
        }
    }

    /// Counts an edit the running graph refused and keeps its reason.
    func recordEditFault(_ error: AudioEngineError) {
        withLock {
            editFaults.count += 1
            editFaults.last = error
        }
    }

    /// Edits the graph refused since the engine was made (a Linux addition; on Apple's platforms
    /// such a call raises): a connection whose format a running node cannot take, a node that
    /// could not be rebuilt or reset. The refused edit is undone; the graph plays on as before.
    /// ``performChanges(_:)`` throws instead.
    public var editFaultCount: Int { withLock { editFaults.count } }

    /// The last refused edit (naming the call and the reason), nil if none.
    public var lastEditFault: AudioEngineError? { withLock { editFaults.last } }

    /// A copy of the engine's model, to restore when a `performChanges` list is rejected.
    struct Snapshot {
        let attached: [AudioNode]
        let connections: [EngineConnection]
        let parameterConnections: [EngineParameterConnection]
        let formats: [(AudioNode, [Int: AudioFormat])]
        let engines: [(AudioNode, AudioEngine?)]

        init(_ e: AudioEngine) {
            attached = e.attached
            connections = e.connections
            parameterConnections = e.parameterConnections
            formats = e.attached.map { ($0, $0.connectionFormats) }
            engines = e.attached.map { ($0, $0.engine) }
        }

        func restore(_ e: AudioEngine) {
            for n in e.attached where !attached.contains(where: { $0 === n }) { n.engine = nil }
            e.attached = attached
            e.connections = connections
            e.parameterConnections = parameterConnections
            for (n, f) in formats { n.connectionFormats = f }
            for (n, engine) in engines { n.engine = engine }
        }
    }
}
