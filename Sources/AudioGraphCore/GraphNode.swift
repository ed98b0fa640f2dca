// The control-side half of a node: identity, buses, formats, parameters and properties.
import AudioGraphRealtime
import Synchronization

/// A node of an ``AudioGraph`` (cf. an Audio Unit inside an AUGraph): the control-side object
/// an application holds. It describes buses, formats, parameters and properties, and at
/// initialize creates its render-side ``NodeKernel``.
///
/// Subclasses (the stock nodes) override the `open` hooks: ``resolveOutputFormats(inputFormats:graphSampleRate:)``,
/// ``makeKernel(maximumFramesPerSlice:)``, and optionally ``makeInputAdapter(bus:sourceFormat:maximumFramesPerSlice:)``
/// and the property hooks.
///
/// Thread safety: configure a node on one control thread. Parameters may be set from any thread
/// (see ``AudioParameter``). The graph calls the hooks on control threads only.
open class GraphNode: @unchecked Sendable, CustomStringConvertible {
    /// Unique id within the graph (`[A-Za-z0-9_-]+`).
    public let id: String
    /// The node type as graph files name it (`oscillator`, `mixer`, ...).
    public let typeName: String
    /// Number of input buses (elements of the input scope).
    public let inputBusCount: Int
    /// Number of output buses (elements of the output scope).
    public let outputBusCount: Int
    /// Parameters in a fixed order (the kernel's parameter indices follow it).
    public let parameters: [AudioParameter]
    /// The declared format of output bus 0 (fields left nil are filled by propagation).
    public var declaredFormat: PartialStreamFormat
    /// The C libraries opened on first use that this node needs (FFTW for a convolver, ...), set
    /// by the node's initializer: ``AudioGraph/addNode(_:)`` loads them first and refuses the node
    /// with ``AudioGraphError/libraryNotLoadable(node:library:reason:)`` when one cannot be, so its
    /// kernel never reaches a library that is not there.
    package var requiredLibraries: [LazyLibrary] = []

    /// This node as a ``RenderFaultReporting``, or nil: a node class that reports faults sets it to
    /// `self` in its initializer (``RenderFaultReporting/registerRenderFaultReporter()``, cf. `LV2Node`), and the offline renderer asks the nodes through
    /// it rather than by a run-time protocol cast, which searches every conformance record of the
    /// program on each node type's first cast (~0.2 M instructions per type at a command's
    /// start-up). `unowned(unsafe)`: it is the object itself, no reference count.
    public internal(set) unowned(unsafe) var renderFaultReporter: (any RenderFaultReporting)?

    // MARK: Control thread only (set by the graph at initialize / update)
    /// Formats of the input buses after propagation (nil: unconnected).
    public internal(set) var inputFormats: [StreamFormat?]
    /// Formats of the output buses after propagation.
    public internal(set) var outputFormats: [StreamFormat] = []
    /// The render-side kernel, once initialized.
    package internal(set) var kernel: NodeKernel?

    private let parameterIndex: [ParameterAddress: Int]
    private let listeners = ControlLock<[(name: String, callback: @Sendable (GraphNode, String) -> Void)]>([])

    public init(id: String, typeName: String, inputBusCount: Int, outputBusCount: Int,
                parameters: [ParameterInfo], declaredFormat: PartialStreamFormat = PartialStreamFormat()) {
        self.id = id
        self.typeName = typeName
        self.inputBusCount = inputBusCount
        self.outputBusCount = outputBusCount
        self.declaredFormat = declaredFormat
        self.parameters = parameters.map { AudioParameter(info: $0, nodeID: id) }
        var index: [ParameterAddress: Int] = [:]
        for (i, p) in parameters.enumerated() { index[p.address] = i }
        parameterIndex = index
        inputFormats = Array(repeating: nil, count: inputBusCount)
    }

    public var description: String { "\(typeName) \"\(id)\"" }

    // MARK: Parameters

    /// The parameter at an address in the spec's string form (`input.1.pan`), or nil.
    public func parameter(_ address: String) -> AudioParameter? {
        ParameterAddress(address).flatMap(parameter(at:))
    }

    /// The parameter at a structured address, or nil.
    public func parameter(at address: ParameterAddress) -> AudioParameter? {
        parameterIndex[address].map { parameters[$0] }
    }

    /// The parameter addressed by scope, element and name (`.input, 1, "pan"`), or nil.
    public func parameter(scope: Scope, element: Int, name: String) -> AudioParameter? {
        parameter(at: ParameterAddress(scope: scope, element: element, name: name))
    }

