// The render-side half of a node: its output buffers, parameter states and DSP.

/// The render-side processor of a node (cf. a web-audio-api-rs `AudioProcessor`).
///
/// A kernel is created by its ``GraphNode`` on a control thread at initialize (or in `update()`
/// for a node added while running), with every buffer it will need: one output buffer per output
/// bus sized from `maximumFramesPerSlice`, and a scratch buffer per parameter. From then on only
/// the render thread calls it. Subclasses override ``render(context:inputs:)``.
///
/// Thread safety: after creation, render thread only — except `deinit`, which runs on the
/// control thread that retires the last render plan referring to the kernel.
open class NodeKernel: @unchecked Sendable {
    /// The node's id (for diagnostics; never formatted on the render thread).
    package let nodeID: String
    /// Output buses (each a view of storage this kernel owns).
    package let outputs: UnsafeMutableBufferPointer<ChannelBufferList>
    /// Formats of the output buses.
    package let outputFormats: [StreamFormat]
    /// The largest slice the kernel is asked for.
    package let maximumFramesPerSlice: Int
    /// The node's parameters, in the node's order (indices match ``parameterStates``).
    package let parameters: [AudioParameter]

    // MARK: Render thread only
    /// Render state of each parameter.
    package let parameterStates: UnsafeMutablePointer<ParameterRenderState>
    /// Whether each output bus is silent for the last slice rendered.
    package let outputIsSilent: UnsafeMutablePointer<Bool>
    /// The graph frame at which this node started (sources count their own time from it).
    package internal(set) var startSampleTime: Int64 = 0
    var lastRenderedSampleTime: Int64 = .min
    /// Taps recording output buses (offline rendering; empty otherwise).
    var taps: [KernelTap] = []
    /// Live taps on the output buses (swapped in by a plan's `LiveTapChange`; nil: none).
    var liveTapSet: LiveTapSet?
    var lastRenderedFrameCount: Int = -1

    // MARK: Control thread only (ownership of memory)
    private let outputStorage: [ChannelBufferStorage]
    private let parameterScratch: UnsafeMutablePointer<Float>
    /// ``parameters`` without reference counting (the array keeps them alive): reading one per
    /// slice costs no retain and release, and no bounds check.
    private let parameterReferences: UnsafeMutablePointer<Unmanaged<AudioParameter>>

    /// This kernel as a ``ChainFusingKernel``, or nil: a kernel class that conforms sets it to
    /// `self` in its initializer (cf. `EQKernel`), so that a render plan finds the kernels that
    /// fuse chains without a run-time protocol cast, which searches every conformance record of
    /// the program on a type's first cast (~0.2 M instructions at a command's start-up).
    /// `unowned(unsafe)`: it is the object itself, no reference count.
    package unowned(unsafe) var chainFusing: (any ChainFusingKernel)?

    // `@usableFromInline` because a subclass in another module does not inherit this initializer:
    // the compiler fills its vtable slot with an `_unimplementedInitializer` stub, and a `package`
    // initializer (wider than the internal stub) adds a vtable thunk that re-dispatches through the
    // final subclass's own slot: the false "function call causes an infinite recursion" warning on
    // every kernel's class line. Linkage only; the API stays `package`.
    @usableFromInline
    package init(nodeID: String, outputFormats: [StreamFormat], maximumFramesPerSlice: Int,
                parameters: [AudioParameter]) {
        self.nodeID = nodeID
        self.outputFormats = outputFormats
        self.maximumFramesPerSlice = maximumFramesPerSlice
        self.parameters = parameters
        outputStorage = outputFormats.map {
            ChannelBufferStorage(channelCount: $0.channelCount, capacity: maximumFramesPerSlice)
        }
        outputs = .allocate(capacity: max(1, outputFormats.count))
        for (i, s) in outputStorage.enumerated() { (outputs.baseAddress! + i).initialize(to: s.list) }
        outputIsSilent = .allocate(capacity: max(1, outputFormats.count))
        outputIsSilent.initialize(repeating: true, count: max(1, outputFormats.count))
        parameterScratch = .allocate(capacity: max(1, parameters.count * maximumFramesPerSlice))
        parameterScratch.initialize(repeating: 0, count: max(1, parameters.count * maximumFramesPerSlice))
        parameterReferences = .allocate(capacity: max(1, parameters.count))
        for (i, p) in parameters.enumerated() { (parameterReferences + i).initialize(to: .passUnretained(p)) }
        parameterStates = .allocate(capacity: max(1, parameters.count))
        for (i, p) in parameters.enumerated() {
            (parameterStates + i).initialize(to: ParameterRenderState(
                initialValue: p.value, scratch: parameterScratch + i * maximumFramesPerSlice))
        }
    }

    deinit {
        outputs.deallocate()
        outputIsSilent.deallocate()
        parameterStates.deinitialize(count: parameters.count)
        parameterStates.deallocate()
        parameterScratch.deallocate()
        parameterReferences.deallocate()
    }

    /// Renders one slice into ``outputs`` and sets ``outputIsSilent`` for each bus.
    ///
    /// Real-time: must not allocate, lock, wait, throw, log or do I/O. Pull inputs with
    /// `inputs.pull(bus)`; read parameters with ``parameterValues(_:_:)``.
    open func render(context: RenderContext, inputs: RenderInputs) {
        for b in 0..<outputs.count {
            outputs[b].clear(frameCount: context.frameCount)
            outputIsSilent[b] = true
        }
    }

