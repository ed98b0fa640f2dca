// Installing and removing live taps on a graph that may be running (plan-carried tap sets).

extension AudioGraph {
    /// The live taps installed on one node (control side; `control` held).
    struct InstalledTaps {
        let node: GraphNode
        var taps: [LiveTap]
    }

    /// Installs `tap` on output bus `tap.bus` of node `nodeID` (cf. AVAudioEngine's
    /// `installTap(onBus:...)`). Works while the graph is open, initialized or running, without
    /// stopping it: the node's kernel gets a new tap set through the render-plan hand-off (on a
    /// running graph at the next slice boundary, after any timed plan still waiting for its
    /// frame); nothing is allocated or locked on the render thread. A ``LiveTap/Delivery/thread``
    /// tap starts its delivery thread here.
    ///
    /// A bus may carry several taps at once (TAAE's receivers, a Linux addition to
    /// AVAudioEngine's one), each with its own buffer size and ring: a level meter, a recorder
    /// and an analyser on the same bus each get every frame.
    ///
    /// Throws when the node does not exist, the bus does not, the tap was installed before (a
    /// tap is installed once), or the graph is initialized and the bus's format has another
    /// channel count or rate.
    ///
    /// Thread safety: any control thread (takes the graph's control mutex, allocates); never the
    /// render thread.
    public func installTap(_ tap: LiveTap, onNode nodeID: String) throws(AudioGraphError) {
        try control.withLock { _ throws(AudioGraphError) in
            pruneFinishedTaps()
            if state == .open { _ = liveTapCommandsForRemovedNodes() } // no kernels: nothing to publish
            guard let node = nodesByID[nodeID] else { throw .nodeNotFound(nodeID) }
            guard tap.bus < node.outputBusCount else {
                throw .busOutOfRange(node: nodeID, scope: .output, bus: tap.bus, count: node.outputBusCount)
            }
            let key = ObjectIdentifier(node)
            if node.kernel != nil, tap.bus < node.outputFormats.count {
                let f = node.outputFormats[tap.bus]
                guard f.channelCount == tap.channelCount else {
                    throw .formatNotSupported(node: nodeID, reason: "a tap of \(tap.channelCount) channels on output bus "
                        + "\(tap.bus), which carries \(f.channelCount)")
                }
                guard f.sampleRate == tap.sampleRate else {
                    throw .formatNotSupported(node: nodeID, reason: "a tap at \(ParameterInfo.format(tap.sampleRate)) Hz "
                        + "on output bus \(tap.bus), which runs at \(ParameterInfo.format(f.sampleRate)) Hz")
                }
            }
            guard tap.installedFlag.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
                throw .invalidState("this tap was installed before (make a new LiveTap for each installation)")
            }
            do throws(AudioGraphError) {
                try tap.startDelivery()
            } catch {
                tap.installedFlag.store(false, ordering: .relaxed)
                throw error
            }
            var entry = liveTapsByNode[key] ?? InstalledTaps(node: node, taps: [])
            entry.taps.append(tap)
            liveTapsByNode[key] = entry
            if let kernel = node.kernel {
                publishCommands([.setLiveTaps(LiveTapChange(kernel: kernel, set: LiveTapSet(entry.taps), detaching: []))])
            }
        }
    }

    /// Makes a ``LiveTap`` for output bus `bus` of node `nodeID` and installs it (see
    /// ``installTap(_:onNode:)``): its channel count and rate are `format`'s, or, when `format`
    /// is nil, those of the bus (known once the graph is initialized; on an open graph pass the
    /// format). `bufferSize` 0 means ``maximumFramesPerSlice``. The ring gets the default capacity
    /// for the bus's rate relative to the graph's (a source running faster than the graph behind
    /// a rate converter renders more frames per slice).
    ///
    /// Thread safety: any control thread; never the render thread.
    @discardableResult
    public func installTap(onNode nodeID: String, bus: Int, bufferSize: Int, format: StreamFormat? = nil,
                           delivery: LiveTap.Delivery = .thread,
                           block: @escaping LiveTap.Block) throws(AudioGraphError) -> LiveTap {
        guard bufferSize >= 0 else { throw .invalidState("a tap's bufferSize must not be negative (\(bufferSize))") }
        guard let node = node(nodeID) else { throw .nodeNotFound(nodeID) }
        guard bus >= 0 && bus < node.outputBusCount else {
            throw .busOutOfRange(node: nodeID, scope: .output, bus: bus, count: node.outputBusCount)
        }
        let busFormat = isInitialized ? control.withLock { _ in node.outputFormats.indices.contains(bus) ? node.outputFormats[bus] : nil } : nil
        guard let f = format ?? busFormat else {
            throw .invalidState("the format of output bus \(bus) of \"\(nodeID)\" is not known before initialize(); pass one")
        }
        let tap = LiveTap(bus: bus, channelCount: f.channelCount, sampleRate: f.sampleRate, bufferSize: bufferSize,
                          maximumFramesPerSlice: maximumFramesPerSlice,
                          minimumCapacity: LiveTap.defaultCapacity(bufferSize: bufferSize, maximumFramesPerSlice: maximumFramesPerSlice,
                                                                   rateRatio: f.sampleRate / sampleRate),
                          delivery: delivery, block: block)
        try installTap(tap, onNode: nodeID)
        return tap
    }

    /// Removes the first tap installed on output bus `bus` of node `nodeID` (of those still
    /// there) and returns it (nil when there is none); ``removeTap(_:fromNode:)`` removes a
    /// given one. Returns at once: the render thread lets go of the tap when it adopts the plan
    /// carrying the change (next slice boundary; at once when the graph is not running); then the
    /// tap's consumer delivers what the ring holds and the final partial buffer, and the tap is
    /// finished (``LiveTap/isFinished``; wait with ``LiveTap/waitUntilFinished(timeout:)``, or for
    /// a manual tap call ``deliverPendingTaps()`` after the next render call). Frames rendered
    /// between installation and that boundary are all delivered unless dropped (counted).
    ///
    /// Thread safety: any control thread (takes the graph's control mutex); never the render thread.
    @discardableResult
    public func removeTap(onNode nodeID: String, bus: Int) -> LiveTap? {
        control.withLock { _ in
            pruneFinishedTaps()
            if state == .open { _ = liveTapCommandsForRemovedNodes() } // no kernels: nothing to publish
            guard let node = nodesByID[nodeID], let entry = liveTapsByNode[ObjectIdentifier(node)],
                  let tap = entry.taps.first(where: { $0.bus == bus }) else { return nil }
            return removeLocked(tap, from: node)
        }
    }

    /// Removes `tap` from node `nodeID` (as ``removeTap(onNode:bus:)`` does for the first tap of
    /// a bus) and returns it; nil when it is not installed there.
    ///
    /// Thread safety: any control thread (takes the graph's control mutex); never the render thread.
    @discardableResult
    public func removeTap(_ tap: LiveTap, fromNode nodeID: String) -> LiveTap? {
        control.withLock { _ in
            pruneFinishedTaps()
            if state == .open { _ = liveTapCommandsForRemovedNodes() } // no kernels: nothing to publish
            guard let node = nodesByID[nodeID], let entry = liveTapsByNode[ObjectIdentifier(node)],
                  entry.taps.contains(where: { $0 === tap }) else { return nil }
            return removeLocked(tap, from: node)
        }
    }

    /// Takes `tap` (installed on `node`) off the node's tap set. `control` held.
    private func removeLocked(_ tap: LiveTap, from node: GraphNode) -> LiveTap {
        guard var entry = liveTapsByNode[ObjectIdentifier(node)],
              let index = entry.taps.firstIndex(where: { $0 === tap }) else { return tap }
        entry.taps.remove(at: index)
        liveTapsByNode[ObjectIdentifier(node)] = entry.taps.isEmpty ? nil : entry
        finishingTaps.append(tap)
        if let kernel = node.kernel {
            let set = entry.taps.isEmpty ? nil : LiveTapSet(entry.taps)
            publishCommands([.setLiveTaps(LiveTapChange(kernel: kernel, set: set, detaching: [tap]))])
        } else {
            tap.markDetached()
        }
        return tap
    }

    /// The first tap installed on output bus `bus` of node `nodeID` (of those still there), or
    /// nil. Control threads.
    public func installedTap(onNode nodeID: String, bus: Int) -> LiveTap? {
        control.withLock { _ in
            nodesByID[nodeID].flatMap { liveTapsByNode[ObjectIdentifier($0)]?.taps.first { $0.bus == bus } }
        }
    }

    /// Delivers, on the calling thread, what every ``LiveTap/Delivery/manual`` tap of the graph
    /// holds — installed ones and removed ones not finished yet — tap after tap, each tap's
    /// buffers in order (see ``LiveTap/deliverPending()``). The thread that drives a manual render calls it after each
    /// render call: then nothing is dropped and the taps' concatenated buffers equal what their
    /// buses rendered, bit for bit. Returns the number of buffers delivered.
    ///
    /// Thread safety: the thread driving the render, between render calls (a control thread;
    /// takes the control mutex briefly, never while a block runs).
    @discardableResult
    public func deliverPendingTaps() -> Int {
        let taps: [LiveTap] = control.withLock { _ in
            pruneFinishedTaps()
            return finishingTaps.filter { $0.delivery == .manual }
                + liveTapsByNode.values.flatMap(\.taps).filter { $0.delivery == .manual }
        }
        var count = 0
        for t in taps { count += t.deliverPending() }
        control.withLock { _ in pruneFinishedTaps() }
        return count
    }

    // MARK: Hooks of the life cycle (`control` held)

    /// Tap-set commands for kernels just made by `initialize()` (taps installed while open or
    /// kept across `uninitialize()`).
    /// Taps of nodes removed while the graph was open are let go of first.
    func liveTapCommandsForNewKernels() -> [PlanCommand] {
        liveTapCommandsForRemovedNodes() + liveTapsByNode.values.compactMap { entry in
            entry.node.kernel.map { .setLiveTaps(LiveTapChange(kernel: $0, set: LiveTapSet(entry.taps), detaching: [])) }
        }
    }

    /// Commands letting go of the taps of nodes that an applied change list removed (their
    /// kernels stop rendering with the same plan); the taps finish after that.
    func liveTapCommandsForRemovedNodes() -> [PlanCommand] {
        var commands: [PlanCommand] = []
        for (key, entry) in liveTapsByNode where nodesByID[entry.node.id] !== entry.node {
            liveTapsByNode[key] = nil
            finishingTaps += entry.taps
            if let kernel = entry.node.kernel {
                commands.append(.setLiveTaps(LiveTapChange(kernel: kernel, set: nil, detaching: entry.taps)))
            } else {
                for t in entry.taps { t.markDetached() }
            }
        }
        return commands
    }

    private func pruneFinishedTaps() {
        finishingTaps.removeAll { $0.isFinished }
    }
}
