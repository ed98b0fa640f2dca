// Playing a described graph live to PulseAudio, with timed updates and typed live commands.
import AudioGraphNodes
@_exported import AudioGraphPulse
import Foundation
import Synchronization

/// Why live playback failed.
public enum LivePlayerError: Error, Sendable, CustomStringConvertible {
    /// The graph could not be built or updated (the CLI exits with 1).
    case graph(AudioGraphError)
    /// PulseAudio failed: no server, unknown device, server or sink gone (the CLI exits with 3).
    case pulse(PulseError)
    /// The graph's output node is not a PulseAudio `output` node.
    case notLive(String)

    /// One line for users.
    public var description: String {
        switch self {
        case .graph(let e): return e.description
        case .pulse(let e): return e.description
        case .notLive(let s): return s
        }
    }
}

/// What a finished live run measured.
public struct LivePlayerSummary: Sendable {
    /// Frames of the graph rendered.
    public var renderedFrames: Int
    /// The latency while the graph played: the mean of the readings taken while rendering (every
    /// 50 polls; server part and ring part averaged apart), else the reading at drain or stop
    /// (nil if none arrived). Readings after the end frame was rendered are left out: the ring
    /// then empties and would understate what the render thread holds while it plays.
    public var latency: PulseLatency?
    /// The input's latency while the graph played (graphs with an `input`): libpulse's capture
    /// latency plus what waited in the capture ring, the mean of the readings taken with the
    /// output's; nil without an input or a reading.
    public var inputLatency: PulseLatency?
    /// The engine's own share of a round trip, seconds: the frames one render call takes from the
    /// input before the first of them reaches the output (one output quantum).
    public var engineLatency: Double = 0
    /// The latency asked for, milliseconds.
    public var requestedLatency: Double
    /// Server underruns.
    public var underruns: Int
    /// Capture underruns/overruns of the input node, if any.
    public var captureUnderruns: Int
    /// Frames of captured audio the input dropped to bound its delay (drift control), if any.
    public var captureDroppedFrames: Int = 0
    /// Full duplex: how far the input's reads were steered from the source's rate to follow the
    /// output's clock at the end, parts per million (negative: the source was slower than the
    /// sink). 0 when input and output share a clock.
    public var captureRateCorrection: Int = 0
    /// Capture overruns of the input node, if any.
    public var captureOverruns: Int
    /// Updates applied, and the graph frame each took effect at.
    public var appliedUpdates: [(scheduled: Int64, applied: Int64)]
    /// Whether the render thread ran with real-time priority.
    public var realtime: Bool
    /// `recorder` nodes whose file could not be finished, one line each (empty: every recording
    /// was renamed into place).
    public var recordingFailures: [String] = []
}

/// Plays a described graph in real time through its `output` node (cf. AVAudioEngine running
/// with its output node): builds the graph with PulseAudio `output`/`input` nodes, connects to
/// the server, and drives it.
///
/// Timed `updates` take effect at the first slice boundary at or after their frame: their
/// change lists are built before playback starts and each is published with
/// `AudioGraph.update(atSampleTime:)` up to 100 ms ahead, once the one before it has been
/// adopted; the render thread adopts it at its boundary by itself. Should the control thread
/// fall behind, the render thread is held (between slices) at the first update not published
/// yet, so no update is ever late and no slice renders a half-applied list.
///
/// Commands (``apply(_:)``, a ``LiveCommand``): `setParameter` sets a parameter at once
/// (ramping over its duration); `connect` and `disconnect` queue changes; `update` applies the
/// queued changes as one list (cf. `AUGraphUpdate`).
///
/// Thread safety: one control thread calls everything (`init`, `start`, `poll`, `apply`,
/// `stop`). The graph renders on the output's render thread.
public final class LivePlayer {
    /// The running graph.
    public let graph: AudioGraph
    /// Its output node.
    public let output: OutputNode
    /// Its input node, if any.
    public let input: InputNode?
    /// The PulseAudio connection.
    package let context: PulseContext
    /// The graph's timeline rate.
    public let sampleRate: Double

    // MARK: Control thread only
    private var updates: [(frame: Int64, changes: [PendingChange])] = []
    private var nextUpdate = 0
    private var applied: [(scheduled: Int64, applied: Int64)] = []
    private var lastLatency: PulseLatency?
    /// Sums of the latency readings taken while rendering, and their count.
    private var latencySum = (server: 0.0, ring: 0.0, count: 0)
    /// The same for the input's readings.
    private var inputLatencySum = (server: 0.0, ring: 0.0, count: 0)
    private var started = false
    private var drained = false
    private var polls = 0
    /// `connect` / `disconnect` commands waiting for an `update` command (kept here, not on the
    /// graph's list, so a timed update does not take them along).
    private var commandQueue: [PendingChange] = []
    /// How far ahead of the rendered audio (frames) a timed update is published: 100 ms, at
    /// least four slices.
    private var publishAhead: Int64 { max(4 * Int64(graph.maximumFramesPerSlice), Int64(sampleRate / 10)) }

