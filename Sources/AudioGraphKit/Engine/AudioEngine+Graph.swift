// Building the engine's AudioGraph from its model, and applying model edits as change lists.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

extension AudioEngine {
    /// The format the graph renders at: the manual rendering format, else the output device's.
    var renderFormat: AudioFormat { manualFormat ?? devices().output }

    /// The largest slice: the manual maximum, else 512 frames for live output.
    var maximumFramesPerSlice: Int { manualMode != nil ? Int(manualMaximumFrames) : 512 }

    /// The formats of PulseAudio's default sink and source (asked once; 48 kHz stereo when no
    /// server answers: `start()` reports that).
    func devices() -> (output: AudioFormat, input: AudioFormat) {
        if let deviceFormats { return deviceFormats }
        var output = Self.fallbackFormat, input = Self.fallbackFormat
        if let context = try? PulseContext(applicationName: "AudioGraph engine", timeout: 2) {
            if let list = try? PulseDevices.list(context: context, timeout: 2) {
                let sinkName = outputNodeStorage?.device
                let sourceName = inputNodeStorage?.device
                let sink = list.first { d in d.kind == .sink && (sinkName.map { d.name == $0 } ?? d.isDefault) }
                let source = list.first { d in d.kind == .source && (sourceName.map { d.name == $0 } ?? d.isDefault) }
                if let sink, let f = AudioFormat(standardFormatWithSampleRate: Double(sink.sampleRate),
                                                 channels: AudioChannelCount(max(1, min(sink.channels, 32)))) { output = f }
                if let source, let f = AudioFormat(standardFormatWithSampleRate: Double(source.sampleRate),
                                                   channels: AudioChannelCount(max(1, min(source.channels, 32)))) { input = f }
            }
            context.close()
        }
        deviceFormats = (output, input)
        return (output, input)
    }

    // MARK: Formats of the model

    /// The format of output bus `bus` of `node` (see ``AudioNode``).
    func outputFormat(of node: AudioNode, bus: Int) -> AudioFormat {
        withLock {
            if let gn = node.graphNode, gn.kernel != nil, bus < gn.outputFormats.count {
                return AudioFormat(streamFormat: gn.outputFormats[bus])
            }
            if let f = node.connectionFormats[bus] { return f }
            let input = node.numberOfInputs > 0
                ? connections.first { $0.destination === node && $0.destinationBus == 0 }
                    .map { outputFormat(of: $0.source, bus: $0.sourceBus) }
                : nil
            return node.defaultOutputFormat(bus: bus, engineFormat: renderFormat, input: input)
        }
    }

    /// The format of input bus `bus` of `node`: what feeds it, else the node's default.
    func inputFormat(of node: AudioNode, bus: Int) -> AudioFormat {
        withLock {
            if let c = connections.first(where: { $0.destination === node && $0.destinationBus == bus }) {
                return outputFormat(of: c.source, bus: c.sourceBus)
            }
            return node.defaultInputFormat(bus: bus, engineFormat: renderFormat)
        }
    }

    // MARK: Building

    /// Builds and initializes the graph (`prepare()`): a graph node per attached node, every
    /// connection, every stored parameter and mixing setting, every tap. Nothing is kept if
    /// anything fails.
    func buildGraph(call: String) throws(AudioEngineError) {
        guard graph == nil else { return }
        _ = outputNode
        let format = renderFormat
        let g = AudioGraph(sampleRate: format.sampleRate, maximumFramesPerSlice: maximumFramesPerSlice)
        var made: [(AudioNode, GraphNode)] = []
        do {
            for n in attached {
                let gn = try makeGraphNode(for: n, graphRate: format.sampleRate)
                try g.addNode(gn)
                made.append((n, gn))
            }
            for c in connections {
                try g.connect(c.source.graphID, outputBus: c.sourceBus, to: c.destination.graphID, inputBus: c.destinationBus)
            }
            for c in parameterConnections {
                try g.connect(c.source.graphID, outputBus: c.sourceBus, to: c.parameter.node.graphID, parameter: .parsed(c.parameter.address))
            }
            for c in connections {
                let destination = made.first { $0.0 === c.destination }!.1
                for (address, value) in mixingParameters(for: c) { try destination.setClampedParameter(address, value) }
            }
            try g.initialize()
            if manualMode == .offline { try g.setRenderThreadCount(manualThreads) }
        } catch {
            throw .graph(call: call, error)
        }
        for (n, gn) in made { n.graphNode = gn }
        graph = g
        pendingParameters = []
        for (n, _) in made { installTaps(of: n, in: g) }
    }

    /// Releases the graph (after the driver stopped): kernels, plans and taps go.
    /// Drops a graph that is prepared but not running (its I/O nodes were built for a device
    /// or channel map that changed); the next `prepare()`/`start()` builds it again.
    func discardPreparedGraph() {
        withLock {
            guard !running, graph != nil else { return }
            tearDownGraph()
        }
    }

