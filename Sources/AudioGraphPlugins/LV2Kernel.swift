// Render side of LV2Node: runs the plugin instances on buffers connected at initialize.
import AudioGraphCore

/// Render side of ``LV2Node``.
///
/// Every port of every instance is connected once, here on the control thread, to memory this
/// kernel owns: audio inputs to an input scratch bus, audio outputs to an output scratch bus,
/// control inputs to one shared value per parameter, control and CV outputs to scratch, CV
/// inputs to silence. A render copies the pulled input into the scratch, sets the controls and
/// runs — in pieces when a parameter changes within the slice, each piece at the start of the
/// scratch — and copies the result to the output bus. No `connect_port` on the render thread.
///
/// Thread safety: created (instantiate, connect, activate, latency probe) and released on a
/// control thread; `render` on the render thread only, real-time safe as far as the plugin's
/// `run` is (the host's part allocates nothing and takes no lock: LV2RealTimeSafetyTests).
final class LV2Kernel: NodeKernel, @unchecked Sendable {
    /// While a parameter ramps (changes at every frame), the plugin runs in sub-blocks of this
    /// many frames, its controls set to the values at each sub-block's first frame (LV2 control
    /// ports are read once per run). Steps are still sample-exact outside a ramp.
    static let rampBlock = 16

    // MARK: Fixed at creation
    /// `var` only so that deinit can release the instances (stop the worker, deactivate,
    /// cleanup) before the port memory they are connected to is freed.
    private var instances: [LV2Instance]
    /// The atom port buffers of each instance (same order as `instances`).
    private let atoms: [LV2AtomBuffers]
    private let hasAtoms: Bool
    /// The MIDI events of each slice (nil: the plugin takes no MIDI).
    private let collector: MIDIEventCollector?
    /// Parameter indices of the control inputs, in port order; `controlValues` follows it.
    private let controlCount: Int
    /// Which control inputs are `lv2:toggled` / `lv2:integer` (their values are quantised).
    private let controlToggled: [Bool]
    private let controlInteger: [Bool]
    private let bypassIndex: Int?
    private let inputsPerInstance: Int
    private let outputsPerInstance: Int
    /// Output control of instance 0 reporting latency, if any.
    private let latencyValue: UnsafeMutablePointer<Float>?
    private let latencyReport: LV2LatencyReport
    private let faults: LV2RenderFaults
    private let outputLimit: Float

    // MARK: Render thread only
    /// Pieces in a row whose output was non-finite or beyond the limit; the plugin is muted at
    /// ``LV2RenderFaults/muteAfterBadPieces``.
    private var badPiecesInARow = 0
    private var muted = false

    // MARK: Render thread only (connected to the plugins)
    private let controlValues: UnsafeMutablePointer<Float>
    private let inputScratch: ChannelBufferStorage
    private let outputScratch: ChannelBufferStorage
    private let parameterSlice: UnsafeMutablePointer<ParameterValues>

    // MARK: Control thread only (ownership of port memory that nothing reads)
    private let portScratch: [UnsafeMutablePointer<Float>]
    private let silence: UnsafeMutablePointer<Float>

