// An immutable, compiled render graph that the render thread pulls through.

/// What the render thread runs once when it adopts a plan, before rendering with it.
///
/// A closed set of messages (cf. web-audio-api-rs's control messages): everything a change list
/// does besides rewiring.
enum PlanCommand {
    /// A node joins: its kernel starts counting its own time at the current graph frame.
    case start(NodeKernel)
    /// A change-list `setParameter`: sample-exact with the rest of the list.
    case setParameter(NodeKernel, index: Int, value: Double, rampFrames: Int)
    /// A property change prepared by the node's control side.
    case message(NodeKernel, KernelMessage)
    /// A rate-converting input starts carrying audio.
    case startAdapter(InputAdapter, sourceRate: Double)
    /// A kernel's live taps change (installed or removed).
    case setLiveTaps(LiveTapChange)
}

/// An immutable snapshot of the graph compiled for rendering (cf. JUCE's RenderSequence): the
/// nodes, each input bus's source, the output node, and the commands to run on adoption.
///
/// Compiled on a control thread by `AudioGraph.update()` / `initialize()`, handed to the render
/// thread through an atomic pointer, and released on a control thread once the render thread
/// has moved on to a newer plan. It holds strong references to every kernel and adapter it uses,
/// so nothing it touches is freed while it may render.
///
/// Thread safety: immutable after creation (kernels it points to are render-thread-owned).
final class RenderPlan: @unchecked Sendable {
    struct Entry {
        unowned(unsafe) let kernel: NodeKernel
        let firstInput: Int
        let inputCount: Int
        /// The entry's parameter inputs: `parameterSlots[firstParameterInput ..< + parameterInputCount]`.
        var firstParameterInput = 0
        var parameterInputCount = 0
        /// The fused chain this entry renders in place of itself and the entries before it
        /// (nil: none), and those entries, first to last (this one):
        /// `chainMembers[firstChainMember ..< + chainMemberCount]`.
        unowned(unsafe) var fusedChain: FusedKernelChain?
        var firstChainMember = 0
        var chainMemberCount = 0
    }

    /// One output bus feeding a parameter of an entry (see ``ParameterConnection``).
    struct ParameterInput {
        /// The parameter's index in the kernel.
        let parameter: Int
        /// Entry index and output bus of the source.
        let source: Int
        let bus: Int
    }

    /// A parameter input as the render thread reads it, with its mono buffer (owned by the plan).
    struct ParameterSlot {
        let input: ParameterInput
        /// Whether this is the first slot of its parameter (the one whose buffer collects the sum).
        let first: Bool
        /// The buffer the parameter's inputs are summed into (the first slot's).
        let buffer: UnsafeMutablePointer<Float>
    }

    struct InputSlot {
        /// Entry index of the source, or -1 when the bus is unconnected.
        let source: Int
        let bus: Int
        unowned(unsafe) let adapter: InputAdapter?
    }

    let generation: UInt64
    /// The render thread adopts the plan at the first slice boundary at or after this graph
    /// frame (`Int64.min`: at the next boundary).
    let activationTime: Int64
    let entries: UnsafeMutablePointer<Entry>
    let entryCount: Int
    let inputSlots: UnsafeMutablePointer<InputSlot>
    let inputSlotCount: Int
    /// Entry index of the output node.
    let outputEntry: Int
    /// Entries rendered every slice whether or not the output pulls them (sinks, capture nodes:
    /// ``GraphNode/isPulledEverySlice``), after the output.
    let pulledEntries: UnsafeMutablePointer<Int>
    let pulledEntryCount: Int
    let commands: [PlanCommand]
    /// The commands again, in memory the render thread can walk without generic iteration
    /// (an unspecialised `IndexingIterator` boxes a four-word enum on the heap).
    private let commandStorage: UnsafeMutablePointer<PlanCommand>
    /// The workers that render the parallel units beside the render thread (nil: serial).
    let workers: RenderWorkerPool?
    /// The split into independent tasks (``ParallelSchedule/serial`` without workers).
    let schedule: ParallelSchedule
    /// The schedule as render-thread-readable memory: the task roots of phase p, group g are
    /// `parallelRoots[parallelGroupStarts[i]..<parallelGroupStarts[i + 1]]`, i = p × groups + g.
    private let parallelGroupStarts: UnsafeMutablePointer<Int>
    private let parallelRoots: UnsafeMutablePointer<Int>
    /// Groups per phase (the pool's thread count; 0 when serial).
    private let parallelGroupCount: Int
    /// Phases of the schedule (0 when serial).
    let parallelPhaseCount: Int