    func tearDownGraph() {
        guard let g = graph else { return }
        for n in attached {
            for tap in n.taps.values {
                if let t = tap.liveTap {
                    tap.droppedBefore += t.droppedBufferCount
                    _ = g.removeTap(t, fromNode: n.graphID)
                    if manualMode != nil { _ = g.deliverPendingTaps() }
                    _ = t.waitUntilFinished(timeout: 1)
                }
                tap.liveTap = nil
            }
        }
        g.uninitialize()
        voiceProcessing.discardProcessor()
        voiceProcessing.dropRetiredProcessors()   // the output stream is gone: no render callback holds them
        for n in attached { n.graphNode = nil }
        graph = nil
        manualState = nil
    }

    /// A fresh graph node for `node` with its stored parameters.
    func makeGraphNode(for node: AudioNode, graphRate: Double) throws(AudioGraphError) -> GraphNode {
        let gn = try node.makeGraphNode(sampleRate: graphRate, maximumFrames: maximumFramesPerSlice,
                                        outputFormat: node.connectionFormats[0]?.streamFormat,
                                        engineFormat: renderFormat.streamFormat)
        // Values stored before the rate was known meet the graph node's range here (Nyquist).
        for (address, value) in node.storedParameters {
            guard let p = gn.parameter(address) else { continue }
            let clamped = p.info.clamped(value)
            node.storedParameters[address] = clamped
            try p.setValue(clamped)
        }
        node.graphNodeFormat = node.connectionFormats[0]
        node.needsNewGraphNode = false
        node.didMakeGraphNode(gn)
        return gn
    }

    /// The destination parameters that carry `c.source`'s mixing settings (volume, pan,
    /// position, …) into a mixer or environment input bus; none for other destinations.
    func mixingParameters(for c: EngineConnection) -> [(String, Double)] {
        c.destination.mixingParameters(bus: c.destinationBus, settings: c.source.mixingSettings(for: c.destination, bus: c.destinationBus))
            .compactMap { address, value in c.destination.clampedParameterValue(address, value).map { (address, $0) } }
    }

    // MARK: Applying edits while the graph exists

    /// Brings the graph in line with the model as one pending-change list: removed nodes, new
    /// ones, nodes whose connection format changed or that need more input buses (replaced by a
    /// fresh graph node), connections broken and made, the mixing settings of new connections,
    /// and parameter changes queued by `performChanges`. While running, waits (≤ 1 s) until the
    /// render thread has adopted the list. Nothing changes if the graph rejects it.
    func reconcileGraph() throws(AudioGraphError) {
        guard let graph else {
            pendingParameters = []
            return
        }
        // A running node whose format the new wiring changes (an effect left without input, or
        // fed from another format) gets a fresh graph node, as a stateless node may: the graph
        // says which, and the list is made again with it (nothing was applied).
        var replace: Set<String> = []
        while true {
            let (changes, made) = try plannedChanges(graph, replacing: replace)
            guard !changes.isEmpty else {
                pendingParameters = []
                return
            }
            graph.enqueue(contentsOf: changes)
            do {
                try commit(graph)
            } catch {
                if case .formatNotSupported(let id, let reason) = error, reason.hasPrefix("its output format would change"),
                   !replace.contains(id), let n = attached.first(where: { $0.graphID == id }), n.canBeReplacedWhileRunning {
                    replace.insert(id)
                    continue
                }
                throw error
            }
            pendingParameters = []
            for (n, gn) in made {
                for (_, tap) in n.taps {
                    if let t = tap.liveTap { tap.droppedBefore += t.droppedBufferCount }
                    tap.liveTap = nil
                }
                n.graphNode = gn
                installTaps(of: n, in: graph)
            }
            return
        }
    }

