// Starting, pausing and stopping the engine: PulseAudio output and input, or manual rendering.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

extension Notification.Name {
    /// Posted (object: the engine) when the output or input device changes or disappears while
    /// the engine runs (cf. AVAudioEngineConfigurationChange). The engine has stopped rendering
    /// to it; stop and start the engine again to continue.
    public static let AudioEngineConfigurationChange = Notification.Name("AudioEngineConfigurationChange")
}

/// The PulseAudio side of a running engine.
final class LiveSession: @unchecked Sendable {
    let context: PulseContext
    var output: OutputNode?
    var input: InputNode?

    init(context: PulseContext) { self.context = context }
}

extension AudioEngine {
    /// Builds the graph and allocates everything rendering needs, so that `start()` starts
    /// quickly. Connects to PulseAudio (unless in manual rendering mode). Failures are reported
    /// by `start()`, which prepares again.
    public func prepare() {
        withLock { try? prepareGraph(call: "prepare()") }
    }

    /// Starts rendering: to PulseAudio's default sink (or the output node's device), capturing
    /// from the default source when the input node is used; or, in manual rendering mode, makes
    /// the engine ready for `renderOffline(_:to:)` / `manualRenderingBlock`.
    ///
    /// - Throws: ``AudioEngineError``: no PulseAudio server, an unknown device, a graph that
    ///   cannot be set up.
    public func start() throws(AudioEngineError) {
        lock.lock()
        defer { lock.unlock() }
        do {
            guard !running else { return }
            try prepareGraph(call: "start()")
            guard let graph else { return }
            if manualMode != nil {
                do throws(AudioGraphError) {
                    try graph.start()
                } catch {
                    throw .graph(call: "start()", error)
                }
                running = true
                return
            }
            guard let live, let output = outputNodeStorage?.graphNode as? OutputNode else {
                throw .invalidState(call: "start()", reason: "the engine has no PulseAudio output", code: AudioEngineError.invalidModeCode)
            }
            let input = inputNodeStorage?.graphNode as? InputNode
            do throws(PulseError) {
                try input?.startCapture(before: output, graph: graph)
                try output.start(graph: graph, context: live.context)
            } catch {
                input?.stopCapture()
                throw .pulse(call: "start()", error)
            }
            live.output = output
            live.input = input
            let notify: @Sendable (PulseError) -> Void = { [weak self] _ in
                guard let self else { return }
                NotificationCenter.default.post(name: .AudioEngineConfigurationChange, object: self)
            }
            output.setFaultHandler(notify)
            input?.captureStream?.setFaultHandler(notify)
            live.context.setFailureHandler(notify)
            running = true
        }
    }

    /// Stops rendering but keeps everything `prepare()` allocated; `start()` resumes.
    public func pause() {
        withLock {
            guard running else { return }
            stopDrivers()
        }
    }

    /// Stops rendering and releases what `prepare()` allocated (the graph, the PulseAudio
    /// streams). Players stop. `start()` builds everything again.
    public func stop() {
        withLock {
            stopDrivers()
            for n in attached { n.engineWillStop() }
            tearDownGraph()
            live?.context.close()
            live = nil
        }
    }

    /// Resets every node's render state (delay lines, filters, players' schedules), as if
    /// freshly set up; connections and settings stay.
    public func reset() {
        withLock {
            for n in attached { resetNode(n) }
        }
    }

    /// Whether the engine is rendering (started and not paused or stopped).
    public var isRunning: Bool { withLock { running } }

    /// The sample time and host time of the latest render slice (nil when not rendering).
    var lastRenderTime: AudioTime? {
        withLock {
            guard running, let graph else { return nil }
            let frames: Int64
            if let output = live?.output {
                frames = Int64(output.renderedFrames)
            } else {
                frames = manualState?.sampleTime ?? 0
            }
            return AudioTime(hostTime: AudioTime.currentHostTime, sampleTime: frames, atRate: graph.sampleRate)
        }
    }

    /// The output's latency in seconds as PulseAudio reports it (server + our ring); 0 when not
    /// running live.
    var outputPresentationLatency: TimeInterval {
        withLock { live?.output?.playbackStream?.latency()?.total ?? 0 }
    }

    /// The input's latency in seconds as PulseAudio reports it (capture latency + what waits in
    /// our capture ring); 0 when not capturing live.
    var inputPresentationLatency: TimeInterval {
        withLock { live?.input?.captureStream?.latency()?.total ?? 0 }
    }

    /// Resets one node: a fresh graph node (clean DSP state) in the running graph; players
    /// also drop their schedules.
    func resetNode(_ node: AudioNode) {
        withLock {
            node.engineWillReset()
            guard let graph, let old = node.graphNode, node.canBeReplacedWhileRunning else { return }
            do throws(AudioGraphError) {
                let fresh = try makeGraphNode(for: node, graphRate: graph.sampleRate)
                var changes: [PendingChange] = [.removeNode(node.graphID), .addNode(fresh)]
                for c in connections where c.source === node || c.destination === node {
                    changes.append(.connect(source: c.source.graphID, sourceBus: c.sourceBus,
                                            destination: c.destination.graphID, destinationBus: c.destinationBus))
                    if c.destination === node {
                        for (address, value) in mixingParameters(for: c) {
                            changes.append(.setParameter(node: node.graphID, address: .parsed(address), value: value, rampDuration: 0))
                        }
                    }
                }
                graph.enqueue(contentsOf: changes)
                try commit(graph)
                _ = old
                for (_, tap) in node.taps {
                    if let t = tap.liveTap { tap.droppedBefore += t.droppedBufferCount }
                    tap.liveTap = nil
                }
                node.graphNode = fresh
                installTaps(of: node, in: graph)
            } catch {
                recordEditFault(.graph(call: "reset()", error))
            }
        }
    }

    // MARK: Internals

    /// Connects to PulseAudio (live) and builds the graph, once.
    func prepareGraph(call: String) throws(AudioEngineError) {
        if manualMode == nil && live == nil {
            do {
                live = LiveSession(context: try PulseContext(applicationName: "AudioGraph engine"))
            } catch {
                throw .pulse(call: call, error)
            }
        }
        try buildGraph(call: call)
    }

    /// The PulseAudio connection capture nodes use (nil in manual rendering).
    var pulseContext: PulseContext? { live?.context }

    /// Stops the PulseAudio streams (output first: it drives the render thread), or ends
    /// manual rendering's running state.
    func stopDrivers() {
        if let live {
            live.output?.setFaultHandler(nil)
            live.input?.captureStream?.setFaultHandler(nil)
            live.context.setFailureHandler(nil)
            live.output?.stop()
            live.input?.stopCapture()
            live.output = nil
            live.input = nil
        }
        graph?.stop()
        running = false
    }
}
