// The engine API's node: what AVAudioNode is, over one node of the AUGraph-style layer.
import AudioGraphNodes
import Foundation
import Synchronization

/// A node of an ``AudioEngine`` (cf. AVAudioNode): a source, processor or I/O node with input
/// and output buses. Attach it to an engine, connect it, and the engine builds the matching node
/// of its ``AudioGraph`` (a ``GraphNode``) when it prepares or starts.
///
/// Formats: `outputFormat(forBus:)` is the format given when the bus was connected, else the
/// node's own default (a source's format, the engine's format for mixers, what reaches an
/// effect); once the engine is prepared, the format the graph resolved. `inputFormat(forBus:)` is
/// the format of what is connected to the bus.
///
/// Thread safety: configure from any control thread (the engine serialises calls); taps deliver
/// on a tap thread; nothing here runs on the render thread.
public class AudioNode: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The engine the node is attached to (nil when detached).
    public internal(set) weak var engine: AudioEngine?

    // MARK: Control thread only (guarded by the engine's lock)
    /// The node type's name ("player", "mixer", ...): ids and messages use it.
    let kindName: String
    /// The id of this node in the engine's graph (set when attached).
    var graphID: String
    /// The graph's node while the engine has a graph.
    var graphNode: GraphNode?
    /// Formats given when output buses were connected (`connect(_:to:format:)`).
    var connectionFormats: [Int: AudioFormat] = [:]
    /// Parameter values by graph address, pushed to every graph node made for this node.
    var storedParameters: [String: Double] = [:]
    /// Taps (the application's and the engine's own, e.g. recorders'), installed on every graph
    /// node made for this node. Several per bus.
    var taps: [TapKey: TapRequest] = [:]
    /// The connection format output bus 0 had when the current graph node was made.
    var graphNodeFormat: AudioFormat?
    /// Input buses the connections need: the highest connected bus plus one (mixers and
    /// environments size their graph nodes from it).
    var requiredInputBuses: Int { (connectedInputBuses.max() ?? -1) + 1 }
    /// Set when a configuration the graph node fixes at creation changed (an EQ band's type):
    /// the engine makes a new graph node in the next change list.
    var needsNewGraphNode = false
    /// Whether the current graph node no longer matches the node's configuration.
    var graphNodeIsStale: Bool { needsNewGraphNode }
    /// Mixing settings this node applies as a source (``AudioMixing``), and per destination.
    var mixing = MixingSettings()
    var destinationMixing: [DestinationKey: MixingSettings] = [:]

    init(kindName: String) {
        self.kindName = kindName
        graphID = kindName
    }

    public var description: String { "\(String(describing: type(of: self))) \"\(graphID)\"" }

    /// Nodes are equal only to themselves (AVAudioNode's NSObject identity).
    public static func == (a: AudioNode, b: AudioNode) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Buses and formats

    /// Number of input buses.
    public var numberOfInputs: Int { 1 }
    /// Number of output buses.
    public var numberOfOutputs: Int { 1 }
    /// The input buses a connection may name (mixers grow to this).
    var maximumInputBuses: Int { numberOfInputs }

    /// The format of input bus `bus`: what its connection carries, else the node's default.
    public func inputFormat(forBus bus: AudioNodeBus) -> AudioFormat {
        checkBus(bus, count: numberOfInputs, "inputFormat(forBus:)", scope: "input")
        if let engine { return engine.inputFormat(of: self, bus: bus) }
        return defaultInputFormat(bus: bus, engineFormat: AudioEngine.fallbackFormat)
    }

    /// The format of output bus `bus` (see the type's discussion).
    public func outputFormat(forBus bus: AudioNodeBus) -> AudioFormat {
        checkBus(bus, count: numberOfOutputs, "outputFormat(forBus:)", scope: "output")
        if let engine { return engine.outputFormat(of: self, bus: bus) }
        return connectionFormats[bus] ?? defaultOutputFormat(bus: bus, engineFormat: AudioEngine.fallbackFormat, input: nil)
    }

    /// The name of an input bus (nil: unnamed, as for most Apple nodes).
    public func name(forInputBus bus: AudioNodeBus) -> String? {
        checkBus(bus, count: numberOfInputs, "name(forInputBus:)", scope: "input")
        return nil
    }

    /// The name of an output bus (nil: unnamed).
    public func name(forOutputBus bus: AudioNodeBus) -> String? {
        checkBus(bus, count: numberOfOutputs, "name(forOutputBus:)", scope: "output")
        return nil
    }

    // MARK: Taps

    /// The tap block: a buffer of exactly `bufferSize` frames (a final one may be shorter) and
    /// the time of its first frame. It runs on a tap thread, never on the render thread.
    public typealias TapBlock = AudioNodeTapBlock

    /// Records what output bus `bus` produces and hands it to `block` in buffers of exactly
    /// `bufferSize` frames (0: the engine's slice), on a non-real-time thread, live and in manual
    /// rendering alike. `format` nil or the bus's format; another format is a programmer error
    /// (as on Apple's platforms). A slow block loses whole buffers (counted), never audio on the
    /// render thread. Several taps on one bus (a Linux addition, as The Amazing Audio Engine's
    /// receivers): each gets every frame, in its own `bufferSize`; recorders
    /// (``AudioNodeRecorder``) tap the bus on their own and never take these.
    public func installTap(onBus bus: AudioNodeBus, bufferSize: AudioFrameCount, format: AudioFormat?,
                           block: @escaping TapBlock) {
        checkBus(bus, count: numberOfOutputs, "installTap(onBus:bufferSize:format:block:)", scope: "output")
        guard let engine else {
            engineProgrammerError("installTap(onBus:bufferSize:format:block:)", self, "the node is not attached to an engine")
        }
        engine.installTap(on: self, bus: bus, bufferSize: Int(bufferSize), format: format, block: block)
    }

    /// Removes the taps installed with ``installTap(onBus:bufferSize:format:block:)`` on `bus`
    /// (their last, partial buffers are delivered first); recorders' taps stay. No tap: nothing happens.
    public func removeTap(onBus bus: AudioNodeBus) {
        engine?.removeTaps(on: self, bus: bus)
    }

    /// Buffers the application's tap blocks on `bus` lost since they were installed (a slow
    /// block; a Linux addition). For the input node, buffers' worth of captured audio lost
    /// before the graph read it (capture overruns, drift correction) count too.
    public func droppedTapBufferCount(onBus bus: AudioNodeBus) -> Int {
        engine?.withLock { taps.values.filter { $0.bus == bus && !$0.isInternal }.reduce(0) { $0 + $1.droppedBufferCount } } ?? 0
    }

    // MARK: State

    /// Clears the node's render state (delay lines, filters, scheduled audio of a player).
    public func reset() {
        engine?.resetNode(self)
    }

    /// The time of the last render cycle of the node's engine (nil when not rendering).
    public var lastRenderTime: AudioTime? { engine?.lastRenderTime }

    /// The node's processing latency in seconds (0 for nodes without look-ahead).
    public var latency: TimeInterval { 0 }

    /// The latency from this node's output to the output device, in seconds (the output's
    /// reported latency; 0 in manual rendering).
    public var outputPresentationLatency: TimeInterval { engine?.outputPresentationLatency ?? 0 }

    // MARK: Hooks for the node types (internal)

    /// Makes the graph node for this node. `outputFormat` is the format of output bus 0 given at
    /// connection (nil: the node's default rules).
    func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                       engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        fatalError("\(type(of: self)) must override makeGraphNode")
    }

    /// `node` with its output pinned to the rate and channel count of `outputFormat`, the format
    /// given at connection (nil: left to the node's own rules); for ``makeGraphNode(sampleRate:maximumFrames:outputFormat:engineFormat:)``.
    func declaring(_ outputFormat: StreamFormat?, on node: GraphNode) -> GraphNode {
        if let outputFormat { node.declaredFormat = PartialStreamFormat(sampleRate: outputFormat.sampleRate, channelCount: outputFormat.channelCount) }
        return node
    }

    /// The format of an output bus with no connection format: by default the format of what
    /// reaches input 0 (effects), else the engine's.
    func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        input ?? engineFormat
    }

    /// The format of unconnected input bus `bus`.
    func defaultInputFormat(bus: Int, engineFormat: AudioFormat) -> AudioFormat { engineFormat }

    /// The parameters of input bus `bus` that carry a source's mixing settings (mixer: volume
    /// and pan; environment: gain, position, occlusion, obstruction, reverb blend). None for
    /// nodes that do not mix.
    func mixingParameters(bus: Int, settings: MixingSettings) -> [(String, Double)] { [] }

    /// Whether the engine may set a new graph node for this one while running when its format
    /// changes (stateless nodes); nodes with state throw instead.
    var canBeReplacedWhileRunning: Bool { true }

    /// Called after a new graph node was made for this node (parameters already pushed).
    func didMakeGraphNode(_ node: GraphNode) {}

    /// The engine is about to stop and release its graph (players stop).
    func engineWillStop() {}

    /// The engine resets this node (players drop their schedules).
    func engineWillReset() {}

    /// The node type's parameter table (its graph node's): the one range of each parameter the
    /// engine API sets. Nodes without parameters have none.
    var parameterTable: ParameterTable { .none }

    /// `value` for parameter `address` clamped to its range, as Audio Units clamp a value set
    /// out of range: the graph node's range once it exists (at its rate), else the table's (a
    /// bound that depends on the rate, such as Nyquist, applies when the graph node is made).
    /// Nil for NaN, which setters ignore. Call under the engine's lock when attached.
    func clampedParameterValue(_ address: String, _ value: Double) -> Double? {
        guard !value.isNaN else { return nil }
        if let p = graphNode?.parameter(address) { return p.info.clamped(value) }
        guard let a = ParameterAddress(address),
              let info = parameterTable.parameterInfo(for: a, sampleRate: .infinity, inputBusCount: .max, bandCount: .max)
        else { return value }
        return info.clamped(value)
    }

    /// `value` clamped to the range of `address` in the node's table at no particular rate (for
    /// values a unit keeps itself, such as a wet/dry mix kept through bypass); `fallback` for NaN.
    func tableClamped(_ address: String, _ value: Float, fallback: Float) -> Float {
        guard let a = ParameterAddress(address),
              let info = parameterTable.parameterInfo(for: a, sampleRate: .infinity, inputBusCount: .max, bandCount: .max)
        else { return value.isNaN ? fallback : value }
        return value.isNaN ? fallback : Float(info.clamped(Double(value)))
    }

    /// Stores a parameter value, clamped to its range (NaN is ignored), and applies it: in the
    /// engine's open change list, else at once on the graph node (lock-free), else at the next
    /// build.
    func setStoredParameter(_ address: String, _ value: Double, call: String) {
        // Under the engine's lock when attached: setters may be called from any thread.
        guard let engine else {
            if let v = clampedParameterValue(address, value) { storedParameters[address] = v }
            return
        }
        engine.withLock {
            guard let v = clampedParameterValue(address, value) else { return }
            storedParameters[address] = v
            engine.parameterChanged(self, address: address, value: v, call: call)
        }
    }

    /// A property the graph node can take while running (the environment's distance model and reverb, the
    /// reverb's preset): set on the graph node in the engine's open change list, else committed at once.
    func propertyChanged(_ name: String, _ value: any Sendable) {
        guard let engine else { return }
        engine.withLock {
            guard let gn = graphNode else { return }
            do throws(AudioGraphError) {
                try gn.setProperty(name, value)
                if engine.graph != nil, engine.changeDepth == 0 { try engine.commit(engine.graph!) }
            } catch {
                engine.recordEditFault(.graph(call: name, error))
            }
        }
    }

    /// A stored parameter, or `defaultValue`.
    func storedParameter(_ address: String, default defaultValue: Double) -> Double {
        storedParameters[address] ?? defaultValue
    }

    /// The input buses that have a connection (nodes with growing buses count from them).
    var connectedInputBuses: Set<Int> {
        guard let engine else { return [] }
        return engine.withLock { Set(engine.connections.filter { $0.destination === self }.map(\.destinationBus)) }
    }

    /// The lowest input bus with nothing connected.
    var lowestFreeInputBus: Int {
        let used = connectedInputBuses
        var bus = 0
        while used.contains(bus) { bus += 1 }
        return bus
    }

    func checkBus(_ bus: Int, count: Int, _ call: String, scope: String) {
        guard bus >= 0 && bus < count else {
            engineProgrammerError(call, self, "\(scope) bus \(bus) does not exist (the node has \(count))")
        }
    }
}

/// A tap asked for on a node's bus: kept by the node, installed on each graph node made for it.
/// Identifies one tap of a node: its bus and a serial number (several taps per bus).
struct TapKey: Hashable {
    let bus: Int
    let serial: Int
}

final class TapRequest: @unchecked Sendable {
    let bus: Int
    /// Installed by the engine itself (a recorder), not by `installTap(onBus:...)`.
    var isInternal = false
    let bufferSize: Int
    let format: AudioFormat?
    let block: AudioNode.TapBlock
    /// The installed tap of the current graph node.
    var liveTap: LiveTap?
    /// Buffers dropped by taps of earlier graph nodes.
    var droppedBefore = 0

    init(bus: Int, bufferSize: Int, format: AudioFormat?, block: @escaping AudioNode.TapBlock) {
        self.bus = bus
        self.bufferSize = bufferSize
        self.format = format
        self.block = block
    }

    var droppedBufferCount: Int { droppedBefore + (liveTap?.droppedBufferCount ?? 0) }
}