    /// The first slice boundary at or after `frame` (the output renders quanta that divide the
    /// slice from 0, so every slice boundary is a render-call boundary).
    private static func boundary(of frame: Int64, slice: Int) -> Int64 {
        let s = Int64(slice)
        return frame <= 0 ? 0 : (frame + s - 1) / s * s
    }

    /// Builds and initializes the graph and connects to PulseAudio.
    ///
    /// - Parameters:
    ///   - device: overrides the output node's sink (`--device`).
    ///   - server: a server string; nil for the default (`$PULSE_SERVER` or the user's server).
    public init(_ validated: ValidatedGraph, device: String? = nil, server: String? = nil) throws(LivePlayerError) {
        let d = validated.description
        sampleRate = d.sampleRate
        do {
            context = try PulseContext(server: server, applicationName: "audiograph")
        } catch {
            throw .pulse(error)
        }
        var output: OutputNode?
        var input: InputNode?
        let graph: AudioGraph
        do {
            // An offline graph plays too: its generic output becomes a PulseAudio output on the
            // default sink (or --device), as `render` does the other way round.
            graph = try GraphLoader.build(validated, outputs: .live(device: device)) { [context] node in
                if let o = node as? OutputNode { output = o }
                if let i = node as? InputNode {
                    i.pulseContext = context
                    input = i
                }
            }.graph
            guard let output else {
                context.close()
                throw LivePlayerError.notLive("the graph has no output node")
            }
            updates = try d.updateSchedule(timelineRate: d.sampleRate).map { entry in
                (frame: entry.frame, changes: try GraphAssembly.changes(for: d.updates[entry.index], sampleRate: d.sampleRate))
            }
            self.output = output
        } catch let error as LivePlayerError {
            context.close()
            throw error
        } catch let error as AudioGraphError {
            context.close()
            throw .graph(error)
        } catch {
            context.close()
            throw .notLive("\(error)")
        }
        self.graph = graph
        self.input = input
    }

    deinit {
        _ = stop()
    }

    /// Starts capture (if the graph has an input) and playback. With `frames`, exactly that many
    /// frames of the graph play (graph time, whatever the control thread does meanwhile), then
    /// silence: see ``hasPlayedToEnd`` and ``drain(timeout:)``.
    public func start(frames: Int64? = nil) throws(LivePlayerError) {
        guard !started else { return }
        do {
            try input?.startCapture(before: output, graph: graph)
            try output.start(graph: graph, context: context, renderLimit: updates.first?.frame, endFrame: frames)
        } catch {
            input?.stopCapture()
            throw .pulse(error)
        }
        started = true
    }

    /// Frames the graph has rendered (the sample time of the next slice).
    public var renderedFrames: Int { output.renderedFrames }

    /// Why playback or capture failed, if it did (the server, the sink or the source).
    public var fault: PulseError? { output.fault ?? input?.fault }

    /// Whether the `frames` given to ``start(frames:)`` have all been rendered.
    public var hasPlayedToEnd: Bool { output.playbackStream?.hasRenderedToEnd ?? false }

    /// Waits (at most `timeout` seconds) until what was rendered has been played by the server.
    /// Call after ``hasPlayedToEnd``, before ``stop()``.
    @discardableResult
    public func drain(timeout: Double = 5) -> Bool {
        // The latency is read while audio is still queued (a drained stream reports 0).
        if latencySum.count == 0, let l = output.playbackStream?.latency() { lastLatency = l }
        drained = true
        return output.playbackStream?.drain(timeout: timeout) ?? true
    }