    /// Every entry's parameter inputs, grouped by entry, then by parameter.
    let parameterSlots: UnsafeMutablePointer<ParameterSlot>
    let parameterSlotCount: Int
    /// The entries of every fused chain, chain by chain, each first to last (see ``Entry/fusedChain``).
    let chainMembers: UnsafeMutablePointer<Int>

    // MARK: Ownership (released with the plan, on a control thread)
    private let kernels: [NodeKernel]
    private let adapters: [InputAdapter]
    /// The parameter inputs' mono buffers (written by the render thread while it renders with this plan).
    private let parameterBuffers: UnsafeMutablePointer<Float>
    /// The fused chains' renderers.
    private let fusedChainRenderers: [FusedKernelChain]
    /// The fused chains as entry indices, first to last (for inspection).
    let fusedChainEntries: [[Int]]

    /// `inputs[i]` lists, for kernel i, each input bus's (source kernel index, bus, adapter).
    init(generation: UInt64, kernels: [NodeKernel], inputs: [[(source: Int, bus: Int, adapter: InputAdapter?)]],
         outputEntry: Int, pulledEntries: [Int] = [], commands: [PlanCommand], activationTime: Int64 = .min,
         workers: RenderWorkerPool? = nil, parameterInputs: [[ParameterInput]] = [], fusesChains: Bool = false) {
        self.generation = generation
        let schedule = workers.map { pool in
            ParallelSchedule.make(inputs: inputs.map { $0.map { ParallelSchedule.Input(source: $0.source, adapted: $0.adapter != nil) } },
                                  outputEntry: outputEntry, concurrent: kernels.map(\.isSafeToRenderConcurrently),
                                  threadCount: pool.threadCount)
        } ?? .serial
        self.schedule = schedule
        self.workers = schedule.isParallel ? workers : nil
        parallelPhaseCount = schedule.phases.count
        parallelGroupCount = schedule.phases.first?.count ?? 0
        let groups = schedule.phases.flatMap { $0 }
        parallelGroupStarts = .allocate(capacity: groups.count + 1)
        parallelRoots = .allocate(capacity: max(1, groups.reduce(0) { $0 + $1.count }))
        var root = 0
        for (g, group) in groups.enumerated() {
            (parallelGroupStarts + g).initialize(to: root)
            for r in group { (parallelRoots + root).initialize(to: r); root += 1 }
        }
        (parallelGroupStarts + groups.count).initialize(to: root)
        pulledEntryCount = pulledEntries.count
        self.pulledEntries = .allocate(capacity: max(1, pulledEntries.count))
        self.pulledEntries.initialize(from: pulledEntries, count: pulledEntries.count)
        self.activationTime = activationTime
        self.kernels = kernels
        self.outputEntry = outputEntry
        self.commands = commands
        commandStorage = .allocate(capacity: max(1, commands.count))
        commandStorage.initialize(from: commands, count: commands.count)
        entryCount = kernels.count
        inputSlotCount = inputs.reduce(0) { $0 + $1.count }
        entries = .allocate(capacity: max(1, entryCount))
        inputSlots = .allocate(capacity: max(1, inputSlotCount))
        var slot = 0
        var adapters: [InputAdapter] = []
        for (i, k) in kernels.enumerated() {
            (entries + i).initialize(to: Entry(kernel: k, firstInput: slot, inputCount: inputs[i].count))
            for input in inputs[i] {
                (inputSlots + slot).initialize(to: InputSlot(source: input.source, bus: input.bus, adapter: input.adapter))
                if let a = input.adapter { adapters.append(a) }
                slot += 1
            }
        }
        self.adapters = adapters
        // Parameter inputs: one mono buffer per modulated parameter, sized for the kernel's slices.
        let slotCount = parameterInputs.reduce(0) { $0 + $1.count }
        parameterSlotCount = slotCount
        parameterSlots = .allocate(capacity: max(1, slotCount))
        var bufferFrames = 0
        for (i, list) in parameterInputs.enumerated() where i < kernels.count {
            for (j, input) in list.enumerated() where j == 0 || list[j - 1].parameter != input.parameter {
                _ = input
                bufferFrames += kernels[i].maximumFramesPerSlice
            }
        }
        parameterBuffers = .allocate(capacity: max(1, bufferFrames))
        parameterBuffers.initialize(repeating: 0, count: max(1, bufferFrames))
        var slotIndex = 0, bufferOffset = 0
        for (i, list) in parameterInputs.enumerated() where i < kernels.count {
            entries[i].firstParameterInput = slotIndex
            entries[i].parameterInputCount = list.count
            var buffer = parameterBuffers
            for (j, input) in list.enumerated() {
                let first = j == 0 || list[j - 1].parameter != input.parameter
                if first {
                    buffer = parameterBuffers + bufferOffset
                    bufferOffset += kernels[i].maximumFramesPerSlice
                }
                (parameterSlots + slotIndex).initialize(to: ParameterSlot(input: input, first: first, buffer: buffer))
                slotIndex += 1
            }
        }
        // Chains of kernels in series rendered as one (see FusedKernelChain).
        var renderers: [FusedKernelChain] = []
        var fused: [[Int]] = []
        if fusesChains {
            for chain in RenderPlan.fusedChains(kernels: kernels, inputs: inputs, outputEntry: outputEntry,
                                          pulledEntries: pulledEntries, parameterInputs: parameterInputs) {
                guard let tail = kernels[chain[chain.count - 1]].chainFusing,
                      let renderer = tail.makeFusedChain(chain.map { kernels[$0] }) else { continue }
                renderers.append(renderer)
                fused.append(chain)
            }
        }
        fusedChainRenderers = renderers
        fusedChainEntries = fused
        chainMembers = .allocate(capacity: max(1, fused.reduce(0) { $0 + $1.count }))
        var member = 0
        for (c, chain) in fused.enumerated() {
            let tail = chain[chain.count - 1]
            entries[tail].fusedChain = renderers[c]
            entries[tail].firstChainMember = member
            entries[tail].chainMemberCount = chain.count
            for e in chain { (chainMembers + member).initialize(to: e); member += 1 }
        }
    }