    /// Index of a parameter in ``parameters`` (and the kernel's states).
    package func parameterIndex(of address: ParameterAddress) -> Int? { parameterIndex[address] }

    /// Sets a parameter now (from any thread; lock-free for the render thread).
    public func setParameter(_ address: String, _ value: Double, rampFrames: Int = 0) throws(AudioGraphError) {
        guard let p = parameter(address) else { throw .parameterNotFound(node: id, address: address) }
        try p.setValue(value, rampFrames: rampFrames)
    }

    /// Sets a parameter now, ramping linearly over `rampDuration` seconds of the node's rate
    /// (from any thread; lock-free for the render thread). The seconds form matches change lists.
    public func setParameter(_ address: String, _ value: Double, rampDuration: Double) throws(AudioGraphError) {
        guard rampDuration >= 0, rampDuration.isFinite, rampDuration <= 3600 else {
            throw .parameterOutOfRange(node: id, address: address + " rampDuration", value: rampDuration, range: "0...3600")
        }
        try setParameter(address, value, rampFrames: Int((rampDuration * processingRate).rounded()))
    }

    /// The rate the node's parameters count frames at: its output's (or input's) rate once
    /// initialized, else the graph's.
    package var processingRate: Double {
        outputFormats.first?.sampleRate ?? inputFormats.compactMap { $0 }.first?.sampleRate ?? graph?.sampleRate ?? 48000
    }

    /// Sets scheduled values for a parameter. Control thread, before the graph starts.
    public func setAutomation(_ automation: (any ParameterAutomation)?, for address: String) throws(AudioGraphError) {
        guard let p = parameter(address) else { throw .parameterNotFound(node: id, address: address) }
        p.automation = automation
    }

    // MARK: Properties

    /// Adds a callback run (on the thread that changed it) after a property changes. It runs
    /// after the graph has released its lock, so it may read or edit the graph.
    public func addPropertyListener(_ name: String, _ callback: @escaping @Sendable (GraphNode, String) -> Void) {
        listeners.withLock { $0.append((name, callback)) }
    }