    /// Applies timed updates that are due, records the latency, and checks for faults. Call every
    /// few milliseconds from the control thread.
    ///
    /// - Throws: `.pulse` when the server, the sink or the source failed; `.graph` when an update
    ///   is rejected by the graph.
    public func poll() throws(LivePlayerError) {
        if let fault = output.fault ?? input?.fault { throw .pulse(fault) }
        // The next timed update is published ahead of its time (once the previous one has been
        // adopted): the render thread adopts it by itself at its slice boundary. Updates that
        // fall on the same boundary go into one list (two plans timed at one boundary would be
        // adopted a slice apart). The render thread is held at the first update not published
        // yet, so a control thread that falls behind delays audio, never an update.
        if nextUpdate < updates.count, !graph.hasPendingPlan {
            let boundary = Self.boundary(of: updates[nextUpdate].frame, slice: graph.maximumFramesPerSlice)
            if boundary - Int64(output.renderedFrames) <= publishAhead {
                var due = 0
                while nextUpdate + due < updates.count,
                      Self.boundary(of: updates[nextUpdate + due].frame, slice: graph.maximumFramesPerSlice) == boundary {
                    graph.enqueue(contentsOf: updates[nextUpdate + due].changes)
                    due += 1
                }
                do {
                    try graph.update(waitUntilApplied: false, atSampleTime: boundary)
                } catch {
                    throw .graph(error)
                }
                for i in nextUpdate..<(nextUpdate + due) { applied.append((updates[i].frame, boundary)) }
                nextUpdate += due
                output.setRenderLimit(nextUpdate < updates.count ? updates[nextUpdate].frame : nil)
            }
        }
        graph.collectRetiredPlans()
        polls += 1
        if polls % 50 == 0, !hasPlayedToEnd, let l = output.playbackStream?.latency() {
            latencySum = (latencySum.server + l.server, latencySum.ring + l.ring, latencySum.count + 1)
            let n = Double(latencySum.count)
            lastLatency = PulseLatency(server: latencySum.server / n, ring: latencySum.ring / n)
            if let i = input?.captureStream?.latency() {
                inputLatencySum = (inputLatencySum.server + i.server, inputLatencySum.ring + i.ring, inputLatencySum.count + 1)
            }
        }
    }

    /// Runs one command on the control thread: a parameter is set at once, connection changes
    /// wait in a queue of the player's own until ``LiveCommand/update`` applies them (which waits
    /// up to 2 s for a timed update published ahead of its time to be adopted first).
    ///
    /// - Throws: ``LivePlayerError/graph(_:)`` for an unknown node or parameter, a value or ramp
    ///   out of range, or connection changes the graph refuses at `update`.
    public func apply(_ command: LiveCommand) throws(LivePlayerError) {
        switch command {
        case let .setParameter(id, address, value, rampDuration):
            guard let node = graph.node(id) else { throw .graph(.nodeNotFound(id)) }
            do {
                try node.setParameter(address, value, rampDuration: rampDuration)
            } catch {
                throw .graph(error)
            }
        case let .connect(from, to):
            commandQueue.append(.connect(source: from.node, sourceBus: from.bus, destination: to.node, destinationBus: to.bus))
        case let .disconnect(to):
            commandQueue.append(.disconnect(destination: to.node, destinationBus: to.bus))
        case .update:
            // A timed update published ahead of its time goes first (a list applied now would
            // take its changes with it, early): wait until the render thread has adopted it.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(2))
            // (Once the end frame is rendered nothing adopts plans any more: do not wait then.)
            while graph.hasPendingPlan && clock.now < deadline && !hasPlayedToEnd { usleep(1000) }
            graph.enqueue(contentsOf: commandQueue)
            commandQueue.removeAll()
            do {
                try graph.update(waitUntilApplied: !hasPlayedToEnd)
            } catch {
                throw .graph(error)
            }
        }
    }

    /// Stops playback and capture, closes the connection, and returns what was measured. Idempotent.
    @discardableResult
    public func stop() -> LivePlayerSummary {
        let stream = output.playbackStream
        if !drained, latencySum.count == 0, let l = stream?.latency() { lastLatency = l }
        var inputLatency: PulseLatency?
        if inputLatencySum.count > 0 {
            let n = Double(inputLatencySum.count)
            inputLatency = PulseLatency(server: inputLatencySum.server / n, ring: inputLatencySum.ring / n)
        } else if input != nil {
            inputLatency = input?.captureStream?.latency()
        }
        var summary = LivePlayerSummary(
            renderedFrames: output.renderedFrames, latency: lastLatency, requestedLatency: output.properties.latency,
            underruns: output.underrunCount, captureUnderruns: input?.captureStream?.underrunCount ?? 0,
            captureOverruns: input?.captureStream?.overrunCount ?? 0, appliedUpdates: applied,
            realtime: stream?.hasRealtimePriority ?? false)
        summary.inputLatency = inputLatency
        summary.captureDroppedFrames = input?.captureStream?.droppedFrames ?? 0
        summary.captureRateCorrection = input?.captureStream?.rateCorrectionPartsPerMillion ?? 0
        summary.engineLatency = Double(output.streamConfiguration(graph: graph).playbackQuantumFrames) / sampleRate
        output.stop()
        input?.stopCapture()
        graph.stop()
        // The render thread has stopped: recorders write what is left and rename their files.
        for case let recorder as RecorderNode in graph.nodes {
            do {
                try recorder.finish()
            } catch {
                summary.recordingFailures.append("node \"\(recorder.id)\": \(error)")
            }
        }
        if started {
            started = false
        }
        context.close()
        return summary
    }
}