    deinit {
        commandStorage.deinitialize(count: commands.count)
        commandStorage.deallocate()
        entries.deallocate()
        inputSlots.deallocate()
        parameterSlots.deallocate()
        parameterBuffers.deallocate()
        pulledEntries.deallocate()
        parallelGroupStarts.deallocate()
        parallelRoots.deallocate()
        chainMembers.deallocate()
    }

    /// Renders the parallel tasks (on the workers and here, phase by phase) before the serial
    /// pull; nothing without workers. Render thread; real-time safe when the plan is serial, waits for the
    /// workers otherwise (offline only: see ``RenderWorkerPool``).
    @inline(__always)
    func renderParallelUnits(_ context: RenderContext) {
        if let workers { workers.run(self, context) }
    }

    /// Number of task roots in group `group` (0: the render thread's) of phase `phase`. Real-time safe.
    @inline(__always)
    func parallelGroupSize(_ phase: Int, _ group: Int) -> Int {
        guard phase < parallelPhaseCount, group < parallelGroupCount else { return 0 }
        let g = phase &* parallelGroupCount &+ group
        return parallelGroupStarts[g + 1] - parallelGroupStarts[g]
    }

    /// Renders the tasks of group `group` in phase `phase` for `context` (on the thread that owns
    /// the group). Real-time safe.
    @inline(__always)
    func renderParallelGroup(_ phase: Int, _ group: Int, _ context: RenderContext) {
        guard phase < parallelPhaseCount, group < parallelGroupCount else { return }
        let g = phase &* parallelGroupCount &+ group
        var i = parallelGroupStarts[g]
        let end = parallelGroupStarts[g + 1]
        while i < end {
            renderEntry(parallelRoots[i], context)
            i += 1
        }
    }