    /// Checks a property change without applying it. Override for each property the node has.
    open func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        throw .invalidProperty(node: id, name: name, reason: "no such property")
    }

    /// Applies a validated property change to the control side and returns the message that
    /// brings it to a running kernel (nil when the kernel needs nothing). Override with
    /// ``validateProperty(_:_:)``.
    open func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? { nil }

    /// Validates and applies a property before initialize, or queues it on a running graph's
    /// pending-change list (it takes effect at `update()`).
    public func setProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        try validateProperty(name, value)
        if let graph {
            // The graph decides under its lock: an initialize() racing this call cannot build the
            // kernel from the old value and then miss the new one.
            try graph.edit(.setProperty(node: id, name: name, value: value))
        } else {
            _ = applyProperty(name, value)
            notifyPropertyChanged(name)
        }
    }

    func notifyPropertyChanged(_ name: String) {
        let callbacks = listeners.withLock { $0.filter { $0.name == name }.map(\.callback) }
        for c in callbacks { c(self, name) }
    }

    // MARK: Hooks for subclasses

    /// Whether this is the graph's output node (`output`, `genericOutput`).
    open var isOutputNode: Bool { false }

    /// The memory the node's render state needs beyond its output buffers (a delay line), at
    /// `outputFormat`, and what it is for ("2 s of delay at 48000 Hz × 2 channels"); nil when
    /// it needs none worth checking. The graph-file checker adds it up against ``MemoryBudget``
    /// before anything is allocated.
    open func stateMemoryEstimate(outputFormat: StreamFormat) -> (bytes: Int64, reason: String)? { nil }

    /// For an output that hands audio out of the graph in a format of its own (a generic
    /// output's client format): the fields asked for, filled from the input's format after
    /// resolution (`audiograph inspect` shows the result); nil for other nodes.
    open var requestedClientFormat: PartialStreamFormat? { nil }

    /// Whether the graph renders this node every slice even when the output does not pull it:
    /// a sink (it consumes audio the output never asks for) or a capture node (its audio is
    /// consumed every slice, so taps and sinks see it with nothing connected downstream).
    open var isPulledEverySlice: Bool { false }

    /// Whether inputs at another sample rate are accepted (mixer, environment, converter,
    /// generic output). A node that converts but returns no adapter converts by itself.
    open var convertsInputSampleRates: Bool { false }

    /// Whether the node pulls each input on the input's own timeline, as many frames as it needs
    /// (time stretching, varispeed): the graph then gives every connected input an adapter from
    /// ``makeInputAdapter(bus:sourceFormat:targetSampleRate:maximumFramesPerSlice:)`` even at the
    /// node's own rate, and the kernel pulls it with ``RenderInputs/pull(_:frameCount:)``.
    open var pullsInputsOnTheirOwnTimeline: Bool { false }

    /// The most input frames the node pulls per output frame while rendering with its current
    /// parameter values and automation (a varispeed at rate 4: 4). Chains multiply it: the graph
    /// refuses one whose product from the output exceeds ``AudioGraph/maximumPullRatio``
    /// (``Topology`` checks it in the resolve step that validation and initialize share), since
    /// the render's cost grows with it (8 varispeeds at rate 4 took 448 s for 0.1 s).
    /// Default 1. Control thread.
    open var maximumInputFramesPerOutputFrame: Double { 1 }

    /// Whether the node's output exists only as time passes (live capture): a node that pulls
    /// its inputs on their own timeline cannot read it ahead, and the graph refuses the connection
    /// when it resolves formats.
    open var isLiveSource: Bool { false }

    /// The rate the node processes at: its declared rate, else (if it does not convert) the rate
    /// of its first connected input, else the graph's.
    open func processingSampleRate(inputFormats: [StreamFormat?], graphSampleRate: Double) -> Double {
        if let r = declaredFormat.sampleRate { return r }
        if !convertsInputSampleRates, let first = inputFormats.compactMap({ $0 }).first { return first.sampleRate }
        return graphSampleRate
    }

    /// The output formats given the input formats (inputs at another rate already converted to
    /// ``processingSampleRate(inputFormats:graphSampleRate:)`` where the node converts). Default:
    /// an effect — bus 0 input's format (or the declared one), for every output bus.
    open func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        let base = inputFormats.compactMap { $0 }.first ?? .canonical(sampleRate: rate, channelCount: 2)
        let f = declaredFormat.filled(from: StreamFormat.canonical(sampleRate: rate, channelCount: base.channelCount))
        return Array(repeating: f.canonical, count: outputBusCount)
    }

    /// Creates the render-side kernel with all its buffers (control thread, may allocate).
    open func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        NodeKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: parameters)
    }

    /// For nodes that convert rates: whether input `bus` at `sourceFormat` gets an adapter to
    /// `targetSampleRate` (true: the graph then calls ``makeInputAdapter(bus:sourceFormat:targetSampleRate:maximumFramesPerSlice:)``,
    /// which must not refuse what this accepted). Throws what making the adapter would throw for a
    /// conversion it cannot do. Allocates nothing: ``AudioGraph``'s resolve step (validation)
    /// asks this instead of building adapters. Default: ``pullsInputsOnTheirOwnTimeline`` (such
    /// a node always gets its adapter; any other converts by itself).
    open func checkInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double) throws(AudioGraphError) -> Bool {
        pullsInputsOnTheirOwnTimeline
    }

    /// For nodes that convert rates: an adapter that converts input `bus` from `sourceFormat` to
    /// this node's processing rate. Nil: the node takes the input as it is.
    open func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                               maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? { nil }

    /// Whether input `bus` gets an adapter even at the node's own rate, for a node that reads
    /// some inputs on their own timeline but takes others as the clock gives them (the
    /// environment with `variableRate`: every input but a live one). `sourceIsLive`: the input
    /// depends on a live source (``isLiveSource``, through any path), which cannot be read ahead.
    /// Default false (``pullsInputsOnTheirOwnTimeline`` gives every input an adapter, and a live
    /// one is refused). Control thread.
    open func adaptsInput(bus: Int, sourceIsLive: Bool) -> Bool { false }

    /// ``makeInputAdapter(bus:sourceFormat:targetSampleRate:maximumFramesPerSlice:)`` knowing
    /// whether the input depends on a live source (the graph calls this one). Default: that one.
    open func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                               maximumFramesPerSlice: Int, sourceIsLive: Bool) throws(AudioGraphError) -> InputAdapter? {
        try makeInputAdapter(bus: bus, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                             maximumFramesPerSlice: maximumFramesPerSlice)
    }

    // MARK: Graph membership (control thread)
    weak var graph: AudioGraph?
}
