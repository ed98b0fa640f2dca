// The graph: nodes, connections, lifecycle, pending changes and the render entry point.
import AudioGraphRealtime
import Synchronization

/// A connection from an output bus to an input bus.
public struct Connection: Hashable, Sendable, CustomStringConvertible {
    public var source: String
    public var sourceBus: Int
    public var destination: String
    public var destinationBus: Int

    public init(source: String, sourceBus: Int = 0, destination: String, destinationBus: Int = 0) {
        self.source = source
        self.sourceBus = sourceBus
        self.destination = destination
        self.destinationBus = destinationBus
    }

    public var description: String { "\(source):\(sourceBus) -> \(destination):\(destinationBus)" }
}

/// A pull-model render graph (cf. AUGraph): nodes joined by connections, pulled by one output node.
///
/// Life cycle: open (add nodes, connect: applied at once) → ``initialize()`` (formats propagate
/// from the sources to the output, every kernel and buffer is allocated, the first render plan
/// is compiled) → ``start()`` → render → ``stop()`` → ``uninitialize()``. Once initialized,
/// structural changes (add/remove/connect/disconnect, and parameter or property changes that
/// must land together with them) are queued on ``pendingChanges`` and applied by ``update(waitUntilApplied:)``:
/// validated as a whole, compiled into a new immutable ``RenderPlan`` off the render thread, and
/// handed over lock-free at the next slice boundary. A render never sees half a list.
///
/// Thread safety:
///
/// | call | thread | blocks? |
/// |---|---|---|
/// | `addNode`, `connect`, `disconnect`, `removeNode`, `enqueue` | any control thread | short mutex (never held by the render thread) |
/// | `initialize`, `uninitialize`, `start`, `stop` | one control thread | allocates; `stop` returns at once |
/// | `update(waitUntilApplied: true)` | control thread | up to 1 s waiting for the render thread to adopt |
/// | `update(waitUntilApplied: false)` | control thread | no waiting |
/// | `render(frameCount:)` | the render thread (one at a time) | never: real-time safe |
/// | `AudioParameter.setValue` | any thread | never blocks the render thread |
public final class AudioGraph: @unchecked Sendable {
    /// The graph's rate: sources without a file, mixers and outputs run at it.
    public let sampleRate: Double
    /// The largest slice a render call asks for; buffers are sized from it.
    public let maximumFramesPerSlice: Int
    /// Changes queued while initialized, applied by ``update(waitUntilApplied:)``.
    public let pendingChanges = PendingChangeList()

    /// Where the graph is in its life cycle.
    public enum State: Int, Sendable { case open, initialized, running }

    // MARK: Control threads only (guarded by `control`; internal for AudioGraph+LiveTaps.swift)
    let control = ControlLock<Void>(())
    var nodesByID: [String: GraphNode] = [:]
    private var nodeOrder: [String] = []
    private var connectionsByInput: [BusKey: BusKey] = [:]
    /// Output buses feeding parameters (see ``ParameterConnection``).
    private var parameterConnectionList: [ParameterConnection] = []
    private var livePlans: [RenderPlan] = []
    private var adapters: [Connection: InputAdapter] = [:]
    private var nextGeneration: UInt64 = 1
    /// Live taps by node, and removed taps not finished yet (see AudioGraph+LiveTaps.swift).
    var liveTapsByNode: [ObjectIdentifier: InstalledTaps] = [:]
    var finishingTaps: [LiveTap] = []
    /// Threads that render (1: serial) and the workers for more (see ``renderThreadCount``).
    private var renderThreads = 1
    private var workerPool: RenderWorkerPool?
    /// Whether the workers start only when a compiled plan has tasks for them (see
    /// ``setRenderThreadCount(_:startingWorkersWhenParallel:)``), rather than with the count.
    private var startsWorkersWhenParallel = false
    /// Whether plans render chains of kernels in series as one (see ``fusesKernelChains``).
    private var fusesChains = true

    // MARK: Shared (atomic)
    private let stateValue = Atomic<Int>(State.open.rawValue)
    /// The newest compiled plan not yet adopted by the render thread (opaque pointer bits, 0: none).
    private let pendingPlan = Atomic<UInt>(0)
    /// The generation of the plan the render thread uses.
    private let adoptedGeneration = Atomic<UInt64>(0)

    // MARK: Render thread only
    private unowned(unsafe) var activePlan: RenderPlan?
    /// The graph frame of the next slice (render thread; read it from the render thread only).
    public private(set) var renderSampleTime: Int64 = 0

    typealias BusKey = BusPoint

    public init(sampleRate: Double = 48000, maximumFramesPerSlice: Int = 512) {
        precondition(sampleRate > 0 && maximumFramesPerSlice > 0)
        self.sampleRate = sampleRate
        self.maximumFramesPerSlice = maximumFramesPerSlice
    }

