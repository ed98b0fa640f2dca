// Web Audio's AudioBufferSourceNode: a sound file held in memory, played at playbackRate·2^(detune/1200) with loop points.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Plays a sound file decoded into memory as Web Audio's `AudioBufferSourceNode` plays its
/// buffer (https://www.w3.org/TR/webaudio/#AudioBufferSourceNode): a playhead starts at
/// `offset` seconds into the buffer at the node's `startTime` and moves by the computed playback
/// rate `playbackRate · 2^(detune/1200)` buffer frames per output frame (both parameters k-rate:
/// read at the first frame of each slice, as the spec says); the output is the buffer linearly
/// interpolated at the playhead. With `loop`, the playhead wraps within
/// `[loopStart, loopEnd)` (seconds; when `loopStart < loopEnd` does not hold, or `loopEnd` is 0,
/// the whole buffer; `loopEnd` is at most its duration) and the interpolation's right neighbour
/// at the loop end is the loop start; without it, playback ends when the playhead leaves the
/// buffer (forward past its end, backward below 0) and the node is silent from then on.
/// Negative rates play backward.
///
/// A separate type from ``PlayerNode`` because the semantics differ: the player streams long
/// files at rate 1 with AVAudioPlayerNode's segments and scheduling, and its streaming ring
/// cannot move at any speed or backwards; a buffer source holds the whole file (at most
/// ``maximumFrames`` frames) and reads it anywhere. Output: the file's channels at the file's
/// rate (a mixer converts, as Web Audio resamples a decoded buffer to the context's rate).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class BufferSourceNode: GraphNode, @unchecked Sendable {
    /// `properties` of a `bufferSource` node.
    public struct Options: Hashable, Sendable {
        /// The file as written and its resolved path.
        public var file: String
        public var path: String
        /// Whether the playhead loops (false).
        public var loop: Bool
        /// The loop region, seconds into the buffer (0, 0: the whole buffer).
        public var loopStart: Double
        public var loopEnd: Double
        /// Where the playhead starts, seconds into the buffer (0).
        public var offset: Double
        /// When playback starts on the graph timeline, seconds (0).
        public var startTime: Double
        /// Seconds of buffer content to play, loops included (nil: no limit; Web Audio's `duration`).
        public var duration: Double?
        /// When playback stops on the graph timeline, seconds (nil: never).
        public var stopTime: Double?
        public init(file: String = "", path: String = "", loop: Bool = false, loopStart: Double = 0, loopEnd: Double = 0,
                    offset: Double = 0, startTime: Double = 0, duration: Double? = nil, stopTime: Double? = nil) {
            self.duration = duration
            self.stopTime = stopTime
            self.file = file
            self.path = path
            self.loop = loop
            self.loopStart = loopStart
            self.loopEnd = loopEnd
            self.offset = offset
            self.startTime = startTime
        }
    }

    /// The longest buffer accepted: 2^26 frames (about 23 minutes at 48 kHz) per channel.
    public static let maximumFrames: Int64 = 1 << 26

    /// The node's options.
    public let options: Options
    /// The decoded buffer, one array per channel.
    let channelData: [[Float]]
    /// The buffer's rate.
    public let bufferSampleRate: Double

    /// Start, stop, duration and loop points as the kernel reads them (set from the options for
    /// a graph file's node; the engine API's node shares its own).
    public let transport: BufferSourceTransport

    /// Reads the file (control thread: file I/O). Throws when it cannot be read or is longer than
    /// ``maximumFrames``.
    public convenience init(id: String, options: Options) throws(AudioGraphError) {
        if let reason = FileSystemPath.notRegularFileReason(options.path) {
            throw .nodeSetupFailed(node: id, reason: "cannot read \"\(options.file)\": \(reason)")
        }
        let info: AudioFileInfo
        do { info = try AudioFileReader.info(path: options.path) } catch {
            throw .nodeSetupFailed(node: id, reason: "cannot read \"\(options.file)\": \(error)")
        }
        guard info.frames <= Self.maximumFrames else {
            throw .nodeSetupFailed(node: id, reason: "\"\(options.file)\" has \(info.frames) frames, more than a buffer source holds (\(Self.maximumFrames))")
        }
        let channels: [[Float]]
        do { channels = try AudioFileReader.read(path: options.path).channels } catch {
            throw .nodeSetupFailed(node: id, reason: "cannot read \"\(options.file)\": \(error)")
        }
        let transport = BufferSourceTransport(startsFromKernelStart: true)
        transport.loop = options.loop
        transport.loopStart = options.loopStart
        transport.loopEnd = options.loopEnd
        transport.start(when: options.startTime, offset: options.offset, duration: options.duration ?? .infinity)
        if let stop = options.stopTime { transport.stop(when: stop) }
        try self.init(id: id, channels: channels, sampleRate: info.sampleRate, options: options, transport: transport)
    }

    /// A source of `channels` (equal lengths, at most ``maximumFrames``) at `sampleRate`, played
    /// as `transport` says (the options' file, loop and times are not used: the transport has them).
    public init(id: String, channels: [[Float]], sampleRate: Double, options: Options = Options(),
                transport: BufferSourceTransport) throws(AudioGraphError) {
        guard Int64(channels.first?.count ?? 0) <= Self.maximumFrames, channels.allSatisfy({ $0.count == channels[0].count }),
              sampleRate > 0, sampleRate.isFinite else {
            throw .nodeSetupFailed(node: id, reason: "a buffer source needs channels of equal length (at most \(Self.maximumFrames) frames) at a positive rate")
        }
        channelData = channels
        self.options = options
        self.transport = transport
        bufferSampleRate = sampleRate
        super.init(id: id, typeName: "bufferSource", inputBusCount: 0, outputBusCount: 1,
                   parameters: ParameterTable.bufferSource.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0),
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: max(1, channels.count)))
    }

    /// The `bufferSource` node type: a source, properties `file` (required), `loop`,
    /// `loopStart`, `loopEnd`, `offset`, `startTime`; ``ParameterTable/bufferSource``.
    package static let descriptor = NodeTypeDescriptor(
        name: "bufferSource", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["file", "loop", "loopStart", "loopEnd", "offset", "startTime", "duration", "stopTime"], parameters: .bufferSource,
        decode: { reader in
            var o = Options()
            if let (name, path) = reader.requiredFile("file") { o.file = name; o.path = path }
            if let loop = reader.bool("loop") { o.loop = loop }
            if let t = reader.time("loopStart") { o.loopStart = t }
            if let t = reader.time("loopEnd") { o.loopEnd = t }
            if let t = reader.time("offset") { o.offset = t }
            if let t = reader.time("startTime") { o.startTime = t }
            if let t = reader.time("duration") { o.duration = t }
            if let t = reader.time("stopTime") { o.stopTime = t }
            return o
        },
        makeNode: { context throws(AudioGraphError) -> GraphNode in
            try BufferSourceNode(id: context.id, options: context.options(as: Options.self) ?? Options())
        })

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: bufferSampleRate, channelCount: max(1, channelData.count))]
    }

    public override func stateMemoryEstimate(outputFormat: StreamFormat) -> (bytes: Int64, reason: String)? {
        let frames = Int64(channelData.first?.count ?? 0)
        return (frames * Int64(channelData.count) * 4, "a buffer of \(frames) frames × \(channelData.count) channels")
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        BufferSourceKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

extension ParameterTable {
    /// ``BufferSourceNode``'s parameters, k-rate as Web Audio's: `playbackRate` (±3.4028235e38, 1)
    /// and `detune` (cents, ±3.4028235e38, 0).
    package static let bufferSource = ParameterTable([
        .init(.global, "playbackRate", .generic, -Double(Float.greatestFiniteMagnitude), Double(Float.greatestFiniteMagnitude), 1),
        .init(.global, "detune", .generic, -Double(Float.greatestFiniteMagnitude), Double(Float.greatestFiniteMagnitude), 0),
    ])
}

/// Render side of ``BufferSourceNode``: a start (a new generation of its transport) puts the
/// playhead at the offset; each slice reads the stop time and loop points.
final class BufferSourceKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let data: UnsafeMutablePointer<Float>
    private let length: Int
    private let channelCount: Int
    private let rateIndex: Int
    private let detuneIndex: Int
    private let rate: Double
    private let transport: BufferSourceTransport

    // MARK: Render thread only
    private var seenGeneration: UInt64 = 0
    private var begin = Int64.max
    private var playhead = 0.0
    /// Buffer frames played since the start (|step| per frame) and the duration's limit.
    private var elapsed = 0.0
    private var durationFrames = Double.infinity
    private var finished = true

    init(node: BufferSourceNode, maximumFramesPerSlice: Int) {
        let channels = node.channelData
        channelCount = max(1, channels.count)
        length = channels.first?.count ?? 0
        data = .allocate(capacity: max(1, channelCount * length))
        data.initialize(repeating: 0, count: max(1, channelCount * length))
        for (c, samples) in channels.enumerated() { (data + c * length).update(from: samples, count: samples.count) }
        rateIndex = node.parameterIndex(of: ParameterAddress(name: "playbackRate"))!
        detuneIndex = node.parameterIndex(of: ParameterAddress(name: "detune"))!
        rate = node.bufferSampleRate
        transport = node.transport
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit { data.deallocate() }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        seenGeneration = 0   // read the transport's start again (times may count from here)
        finished = true
        begin = .max
    }

    /// Sample `i` of channel `c`; 0 outside the buffer.
    @inline(__always)
    private func sample(_ c: Int, _ i: Int) -> Float {
        guard i >= 0 && i < length else { return 0 }
        return data[c * length + i]
    }

    /// Frames on the node's timeline for `seconds` (saturating).
    @inline(__always)
    private func frames(_ seconds: Double, base: Int64) -> Int64 {
        seconds.isFinite ? base &+ FrameCount.frames(seconds: seconds, sampleRate: outputFormats[0].sampleRate) : .max
    }

    private func end() {
        if !finished { transport.markEnded(generation: seenGeneration) }
        finished = true
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        // k-rate: the slice's first values (reading them advances ramps and automation).
        let rateValues = parameterValues(rateIndex, context)
        let detuneValues = parameterValues(detuneIndex, context)
        let playbackRate = rateValues.isConstant ? parameterStates[rateIndex].current : Double(rateValues[0])
        let detune = detuneValues.isConstant ? parameterStates[detuneIndex].current : Double(detuneValues[0])
        var step = playbackRate * exp2(detune / 1200)
        if !step.isFinite { step = 0 }
        let base = transport.startsFromKernelStart ? startSampleTime : 0
        let generation = transport.generation.load(ordering: .acquiring)
        if generation != seenGeneration {
            seenGeneration = generation
            begin = frames(transport.startSeconds, base: base)
            playhead = min(transport.offsetSeconds * rate, Double(length))
            elapsed = 0
            durationFrames = transport.durationSeconds * rate
            // A start whose playback already ended (a new kernel for a new buffer, engine API) is
            // not replayed: Web Audio never restarts a source on a buffer change. Graph files'
            // times count from the kernel's start, so they play again when the graph restarts.
            finished = !transport.startsFromKernelStart && transport.hasEnded(generation: generation)
        }
        let stopAt = frames(transport.stopSeconds, base: base)
        let out = outputs[0]
        let t0 = context.sampleTime
        if finished || t0 + Int64(n) <= begin || length == 0 {
            if !finished && length == 0 && t0 + Int64(n) > begin { end() }
            outputSilence(frameCount: n)
            return
        }
        // The loop region, as the spec clamps it (the whole buffer unless 0 ≤ loopStart < loopEnd).
        let duration = Double(length)
        var ls = 0.0, le = duration
        let loopStart = transport.loopStart, loopEnd = transport.loopEnd
        if loopStart >= 0 && loopEnd > 0 && loopStart < loopEnd {
            ls = min(loopStart * rate, duration)
            le = min(loopEnd * rate, duration)
        }
        if !(ls < le) { ls = 0; le = duration }
        let loop = transport.loop
        let span = le - ls
        let loopEndIndex = Int(le.rounded(.up))
        var audible = false
        for i in 0..<n {
            let t = t0 + Int64(i)
            if t < begin || finished {
                for c in 0..<out.channelCount { out.channel(c)[i] = 0 }
                continue
            }
            if t >= stopAt || elapsed >= durationFrames {
                end()
                for c in 0..<out.channelCount { out.channel(c)[i] = 0 }
                continue
            }
            if loop && span > 0 {
                // Wrap into [loopStart, loopEnd) (forward and backward).
                if playhead >= le || playhead < ls {
                    let r = (playhead - ls).truncatingRemainder(dividingBy: span)
                    playhead = ls + (r < 0 ? r + span : r)
                }
            } else if playhead >= Double(length) || playhead < 0 {
                end()
                for c in 0..<out.channelCount { out.channel(c)[i] = 0 }
                continue
            }
            let index = Int(playhead.rounded(.down))
            let fraction = Float(playhead - Double(index))
            var next = index + 1
            if loop && span > 0 && next >= loopEndIndex { next = Int(ls.rounded(.down)) + (next - loopEndIndex) }
            for c in 0..<min(out.channelCount, channelCount) {
                let a = sample(c, index)
                let y = fraction == 0 ? a : a + (sample(c, next) - a) * fraction
                out.channel(c)[i] = y
                if y != 0 { audible = true }
            }
            playhead += step
            elapsed += abs(step)
        }
        outputIsSilent[0] = !audible
    }
}