    /// Whether this kernel may render on a worker thread at the same time as other kernels
    /// (``AudioGraph/renderThreadCount`` above 1). True by default: a kernel touches only its own
    /// state and its inputs. Override to return false when rendering reaches state shared with
    /// other kernels or with code that assumes one render thread (application callbacks); such
    /// a kernel, and the branch it is in, render on the render thread. Any thread; constant.
    open var isSafeToRenderConcurrently: Bool { true }

    /// Called on the control thread with ``AudioGraph/renderThreadCount`` after the kernel is made
    /// (when the count is above 1) and whenever the count changes, never while a render call is
    /// in progress. Above 1 the graph renders offline only, so a kernel may then split its own
    /// slice with a thread of its own that it waits for (`RenderHelperThread`); at 1 it must
    /// not wait for anything. Default: nothing.
    open func renderThreadCountDidChange(_ count: Int) {}

    /// Whether the kernel splits its own work when the count is above 1 (what
    /// ``renderThreadCountDidChange(_:)`` starts). A graph with no such kernel and no branch to
    /// split gains nothing from more threads (``AudioGraph/hasWorkForSeveralRenderThreads``).
    /// Default: false. Any thread; constant once made.
    open var usesRenderThreads: Bool { false }

    /// Called on the render thread when the kernel joins a running graph (or the graph starts),
    /// with the graph frame it starts at. Real-time safe. Override to reset state; call super.
    open func start(atSampleTime sampleTime: Int64) {
        startSampleTime = sampleTime
    }

    /// Called on the render thread with a message prepared by the control side (a property
    /// change). Real-time safe: swap in what the message carries, keep what it replaces in the
    /// message so that it is released later on a control thread.
    open func receive(_ message: KernelMessage) {}

    /// The values of parameter `index` for this slice (polls the control side first). Real-time safe.
    @inline(__always)
    package final func parameterValues(_ index: Int, _ context: RenderContext) -> ParameterValues {
        precondition(index >= 0 && index < parameters.count, "parameter index out of range")
        let state = parameterStates + index
        return parameterReferences[index]._withUnsafeGuaranteedRef { p in
            state.pointee.poll(p)
            return state.pointee.values(p, context)
        }
    }

    /// Marks every output silent and zeroes it. Real-time safe.
    package final func outputSilence(frameCount: Int) {
        for b in 0..<outputs.count {
            outputs[b].clear(frameCount: frameCount)
            outputIsSilent[b] = true
        }
    }

    /// Applies a change-list `setParameter` on the render thread (sample-exact with the list).
    final func applyParameter(_ index: Int, value: Double, rampFrames: Int) {
        parameterStates[index].poll(parameters[index])
        parameterStates[index].ramp(to: value, frames: rampFrames)
    }
}

/// A message from a node's control side to its kernel, carried by a render plan and delivered on
/// the render thread (cf. web-audio-api-rs's control messages). Whatever the kernel replaces, it
/// stores back into the message, so it is released with the plan on a control thread.
open class KernelMessage: @unchecked Sendable {
    @usableFromInline  // see NodeKernel.init: no stub thunk (false recursion warning) in subclasses
    package init() {}
    /// What the kernel handed back (released off the render thread with the plan).
    package var retired: AnyObject?
}

/// The inputs of one node during one render call: pulling a bus renders its source first (once
/// per slice: fan-out is cached by sample time).
///
/// Thread safety: render thread only; valid only during the render call it was passed to.
public struct RenderInputs {
    unowned(unsafe) let plan: RenderPlan
    let first: Int
    /// The node's input bus count.
    public let count: Int
    let context: RenderContext

    /// Renders the source of input `bus` if needed and returns its buffer, or nil when nothing is
    /// connected. Real-time safe.
    @inline(__always)
    public func pull(_ bus: Int) -> InputBuffer? {
        guard bus >= 0 && bus < count else { return nil }
        return plan.pullInput(first + bus, context)
    }

    /// For a node that pulls its inputs on their own timeline (``GraphNode/pullsInputsOnTheirOwnTimeline``):
    /// the next `frameCount` frames (at most the graph's maximum frames per slice) of input `bus`'s
    /// timeline, through its adapter; nil when nothing is connected. Call it as often as the node
    /// needs within one render call. Real-time safe.
    @inline(__always)
    public func pull(_ bus: Int, frameCount: Int) -> InputBuffer? {
        guard bus >= 0 && bus < count else { return nil }
        // As AudioGraph.render(frameCount:): the adapters' buffers hold maximumFramesPerSlice frames.
        precondition(frameCount >= 0 && frameCount <= plan.entries[0].kernel.maximumFramesPerSlice,
                     "RenderInputs.pull(_:frameCount:): \(frameCount) frames exceeds maximumFramesPerSlice")
        return plan.pullInput(first + bus, RenderContext(sampleTime: context.sampleTime, frameCount: frameCount,
                                                         sampleRate: context.sampleRate))
    }
}

/// One pulled input bus: its buffer (at least the slice's frame count) and whether it is silent.
public struct InputBuffer {
    /// The samples (owned by the source node or the input's rate converter).
    public let buffer: ChannelBufferList
    /// Whether every sample of this slice is zero.
    public let isSilent: Bool

    public init(buffer: ChannelBufferList, isSilent: Bool) {
        self.buffer = buffer
        self.isSilent = isSilent
    }

    /// Channel count of the input.
    public var channelCount: Int { buffer.channelCount }
}