    deinit {
        let bits = pendingPlan.exchange(0, ordering: .acquiring)
        if bits != 0 { Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    // MARK: State

    /// The current life-cycle state.
    public var state: State { State(rawValue: stateValue.load(ordering: .acquiring))! }
    /// Whether ``initialize()`` has run (changes are queued from then on).
    public var isInitialized: Bool { state != .open }
    /// Whether ``start()`` has run and ``stop()`` has not.
    public var isRunning: Bool { state == .running }

    // MARK: Parallel rendering

    /// Threads that render each slice: 1 (the default) renders serially on the thread that calls
    /// ``render(frameCount:)``; N > 1 adds N - 1 worker threads that render independent branches
    /// of the graph (every input of every mixing node, nested ones included, and fan-out sources,
    /// in phases: see ``ParallelSchedule``) while the render thread renders its own share,
    /// bit-identical to the serial render.
    ///
    /// For offline rendering only: the render call waits for the workers, which a live render
    /// thread must never do; live drivers keep 1. Set it while the graph is not running (open,
    /// or initialized between offline render calls); the current plan is recompiled for it.
    public var renderThreadCount: Int { control.withLock { _ in renderThreads } }

    /// Sets ``renderThreadCount`` (values below 1 mean 1). Throws `invalidState` while running,
    /// `renderThreadsUnavailable` when the worker threads cannot be created (the count is unchanged).
    /// Control thread (the offline render thread, between render calls).
    public func setRenderThreadCount(_ count: Int) throws(AudioGraphError) {
        try setRenderThreadCount(count, startingWorkersWhenParallel: false)
    }

    /// Whether more than one render thread could do anything for the graph as it is now: a node
    /// fed by several connections (a join) or feeding several inputs (a fan-out) — the split
    /// points of ``ParallelSchedule`` — or a kernel that splits its own work
    /// (``NodeKernel/usesRenderThreads``). False for a chain of plain kernels, which renders the
    /// same way whatever the count. Control thread; kernels are looked at once initialized.
    package var hasWorkForSeveralRenderThreads: Bool {
        control.withLock { _ in
            var feeds: [String: Int] = [:], fed: [String: Int] = [:]
            for (input, source) in connectionsByInput {
                feeds[source.node, default: 0] += 1
                fed[input.node, default: 0] += 1
            }
            if feeds.values.contains(where: { $0 > 1 }) || fed.values.contains(where: { $0 > 1 }) { return true }
            return nodeOrder.contains { nodesByID[$0]?.kernel?.usesRenderThreads ?? false }
        }
    }

    /// Sets ``renderThreadCount``; with `startingWorkersWhenParallel` the worker threads start
    /// only when a compiled plan has independent branches for them (``ParallelSchedule``), at
    /// that compile — a chain renders serially and starts none, while every kernel is still told
    /// the count (``NodeKernel/renderThreadCountDidChange(_:)``: a kernel may split its own
    /// work). Workers that cannot be started then leave the plan serial (the same bits) rather
    /// than throwing. The offline renderer's rule. Control thread, the graph stopped.
    package func setRenderThreadCount(_ count: Int, startingWorkersWhenParallel onDemand: Bool) throws(AudioGraphError) {
        let count = max(1, count)
        try control.withLock { _ throws(AudioGraphError) in
            guard state != .running else { throw .invalidState("set the render thread count while the graph is stopped") }
            guard count != renderThreads || onDemand != startsWorkersWhenParallel else { return }
            let pool = count > 1 && !onDemand ? try RenderWorkerPool(threadCount: count) : nil
            startsWorkersWhenParallel = onDemand
            // One thread either way: no worker, nothing to tell the kernels or recompile.
            guard count > 1 || renderThreads > 1 else { return }
            let changed = count != renderThreads
            renderThreads = count
            workerPool = pool
            if changed { for id in nodeOrder { nodesByID[id]?.kernel?.renderThreadCountDidChange(count) } }
            if state == .initialized { publishCommands([]) }
        }
    }

    // MARK: Fused chains

    /// Whether render plans render a chain of kernels in series as one call (true, the default):
    /// e.g. eq nodes one after the other, each read only by the next, filter as one cascade of
    /// all their sections (see ``FusedKernelChain``). The output is bit-identical either way;
    /// false renders every node on its own (tests compare the two). Control thread.
    package var fusesKernelChains: Bool { control.withLock { _ in fusesChains } }

    /// Sets ``fusesKernelChains``; once initialized the current plan is recompiled (taking effect
    /// at the next slice boundary, running or not). Control thread.
    package func setFusesKernelChains(_ fuses: Bool) {
        control.withLock { _ in
            guard fuses != fusesChains else { return }
            fusesChains = fuses
            if state != .open { publishCommands([]) }
        }
    }

    /// The newest plan's fused chains (node ids, first to last).
    package var testOnly_fusedChains: [[String]] {
        control.withLock { _ in
            guard let p = livePlans.last else { return [] }
            return p.fusedChainEntries.map { $0.map { p.entries[$0].kernel.nodeID } }
        }
    }

    /// Whether the graph's render worker threads are started (tests).
    var testOnly_hasRenderWorkers: Bool { control.withLock { _ in workerPool != nil } }

    /// The newest plan's parallel tasks by thread, phases concatenated (node ids of the task
    /// roots; empty: serial), and the groups the current workers have rendered so far.
    var testOnly_parallelGroups: (groups: [[String]], workerRenderedGroups: Int) {
        control.withLock { _ in
            guard let p = livePlans.last else { return ([], 0) }
            return (p.schedule.groups.map { $0.map { p.entries[$0].kernel.nodeID } }, workerPool?.renderedGroupCount ?? 0)
        }
    }

    /// The newest plan's parallel tasks by phase, then by thread (node ids of the task roots).
    var testOnly_parallelPhases: [[[String]]] {
        control.withLock { _ in
            guard let p = livePlans.last else { return [] }
            return p.schedule.phases.map { $0.map { $0.map { p.entries[$0].kernel.nodeID } } }
        }
    }

    // MARK: Inspection (control threads)

    /// The node with this id, or nil.
    public func node(_ id: String) -> GraphNode? { control.withLock { _ in nodesByID[id] } }
    /// Every node, in the order added.
    public var nodes: [GraphNode] { control.withLock { _ in nodeOrder.compactMap { nodesByID[$0] } } }
    /// Every connection, sorted by destination.
    public var connections: [Connection] {
        control.withLock { _ in
            connectionsByInput.map { Connection(source: $0.value.node, sourceBus: $0.value.bus,
                                                destination: $0.key.node, destinationBus: $0.key.bus) }
                .sorted { ($0.destination, $0.destinationBus) < ($1.destination, $1.destinationBus) }
        }
    }
    /// Every connection from an output bus to a parameter, in the order made.
    public var parameterConnections: [ParameterConnection] { control.withLock { _ in parameterConnectionList } }
    /// The output node, if there is exactly one.
    public var outputNode: GraphNode? {
        let outs = nodes.filter(\.isOutputNode)
        return outs.count == 1 ? outs[0] : nil
    }

    // MARK: Editing

    /// Adds a node: at once while open, queued (applied by `update()`) once initialized.
    public func addNode(_ node: GraphNode) throws(AudioGraphError) {
        try edit(.addNode(node))
    }

    /// Removes a node and its connections: at once while open, queued once initialized.
    public func removeNode(_ id: String) throws(AudioGraphError) {
        try edit(.removeNode(id))
    }

    /// Connects `source`'s output bus to `destination`'s input bus: at once while open (cycles
    /// and taken inputs rejected), queued once initialized.
    public func connect(_ source: String, outputBus sourceBus: Int = 0, to destination: String,
                        inputBus destinationBus: Int = 0) throws(AudioGraphError) {
        try edit(.connect(source: source, sourceBus: sourceBus, destination: destination, destinationBus: destinationBus))
    }

    /// Removes the connection into `destination`'s input bus: at once while open, queued once initialized.
    public func disconnect(_ destination: String, inputBus: Int = 0) throws(AudioGraphError) {
        try edit(.disconnect(destination: destination, destinationBus: inputBus))
    }

    /// Connects `source`'s output bus to `destination`'s parameter at `parameter` (Web Audio's
    /// `AudioNode.connect(AudioParam)`): the bus, down-mixed to mono, is added to the parameter's
    /// value per sample (``ParameterConnection``). At once while open (cycles, unknown parameters
    /// and repeated connections rejected), queued once initialized. The source must run at the
    /// destination's rate (checked when formats are resolved).
    public func connect(_ source: String, outputBus sourceBus: Int = 0, to destination: String,
                        parameter: ParameterAddress) throws(AudioGraphError) {
        try edit(.connectParameter(source: source, sourceBus: sourceBus, destination: destination, parameter: parameter))
    }

    /// Removes a connection made by ``connect(_:outputBus:to:parameter:)``: at once while open,
    /// queued once initialized.
    public func disconnect(_ source: String, outputBus sourceBus: Int = 0, from destination: String,
                           parameter: ParameterAddress) throws(AudioGraphError) {
        try edit(.disconnectParameter(source: source, sourceBus: sourceBus, destination: destination, parameter: parameter))
    }

    /// Queues changes to apply together at the next `update()`.
    public func enqueue(_ change: PendingChange) { pendingChanges.append(contentsOf: [change]) }

    /// Queues a list of changes to apply together at the next `update()`.
    public func enqueue(contentsOf changes: [PendingChange]) { pendingChanges.append(contentsOf: changes) }

    /// Applies `change` at once while open, queues it once initialized (also `GraphNode.setProperty`'s path).
    func edit(_ change: PendingChange) throws(AudioGraphError) {
        // The state is checked under the lock: an `initialize()` on another thread cannot slip in
        // between the check and the edit (a node added then would never get a kernel).
        let changedProperty: (GraphNode, String)? = try control.withLock { _ throws(AudioGraphError) -> (GraphNode, String)? in
            if state != .open {
                enqueue(change)
                return nil
            }
            var t = Topology(nodes: nodesByID, order: nodeOrder, connections: connectionsByInput, parameterConnections: parameterConnectionList)
            var changed: (GraphNode, String)?
            switch change {
            case .setParameter(let node, let address, let value, _):
                guard let n = t.nodes[node] else { throw .nodeNotFound(node) }
                guard let p = n.parameter(at: address) else { throw .parameterNotFound(node: node, address: address.description) }
                try p.setValue(value)
            case .setProperty(let node, let name, let value):
                guard let n = t.nodes[node] else { throw .nodeNotFound(node) }
                try n.validateProperty(name, value)
                _ = n.applyProperty(name, value)
                changed = (n, name)
            default:
                try t.apply(change)
            }
            if case .addNode(let n) = change { n.graph = self }
            if case .removeNode(let id) = change { nodesByID[id]?.graph = nil }
            nodesByID = t.nodes
            nodeOrder = t.order
            connectionsByInput = t.connections
            parameterConnectionList = t.parameterConnections
            return changed
        }
        // Listeners run outside the graph lock: one that reads or edits the graph must not deadlock.
        if let (n, name) = changedProperty { n.notifyPropertyChanged(name) }
    }

    // MARK: Life cycle

    /// Propagates formats from the sources to the output, allocates every kernel and buffer, and
    /// compiles the first render plan. Control thread.
    public func initialize() throws(AudioGraphError) {
        try control.withLock { _ throws(AudioGraphError) in
            guard state == .open else { throw .invalidState("the graph is already initialized") }
            let t = Topology(nodes: nodesByID, order: nodeOrder, connections: connectionsByInput, parameterConnections: parameterConnectionList)
            // Initialize = resolve (the graph rules validation runs too) + allocate.
            _ = try resolve(t)
            var allocated: [Connection: InputAdapter]? = [:]
            let resolved = try resolveFormats(t, newAdapters: &allocated)
            let newAdapters = allocated!
            for id in t.order {
                let n = t.nodes[id]!
                n.inputFormats = resolved.inputs[id]!
                n.outputFormats = resolved.outputs[id]!
                n.kernel = try n.makeKernel(maximumFramesPerSlice: maximumFramesPerSlice)
                if renderThreads > 1 { n.kernel!.renderThreadCountDidChange(renderThreads) }
            }
            adapters = newAdapters
            var commands: [PlanCommand] = t.order.map { .start(t.nodes[$0]!.kernel!) }
            commands += newAdapters.map { .startAdapter($0.value, sourceRate: t.nodes[$0.key.source]!.outputFormats[$0.key.sourceBus].sampleRate) }
            commands += liveTapCommandsForNewKernels()
            let plan = compile(t, commands: commands)
            renderSampleTime = 0
            livePlans = [plan]
            adopt(plan)
            stateValue.store(State.initialized.rawValue, ordering: .releasing)
        }
    }

    /// The graph rules without allocating anything for rendering: one output node, no cycle,
    /// and the formats propagated from the sources to the output (rate mismatches, conversions a
    /// node cannot make, formats a node refuses), through the nodes' own
    /// `resolveOutputFormats`. ``initialize()`` runs the same step before it allocates, so a graph
    /// this accepts initializes (memory permitting) and one it refuses fails ``initialize()`` with
    /// the same error. The graph-file validator runs it on the real nodes. Control thread.
    ///
    /// - Returns: every node's bus formats (what reaches each input bus, what each output bus
    ///   produces).
    package func resolve() throws(AudioGraphError) -> ResolvedBusFormats {
        try control.withLock { _ throws(AudioGraphError) -> ResolvedBusFormats in
            try resolve(Topology(nodes: nodesByID, order: nodeOrder, connections: connectionsByInput, parameterConnections: parameterConnectionList))
        }
    }

    private func resolve(_ t: Topology) throws(AudioGraphError) -> ResolvedBusFormats {
        try t.checkOutputCount()
        var none: [Connection: InputAdapter]? = nil
        let formats = try resolveFormats(t, newAdapters: &none)
        try t.checkPullRatios(order: try t.topologicalOrder())
        return formats
    }

    /// The engine's rule for a change list while initialized: a node that keeps running keeps its
    /// output formats (its kernel's buffers were sized for them). Used by `update()` and by the
    /// graph-file validator for a file's updates.
    package static func checkOutputFormatsKept(node id: String, before: [StreamFormat], after: [StreamFormat]) throws(AudioGraphError) {
        guard before != after else { return }
        throw .formatNotSupported(node: id, reason: "its output format would change from "
            + "\(before.map(\.description)) to \(after.map(\.description)) while initialized")
    }

    /// Starts rendering: from now on one render thread may call ``render(frameCount:)``.
    public func start() throws(AudioGraphError) {
        guard state != .open else { throw .invalidState("initialize the graph before starting it") }
        stateValue.store(State.running.rawValue, ordering: .releasing)
    }

    /// Stops rendering. The caller (an output driver) must have stopped calling `render` first.
    public func stop() {
        guard state == .running else { return }
        stateValue.store(State.initialized.rawValue, ordering: .releasing)
        control.withLock { _ in
            // A timed plan not due yet is adopted too: the graph's state already includes it.
            adoptPendingPlan(onlyWhenDue: false)
            retirePlans()
        }
    }

    /// Releases every kernel and plan; the graph is open again (its nodes and connections stay).
    public func uninitialize() {
        stop()
        control.withLock { _ in
            guard state != .open else { return }
            let bits = pendingPlan.exchange(0, ordering: .acquiring)
            if bits != 0 { Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
            activePlan = nil
            livePlans = []
            adapters = [:]
            for n in nodesByID.values { n.kernel = nil }
            stateValue.store(State.open.rawValue, ordering: .releasing)
        }
    }

    // MARK: Pending changes

    /// Applies every queued change as one list: validates all of it first (nothing is applied
    /// if any change is invalid; the list is then discarded and the error thrown), sets up added
    /// nodes, compiles a new render plan off the render thread and hands it over lock-free at the
    /// next slice boundary. Retired plans are released here, on the calling thread.
    ///
    /// - Parameters:
    ///   - waitUntilApplied: when the graph is running, wait (up to 1 s) until the render
    ///     thread has adopted the plan; otherwise return at once (cf. AUGraphUpdate's outIsUpdated).
    ///   - sampleTime: when given and the graph is running, the render thread adopts the plan at
    ///     the first slice boundary at or after this graph frame instead of the next one, so a
    ///     change can be published ahead of its time (sample-exact without a waiting control
    ///     thread). A later `update` before then takes this plan's changes with it: they take
    ///     effect with the later plan, so publish a timed plan only when no other update may
    ///     come before its time (see `hasPendingPlan`).
    /// - Returns: whether the new plan is in use when the call returns.
    @discardableResult
    public func update(waitUntilApplied: Bool = true, atSampleTime sampleTime: Int64? = nil) throws(AudioGraphError) -> Bool {
        let changes = pendingChanges.take()
        if !isInitialized {
            // While open, edits apply at once; a list queued with `enqueue` applies here, in order.
            for change in changes { try edit(change) }
            return true
        }
        let (generation, changedProperties) = try control.withLock {
            _ throws(AudioGraphError) -> (UInt64, [(GraphNode, String)]) in
            guard state != .open else { return (0, []) }
            retirePlans()
            return try applyChanges(changes, activationTime: sampleTime ?? .min)
        }
        // Listeners run outside the graph lock: one that reads or edits the graph must not deadlock.
        for (n, name) in changedProperties { n.notifyPropertyChanged(name) }
        if generation == 0 { return true }
        if adoptedGeneration.load(ordering: .acquiring) >= generation { return true }
        guard waitUntilApplied, isRunning else { return false }
        let deadline = MonotonicClock.nanoseconds() + 1_000_000_000
        while adoptedGeneration.load(ordering: .acquiring) < generation {
            if MonotonicClock.nanoseconds() >= deadline { return false }
            try? await_sleep()
        }
        control.withLock { _ in retirePlans() }
        return true
    }

    /// True while a published plan waits for the render thread (its slice boundary, or its
    /// activation time, has not come yet). Any thread.
    package var hasPendingPlan: Bool { pendingPlan.load(ordering: .acquiring) != 0 }

    /// Releases plans the render thread no longer uses. Control thread.
    package func collectRetiredPlans() { control.withLock { _ in retirePlans() } }

    /// Number of compiled plans still held (the active one, pending ones, not yet retired ones).
    var testOnly_livePlanCount: Int { control.withLock { _ in livePlans.count } }

    // Called with `control` held. Returns the new plan's generation and the properties changed
    // (their listeners are called by the caller, after it releases `control`).
    private func applyChanges(_ changes: [PendingChange], activationTime: Int64) throws(AudioGraphError) -> (UInt64, [(GraphNode, String)]) {
        var t = Topology(nodes: nodesByID, order: nodeOrder, connections: connectionsByInput, parameterConnections: parameterConnectionList)
        var added: [GraphNode] = []
        var parameterSets: [(GraphNode, Int, Double, Double)] = []
        var propertySets: [(GraphNode, String, any Sendable)] = []
        for change in changes {
            switch change {
            case .addNode(let n):
                try t.apply(change)
                added.append(n)
            case let .setParameter(node, address, value, ramp):
                guard let n = t.nodes[node] else { throw .nodeNotFound(node) }
                // Found by the node's address index (a dictionary), not by a scan of names.
                guard let index = n.parameterIndex(of: address) else {
                    throw .parameterNotFound(node: node, address: address.description)
                }
                let p = n.parameters[index]
                guard p.info.contains(value) else {
                    throw .parameterOutOfRange(node: node, address: address.description, value: value, range: p.info.rangeDescription)
                }
                guard ramp >= 0, ramp.isFinite else {
                    throw .parameterOutOfRange(node: node, address: address.description + " rampDuration", value: ramp, range: "0...")
                }
                parameterSets.append((n, index, value, ramp))
            case let .setProperty(node, name, value):
                guard let n = t.nodes[node] else { throw .nodeNotFound(node) }
                try n.validateProperty(name, value)
                propertySets.append((n, name, value))
            default:
                try t.apply(change)
            }
        }
        // Nodes removed later in the same list take their parameter changes with them.
        added = added.filter { t.nodes[$0.id] === $0 }
        parameterSets = parameterSets.filter { t.nodes[$0.0.id] === $0.0 }
        propertySets = propertySets.filter { t.nodes[$0.0.id] === $0.0 }
        try t.checkOutputCount()
        var newAdapters: [Connection: InputAdapter]? = [:]
        let resolved = try resolveFormats(t, newAdapters: &newAdapters)
        for id in t.order {
            let n = t.nodes[id]!
            if n.kernel != nil && !added.contains(where: { $0 === n }) {
                try Self.checkOutputFormatsKept(node: id, before: n.outputFormats, after: resolved.outputs[id]!)
            }
        }
        var newKernels: [NodeKernel] = []
        for n in added {
            n.inputFormats = resolved.inputs[n.id]!
            n.outputFormats = resolved.outputs[n.id]!
            let k = try n.makeKernel(maximumFramesPerSlice: maximumFramesPerSlice)
            newKernels.append(k)
        }

        // Everything is valid: commit.
        for (n, k) in zip(added, newKernels) {
            n.kernel = k
            n.graph = self
            if renderThreads > 1 { k.renderThreadCountDidChange(renderThreads) }
        }
        for id in nodeOrder where t.nodes[id] == nil { nodesByID[id]?.graph = nil }
        for id in t.order { t.nodes[id]!.inputFormats = resolved.inputs[id]! }
        nodesByID = t.nodes
        nodeOrder = t.order
        connectionsByInput = t.connections
        parameterConnectionList = t.parameterConnections

        // A plan published but not adopted yet is taken back: its commands run with this one.
        var commands: [PlanCommand] = takeBackUnadoptedPlan()?.commands ?? []
        commands += liveTapCommandsForRemovedNodes()
        commands += newKernels.map { .start($0) }
        for (key, a) in newAdapters! where adapters[key] == nil {
            commands.append(.startAdapter(a, sourceRate: t.nodes[key.source]!.outputFormats[key.sourceBus].sampleRate))
        }
        adapters = newAdapters!
        for (n, index, value, ramp) in parameterSets {
            let rate = n.processingRate
            n.parameters[index].recordListValue(value)
            commands.append(.setParameter(n.kernel!, index: index, value: value, rampFrames: FrameCount.int(ramp * rate)))
        }
        for (n, name, value) in propertySets {
            if let m = n.applyProperty(name, value), let k = n.kernel { commands.append(.message(k, m)) }
        }
        let plan = compile(t, commands: commands, activationTime: activationTime)
        publish(plan)
        return (plan.generation, propertySets.map { ($0.0, $0.1) })
    }

    /// Publishes a plan of the current topology that runs `commands` (live tap changes) on
    /// adoption — `update()` without a change list. A plan published but not adopted yet is taken
    /// back and its commands run first, at its activation time: a timed plan is never made early
    /// (the new commands wait with it). Called with `control` held, while initialized.
    func publishCommands(_ commands: [PlanCommand]) {
        retirePlans()
        var all: [PlanCommand] = []
        var activationTime = Int64.min
        if let unadopted = takeBackUnadoptedPlan() {
            all = unadopted.commands
            activationTime = unadopted.activationTime
        }
        all += commands
        publish(compile(Topology(nodes: nodesByID, order: nodeOrder, connections: connectionsByInput, parameterConnections: parameterConnectionList),
                        commands: all, activationTime: activationTime))
    }

    // Called with `control` held.
    private func takeBackUnadoptedPlan() -> (commands: [PlanCommand], activationTime: Int64)? {
        let old = pendingPlan.load(ordering: .acquiring)
        guard old != 0, pendingPlan.compareExchange(expected: old, desired: 0, ordering: .acquiringAndReleasing).exchanged else {
            return nil
        }
        let unadopted = Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: old)!)
        defer { unadopted.release() }
        let plan = unadopted.takeUnretainedValue()
        return (plan.commands, plan.activationTime)
    }

    // Called with `control` held: hands `plan` to the render thread, or adopts it here when the
    // graph is not running.
    private func publish(_ plan: RenderPlan) {
        livePlans.append(plan)
        if isRunning {
            pendingPlan.store(UInt(bitPattern: Unmanaged.passRetained(plan).toOpaque()), ordering: .releasing)
        } else {
            adopt(plan)
            retirePlans()
        }
    }

    // MARK: Rendering (render thread)

    /// Renders one slice of `frameCount` frames and returns what reaches the output node's input
    /// (`frameCount` valid frames), or nil when nothing is connected to it. Nodes that are pulled
    /// every slice (``GraphNode/isPulledEverySlice``: sinks, capture) render too, after the output.
    /// Asking for more than ``maximumFramesPerSlice`` frames is a programmer error and stops the
    /// program with one line (the buffers are sized for that maximum). Adopts a
    /// newly published plan first (the slice boundary is where change lists take effect), then
    /// advances ``renderSampleTime``.
    ///
    /// Real-time safe: allocates nothing, takes no lock, never waits. One render thread at a time.
    public func render(frameCount: Int) -> InputBuffer? {
        // A programmer error, like asking an Audio Unit for more than kAudioUnitProperty_MaximumFramesPerSlice:
        // never a silent truncation.
        precondition(frameCount <= maximumFramesPerSlice,
                     "AudioGraph.render(frameCount:): \(frameCount) frames exceeds maximumFramesPerSlice \(maximumFramesPerSlice)")
        adoptPendingPlan()
        guard let plan = activePlan, frameCount > 0 else { return nil }
        let context = RenderContext(sampleTime: renderSampleTime, frameCount: frameCount, sampleRate: sampleRate)
        let e = plan.entries[plan.outputEntry]
        plan.renderParallelUnits(context)
        let result = e.inputCount > 0 ? plan.pullInput(e.firstInput, context) : nil
        if plan.pulledEntryCount > 0 { plan.renderPulledEntries(context) }
        renderSampleTime += Int64(frameCount)
        return result
    }

    @inline(__always)
    private func adoptPendingPlan(onlyWhenDue: Bool = true) {
        let bits = pendingPlan.load(ordering: .acquiring)
        guard bits != 0 else { return }
        // The plan stays alive while we look at it: the control side frees a plan (even one it
        // took back) only after the render thread has adopted a newer one, which is later than
        // this call.
        let u = Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        if onlyWhenDue && u._withUnsafeGuaranteedRef({ $0.activationTime > renderSampleTime }) { return }
        // Not due before this boundary: leave it. Due: take it, unless the control side took it
        // back (or replaced it) meanwhile — then the newer plan is looked at next slice.
        guard pendingPlan.compareExchange(expected: bits, desired: 0, ordering: .acquiring).exchanged else { return }
        // The control side keeps its own reference in `livePlans`; drop the hand-off's one
        // without releasing memory here (the +1 taken at publication balances this release,
        // and livePlans still holds the plan).
        adopt(u.takeUnretainedValue())
        u.release()
    }

    private func adopt(_ plan: RenderPlan) {
        activePlan = plan
        plan.runCommands(atSampleTime: renderSampleTime, graphRate: sampleRate)
        adoptedGeneration.store(plan.generation, ordering: .releasing)
    }

    // Called with `control` held.
    private func retirePlans() {
        let adopted = adoptedGeneration.load(ordering: .acquiring)
        livePlans.removeAll { $0.generation < adopted }
    }

    // MARK: Compilation (control thread, `control` held)

    private func compile(_ t: Topology, commands: [PlanCommand], activationTime: Int64 = .min) -> RenderPlan {
        var index: [String: Int] = [:]
        for (i, id) in t.order.enumerated() { index[id] = i }
        let kernels = t.order.map { t.nodes[$0]!.kernel! }
        var inputs: [[(source: Int, bus: Int, adapter: InputAdapter?)]] = []
        for id in t.order {
            let n = t.nodes[id]!
            inputs.append((0..<n.inputBusCount).map { bus in
                guard let src = t.connections[BusKey(node: id, bus: bus)] else { return (-1, 0, nil) }
                let key = Connection(source: src.node, sourceBus: src.bus, destination: id, destinationBus: bus)
                return (index[src.node]!, src.bus, adapters[key])
            })
        }
        let output = t.order.firstIndex { t.nodes[$0]!.isOutputNode } ?? 0
        let pulled = t.order.indices.filter { t.nodes[t.order[$0]]!.isPulledEverySlice }
        // Per entry, the parameters fed by other nodes' outputs, grouped by parameter index.
        var modulations = [[RenderPlan.ParameterInput]](repeating: [], count: t.order.count)
        for c in t.parameterConnections {
            guard let d = index[c.destination], let s = index[c.source],
                  let p = t.nodes[c.destination]!.parameterIndex(of: c.parameter) else { continue }
            modulations[d].append(RenderPlan.ParameterInput(parameter: p, source: s, bus: c.sourceBus))
        }
        for i in modulations.indices { modulations[i].sort { $0.parameter < $1.parameter } }
        defer { nextGeneration += 1 }
        if startsWorkersWhenParallel && workerPool == nil && renderThreads > 1 && t.parameterConnections.isEmpty {
            let schedule = ParallelSchedule.make(inputs: inputs.map { $0.map { ParallelSchedule.Input(source: $0.source, adapted: $0.adapter != nil) } },
                                                 outputEntry: output, concurrent: kernels.map(\.isSafeToRenderConcurrently),
                                                 threadCount: renderThreads)
            // No thread (the system refuses one): this plan renders serially, the same bits.
            if schedule.isParallel { workerPool = try? RenderWorkerPool(threadCount: renderThreads) }
        }
        return RenderPlan(generation: nextGeneration, kernels: kernels, inputs: inputs, outputEntry: output,
                          pulledEntries: pulled, commands: commands, activationTime: activationTime,
                          // Parameter inputs reach across the parallel units: such a graph renders serially.
                          workers: t.parameterConnections.isEmpty ? workerPool : nil, parameterInputs: modulations,
                          fusesChains: fusesChains)
    }

    /// Formats of every bus, from the sources towards the output, with the adapters that
    /// converting inputs need (existing ones reused; none made when `newAdapters` is nil: the
    /// resolve step). Throws on a rate mismatch.
    private func resolveFormats(_ t: Topology, newAdapters: inout [Connection: InputAdapter]?) throws(AudioGraphError) -> ResolvedBusFormats {
        var r = ResolvedBusFormats()
        // The live source (if any) each node's output depends on, through any path: a node
        // that reads ahead cannot read it, whether it is connected directly or through a mixer.
        var liveUpstream: [String: String] = [:]
        for id in try t.topologicalOrder() {
            let n = t.nodes[id]!
            if n.isLiveSource { liveUpstream[id] = id }
            var raw: [StreamFormat?] = []
            var sources: [BusKey?] = []
            for bus in 0..<n.inputBusCount {
                if let src = t.connections[BusKey(node: id, bus: bus)] {
                    raw.append(r.outputs[src.node]![src.bus])
                    sources.append(src)
                    if liveUpstream[id] == nil, let live = liveUpstream[src.node] { liveUpstream[id] = live }
                } else {
                    raw.append(nil)
                    sources.append(nil)
                }
            }
            let rate = n.processingSampleRate(inputFormats: raw, graphSampleRate: sampleRate)
            var seen = raw
            for bus in 0..<n.inputBusCount {
                guard let f = raw[bus], let src = sources[bus] else { continue }
                // A source that also feeds another input (fan-out) is rendered once per slice for
                // all its consumers (renderEntry caches by sample time): reading it on an
                // input's own timeline would make it skip for the others, so it is treated like
                // a live source (an environment keeps such an input at rate 1). Only the direct
                // source is checked, not fan-out further upstream.
                let fannedOut = t.connections.values.lazy.filter { $0.node == src.node }.count > 1
                let sourceIsLive = liveUpstream[src.node] != nil || fannedOut
                guard f.sampleRate != rate || n.pullsInputsOnTheirOwnTimeline
                        || n.adaptsInput(bus: bus, sourceIsLive: sourceIsLive) else { continue }
                if n.pullsInputsOnTheirOwnTimeline, let live = liveUpstream[src.node] {
                    let path = live == src.node ? "" : " through \"\(src.node)\""
                    throw .formatNotSupported(node: id, reason: "it reads its input ahead of the clock; a live input (\"\(live)\"\(path)) cannot be read ahead")
                }
                guard n.convertsInputSampleRates || f.sampleRate == rate else {
                    throw .sampleRateMismatch(source: src.node, sourceRate: f.sampleRate, destination: id, destinationRate: rate)
                }
                guard try n.checkInputAdapter(bus: bus, sourceFormat: f, targetSampleRate: rate) else { continue }
                seen[bus] = StreamFormat.canonical(sampleRate: rate, channelCount: f.channelCount)
                guard newAdapters != nil else { continue }
                let key = Connection(source: src.node, sourceBus: src.bus, destination: id, destinationBus: bus)
                if let existing = adapters[key] {
                    newAdapters![key] = existing
                } else if let a = try n.makeInputAdapter(bus: bus, sourceFormat: f, targetSampleRate: rate,
                                                         maximumFramesPerSlice: maximumFramesPerSlice, sourceIsLive: sourceIsLive) {
                    newAdapters![key] = a
                } else {
                    throw .formatNotSupported(node: id, reason: "made no adapter for input bus \(bus) after accepting it")
                }
            }
            r.inputs[id] = seen
            let outs = try n.resolveOutputFormats(inputFormats: seen, graphSampleRate: sampleRate)
            guard outs.count == n.outputBusCount else {
                throw .formatNotSupported(node: id, reason: "resolved \(outs.count) output formats for \(n.outputBusCount) buses")
            }
            r.outputs[id] = outs
        }
        // A parameter takes its input sample for sample: the source must run at the rate the
        // modulated node counts its parameter frames at.
        for c in t.parameterConnections {
            let sourceRate = r.outputs[c.source]![c.sourceBus].sampleRate
            let d = t.nodes[c.destination]!
            let rate = r.outputs[c.destination]?.first?.sampleRate
                ?? d.processingSampleRate(inputFormats: r.inputs[c.destination] ?? [], graphSampleRate: sampleRate)
            guard sourceRate == rate else {
                throw .sampleRateMismatch(source: c.source, sourceRate: sourceRate, destination: c.destination, destinationRate: rate)
            }
        }
        return r
    }
}

private func await_sleep() throws {
    // A short sleep between polls of the adoption counter (control thread only).
    var ts = timespec(tv_sec: 0, tv_nsec: 500_000)
    nanosleep(&ts, nil)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