    /// The change list that brings `graph` in line with the model, and the graph nodes it adds
    /// (`replacing`: ids of nodes to replace by fresh ones whatever else changed).
    private func plannedChanges(_ graph: AudioGraph, replacing replace: Set<String>) throws(AudioGraphError)
        -> ([PendingChange], [(AudioNode, GraphNode)]) {
        let rate = graph.sampleRate
        let inGraph = Dictionary(graph.nodes.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var removals: [String] = []
        var made: [(AudioNode, GraphNode)] = []
        for (id, gn) in inGraph where !attached.contains(where: { $0.graphID == id && $0.graphNode === gn }) {
            removals.append(id)
        }
        for n in attached {
            if let gn = n.graphNode, inGraph[n.graphID] === gn {
                let formatChanged = n.connectionFormats[0] != n.graphNodeFormat
                guard formatChanged || n.graphNodeIsStale || n.requiredInputBuses > gn.inputBusCount || replace.contains(n.graphID)
                else { continue }
                if running && !n.canBeReplacedWhileRunning {
                    throw .invalidState("\(n.description): its format cannot change while the engine runs (stop it first)")
                }
                removals.append(n.graphID)
            }
            made.append((n, try makeGraphNode(for: n, graphRate: rate)))
        }
        let remade = Set(removals)
        let desired = Set(connections.map {
            Connection(source: $0.source.graphID, sourceBus: $0.sourceBus, destination: $0.destination.graphID,
                       destinationBus: $0.destinationBus)
        })
        let existing = Set(graph.connections.filter { !remade.contains($0.source) && !remade.contains($0.destination) })
        var changes: [PendingChange] = []
        for c in existing.subtracting(desired) {
            changes.append(.disconnect(destination: c.destination, destinationBus: c.destinationBus))
        }
        // Audio into parameters: the graph's against the model's (a remade node took its own with it).
        let desiredParameters = parameterConnections.map {
            ParameterConnection(source: $0.source.graphID, sourceBus: $0.sourceBus, destination: $0.parameter.node.graphID,
                                parameter: .parsed($0.parameter.address))
        }
        let existingParameters = graph.parameterConnections.filter { !remade.contains($0.source) && !remade.contains($0.destination) }
        for c in existingParameters where !desiredParameters.contains(c) {
            changes.append(.disconnectParameter(source: c.source, sourceBus: c.sourceBus, destination: c.destination, parameter: c.parameter))
        }
        changes += removals.map { .removeNode($0) }
        changes += made.map { .addNode($0.1) }
        let added = desired.subtracting(existing)
        for c in added.sorted(by: { ($0.destination, $0.destinationBus) < ($1.destination, $1.destinationBus) }) {
            changes.append(.connect(source: c.source, sourceBus: c.sourceBus, destination: c.destination, destinationBus: c.destinationBus))
        }
        for c in desiredParameters where !existingParameters.contains(c) {
            changes.append(.connectParameter(source: c.source, sourceBus: c.sourceBus, destination: c.destination, parameter: c.parameter))
        }
        for c in connections where added.contains(Connection(source: c.source.graphID, sourceBus: c.sourceBus,
                                                             destination: c.destination.graphID, destinationBus: c.destinationBus)) {
            for (address, value) in mixingParameters(for: c) {
                changes.append(.setParameter(node: c.destination.graphID, address: .parsed(address), value: value, rampDuration: 0))
            }
        }
        changes += pendingParameters
        return (changes, made)
    }

    /// Applies the graph's queued list. Live, waits (≤ 1 s) until the render thread adopted
    /// it. In offline manual rendering the engine drives the render itself (under its lock), so
    /// it adopts the list at once, between two `renderOffline` calls; a `.realtime` manual
    /// render adopts it at its next call.
    func commit(_ graph: AudioGraph) throws(AudioGraphError) {
        try graph.update(waitUntilApplied: running && manualMode == nil)
        if running && manualMode == .offline { _ = graph.render(frameCount: 0) }
    }

    /// A parameter of `node` changed: into the open `performChanges` list, else at once on the
    /// graph node (lock-free), else it waits for the next build (stored on the node).
    func parameterChanged(_ node: AudioNode, address: String, value: Double, call: String) {
        withLock {
            guard graph != nil, let gn = node.graphNode else { return }
            if changeDepth > 0 {
                pendingParameters.append(.setParameter(node: node.graphID, address: .parsed(address), value: value, rampDuration: 0))
                return
            }
            do throws(AudioGraphError) {
                try gn.setClampedParameter(address, value)
            } catch {
                engineProgrammerError(call, node, error.description)
            }
        }
    }

    /// The mixing settings of `source` changed: every mixer or environment input it feeds gets
    /// them (in the open `performChanges` list, else at once).
    func mixingChanged(_ source: AudioNode, call: String) {
        withLock {
            for c in connections where c.source === source {
                for (address, value) in mixingParameters(for: c) {
                    parameterChanged(c.destination, address: address, value: value, call: call)
                }
            }
        }
    }
}

extension GraphNode {
    /// Sets parameter `address` to `value` clamped to its range (the engine API's values clamp
    /// as Audio Units' do); NaN leaves it as it is.
    func setClampedParameter(_ address: String, _ value: Double) throws(AudioGraphError) {
        guard let p = parameter(address) else { throw .parameterNotFound(node: id, address: address) }
        guard !value.isNaN else { return }
        try p.setValue(p.info.clamped(value))
    }
}

extension ParameterAddress {
    /// An engine-API parameter key (`"input.1.pan"`) as a structured address, parsed once where the
    /// text enters a change list; a key that is not of the address form stays a plain name, which
    /// the graph then reports as not found (with the key's text).
    static func parsed(_ key: String) -> ParameterAddress { ParameterAddress(key) ?? ParameterAddress(name: key) }
}