    /// Renders every entry that is pulled each slice (and not rendered yet). Real-time safe.
    @inline(__always)
    func renderPulledEntries(_ context: RenderContext) {
        var i = 0
        while i < pulledEntryCount {
            renderEntry(pulledEntries[i], context)
            i += 1
        }
    }

    /// Renders entry `index` for `context` unless it already rendered that slice. Real-time safe.
    @inline(__always)
    func renderEntry(_ index: Int, _ context: RenderContext) {
        let e = entries[index]
        let k = e.kernel
        if k.lastRenderedSampleTime == context.sampleTime && k.lastRenderedFrameCount == context.frameCount { return }
        k.lastRenderedSampleTime = context.sampleTime
        k.lastRenderedFrameCount = context.frameCount
        if e.parameterInputCount > 0 { prepareParameterInputs(e, context) }
        if let chain = e.fusedChain, fusedChainIsIntact(e, context) {
            // The chain in one call, from the first member's inputs (the members before this one
            // are not rendered: only this one reads their outputs).
            let head = entries[chainMembers[e.firstChainMember]]
            chain.render(context: context, inputs: RenderInputs(plan: self, first: head.firstInput, count: head.inputCount,
                                                                context: context))
        } else {
            k.render(context: context, inputs: RenderInputs(plan: self, first: e.firstInput, count: e.inputCount,
                                                            context: context))
        }
        if e.parameterInputCount > 0 { finishParameterInputs(e) }
        if !k.taps.isEmpty { k.recordTaps(frameCount: context.frameCount) }
        if let live = k.liveTapSet { live.record(k, frameCount: context.frameCount, sampleTime: context.sampleTime) }
    }

    /// The buffer of input slot `slot`, rendering its source first. Real-time safe.
    @inline(__always)
    func pullInput(_ slot: Int, _ context: RenderContext) -> InputBuffer? {
        let s = inputSlots[slot]
        if s.source < 0 { return nil }
        if let adapter = s.adapter {
            let src = entries[s.source].kernel
            return adapter.pull(context: context, upstream: UpstreamSource(
                plan: self, entry: s.source, bus: s.bus, sampleRate: src.outputFormats[s.bus].sampleRate))
        }
        renderEntry(s.source, context)
        let k = entries[s.source].kernel
        return InputBuffer(buffer: k.outputs[s.bus], isSilent: k.outputIsSilent[s.bus])
    }

    /// Runs the plan's commands at graph frame `sampleTime`, at a graph rate of `graphRate`.
    /// Render thread (or the control thread before the graph runs). Real-time safe.
    func runCommands(atSampleTime sampleTime: Int64, graphRate: Double) {
        var i = 0
        let count = commands.count
        while i < count {
            defer { i += 1 }
            switch commandStorage[i] {
            case .start(let k):
                let rate = k.outputFormats.first?.sampleRate ?? graphRate
                let t = rate == graphRate ? sampleTime : Int64((Double(sampleTime) * rate / graphRate).rounded())
                k.start(atSampleTime: t)
            case let .setParameter(k, index, value, ramp):
                k.applyParameter(index, value: value, rampFrames: ramp)
            case let .message(k, m):
                k.receive(m)
            case let .startAdapter(a, sourceRate):
                let t = sourceRate == graphRate ? sampleTime : Int64((Double(sampleTime) * sourceRate / graphRate).rounded())
                a.start(atUpstreamSampleTime: t)
            case .setLiveTaps(let change):
                change.apply()
            }
        }
    }
}