    init(node: LV2Node, maximumFramesPerSlice: Int) throws(LV2Error) {
        let plugin = node.plugin
        let format = node.outputFormats[0]
        let channels = plugin.runsPerChannel ? format.channelCount : 1
        let count = node.instanceCount(channels: channels)
        var made: [LV2Instance] = []
        for _ in 0..<count { made.append(try node.world.instantiate(uri: plugin.uri, sampleRate: format.sampleRate,
                                                                                maximumFrames: maximumFramesPerSlice)) }
        instances = made
        let controls = plugin.controlInputs
        controlCount = controls.count
        controlToggled = controls.map(\.isToggled)
        controlInteger = controls.map(\.isInteger)
        bypassIndex = node.parameterIndex(of: ParameterAddress(name: LV2Node.bypassName)).flatMap { $0 >= controls.count ? $0 : nil }
        inputsPerInstance = plugin.audioInputs.count
        outputsPerInstance = plugin.audioOutputs.count
        latencyReport = node.reportedLatency
        faults = node.renderFaults
        outputLimit = node.outputLimit
        let frames = maximumFramesPerSlice

        controlValues = .allocate(capacity: max(1, controls.count))
        // The node's parameters start with the control inputs, in port order.
        for k in controls.indices { (controlValues + k).initialize(to: controls[k].hostValue(Float(node.parameters[k].value))) }
        inputScratch = ChannelBufferStorage(channelCount: count * plugin.audioInputs.count, capacity: frames)
        outputScratch = ChannelBufferStorage(channelCount: count * plugin.audioOutputs.count, capacity: frames)
        silence = .allocate(capacity: frames)
        silence.initialize(repeating: 0, count: frames)
        parameterSlice = .allocate(capacity: max(1, node.parameters.count))

        var scratch: [UnsafeMutablePointer<Float>] = []
        var latency: UnsafeMutablePointer<Float>?
        var atomBuffers: [LV2AtomBuffers] = []
        for (i, instance) in made.enumerated() {
            var audioIn = 0, audioOut = 0, control = 0
            for port in plugin.ports {
                switch (port.kind, port.isInput) {
                case (.audio, true):
                    instance.connect(port: port.index, to: inputScratch.list.channel(i * inputsPerInstance + audioIn))
                    audioIn += 1
                case (.audio, false):
                    instance.connect(port: port.index, to: outputScratch.list.channel(i * outputsPerInstance + audioOut))
                    audioOut += 1
                case (.control, true):
                    instance.connect(port: port.index, to: controlValues + control)
                    control += 1
                case (.control, false):
                    let value = UnsafeMutablePointer<Float>.allocate(capacity: 1)
                    value.initialize(to: 0)
                    scratch.append(value)
                    instance.connect(port: port.index, to: value)
                    if i == 0, port.reportsLatency { latency = value }
                case (.cv, true):
                    instance.connect(port: port.index, to: silence)
                case (.cv, false):
                    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames)
                    buffer.initialize(repeating: 0, count: frames)
                    scratch.append(buffer)
                    instance.connect(port: port.index, to: buffer)
                case (.atom, _):
                    continue  // LV2AtomBuffers connects them.
                default:
                    // Optional ports of kinds the host does not feed (checkHostable refused the others).
                    instance.connect(port: port.index, to: nil)
                }
            }
            atomBuffers.append(LV2AtomBuffers(info: plugin, instance: instance, map: node.world.uridMap))
            instance.activate()
        }
        atoms = atomBuffers
        hasAtoms = atomBuffers.contains { !$0.isEmpty }
        collector = atomBuffers.contains { $0.takesMIDI } ? MIDIEventCollector(port: node.midiInput) : nil
        portScratch = scratch
        latencyValue = latency
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
        // The plugin writes its latency when it runs: measured on a probe instance so that the
        // ones that render start untouched.
        let controlsNow = Dictionary(uniqueKeysWithValues: controls.enumerated().map { ($1.symbol, node.parameters[$0].value) })
        let latencyFrames = try node.world.latency(uri: plugin.uri, sampleRate: format.sampleRate, controls: controlsNow)
        latency?.pointee = Float(latencyFrames)
        node.reportedLatency.store(latencyFrames)
    }

    deinit {
        // The instances first: their release runs the plugin's deactivate and cleanup, which may
        // still touch the connected ports.
        instances = []
        controlValues.deallocate()
        silence.deallocate()
        parameterSlice.deallocate()
        portScratch.forEach { $0.deallocate() }
    }

    override func receive(_ message: KernelMessage) {
        if let m = message as? MIDISequenceSources { collector?.install(m) }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        // This slice's MIDI events, sorted by offset; `nextEvent` walks them piece by piece.
        let eventCount = collector?.collect(context) ?? 0
        var nextEvent = 0
        let input = inputs.pull(0)
        var varying = false
        for k in 0..<parameters.count {
            let v = parameterValues(k, context)
            parameterSlice[k] = v
            if !v.isConstant { varying = true }
        }
        let inScratch = inputScratch.list
        let outScratch = outputScratch.list
        var start = 0
        while start < n {
            var end = n
            if varying {
                end = start + 1
                while end < n && sameParameters(at: end, as: start) { end += 1 }
                if end == start + 1 {
                    // Changing at every frame: a ramp, run in sub-blocks up to where it holds still.
                    let limit = min(n, start + Self.rampBlock)
                    while end < limit && !sameParameters(at: end, as: end - 1) { end += 1 }
                }
            }
            let length = end - start
            if let bypassIndex, parameterSlice[bypassIndex][start] >= 0.5 {
                // Bypassed: the input's channels pass to the output's, the plugin does not run.
                for c in 0..<out.channelCount {
                    InputBuffer.copyChannel(c, of: input, from: start, to: out.channel(c) + start, count: length)
                }
            } else if muted {
                // The plugin kept producing garbage: it runs no more, the node is silent.
                for c in 0..<out.channelCount { (out.channel(c) + start).update(repeating: 0, count: length) }
            } else {
                for k in 0..<controlCount { controlValues[k] = LV2PortInfo.hostValue(parameterSlice[k][start], toggled: controlToggled[k], integer: controlInteger[k]) }
                var nonFinite = 0
                for c in 0..<inScratch.channelCount {
                    InputBuffer.copyChannel(c, of: input, from: start, to: inScratch.channel(c), count: length)
                    // The plugin never sees NaN or infinity (some crash on it, many keep it forever).
                    nonFinite += NonFiniteSamples.replaceWithSilence(inScratch.channel(c), count: length)
                }
                faults.countNonFiniteInput(nonFinite)
                if hasAtoms { for i in 0..<atoms.count { atoms[i].prepare() } }
                if let collector {
                    while nextEvent < eventCount && collector.offset(at: nextEvent) < end {
                        let e = collector.event(at: nextEvent), frame = max(0, collector.offset(at: nextEvent) - start)
                        for i in 0..<atoms.count where !atoms[i].appendMIDI(e, frame: frame) { collector.port.countDropped(1) }
                        nextEvent += 1
                    }
                }
                for i in 0..<instances.count { instances[i].run(frameCount: length) }
                var sane = true
                for c in 0..<outScratch.channelCount
                where !NonFiniteSamples.allWithin(outScratch.channel(c), count: length, limit: outputLimit) {
                    sane = false
                }
                if sane {
                    badPiecesInARow = 0
                    for c in 0..<out.channelCount {
                        (out.channel(c) + start).update(from: outScratch.channel(c), count: length)
                    }
                } else {
                    // Non-finite or absurd output never leaves the node; a plugin that keeps at it is muted.
                    for c in 0..<out.channelCount { (out.channel(c) + start).update(repeating: 0, count: length) }
                    faults.countBadOutputPiece()
                    badPiecesInARow += 1
                    if badPiecesInARow >= LV2RenderFaults.muteAfterBadPieces {
                        muted = true
                        faults.mute()
                    }
                }
            }
            start = end
        }
        if let latencyValue { latencyReport.store(LV2World.latencyFrames(reported: latencyValue.pointee)) }
        outputIsSilent[0] = InputBuffer.isAllZero(out, frameCount: n)
    }

    /// Whether every parameter has the same value at frames `a` and `b` of the slice. Real-time safe.
    @inline(__always)
    private func sameParameters(at a: Int, as b: Int) -> Bool {
        for k in 0..<parameters.count {
            let v = parameterSlice[k]
            if !v.isConstant, v[a] != v[b] { return false }
        }
        return true
    }
}
