// A file player source: plays a sound file (or a segment of it) from a point on the timeline.
import Synchronization

/// Plays a sound file that libsndfile reads (cf. AVAudioPlayerNode scheduling a file segment).
///
/// Output format: the file's channel count and sample rate. Playback starts at `startTime`
/// (seconds on the graph timeline, counted from the frame the node was added), plays `segment`
/// (or the whole file), then is silent — or starts the segment again when `loop` is set.
/// Parameter `volume` (0...1, 1) scales the output, per sample.
///
/// Short files (at most ``streamingThreshold`` seconds, 30 by default) are decoded into memory
/// when the node is initialized. Longer files *stream*: a disk-reader thread per player
/// (``FileStreamer``) reads the played part into a lock-free ring that the render thread only
/// reads — no disk I/O, allocation, lock or wait on the render thread either way. A streaming
/// player that finds data missing (a slow disk, a seek just requested) outputs silence for it
/// and counts the frames in ``streamStarvedFrames``. Offline renderers call
/// ``prepareForOfflineRender(graphSampleTime:graphSampleRate:)`` before every slice: the render
/// then reads the file synchronously, so nothing is ever missing and nothing waits; the output
/// is bit-identical to the in-memory path.
/// `loop`, `startTime` and `segment` can be changed while running (through a change list).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread. The
/// counters may be read from any thread. ``prepareForOfflineRender(graphSampleTime:graphSampleRate:)``
/// joins the disk thread; call it only from the thread that renders, between two renders.
public final class PlayerNode: GraphNode, @unchecked Sendable {
    /// The configuration (its `path` is the resolved file path).
    public private(set) var properties: PlayerProperties
    /// Rate, channels and length of the file.
    public let fileInfo: AudioFileInfo

    /// Files longer than this many seconds stream from disk instead of being decoded into memory
    /// (decided at initialize, by the whole file's length, so that a `segment` change never has
    /// to decode a long part on the control thread). Any thread; applies to players initialized
    /// afterwards. Tests lower it to stream small files.
    package static var streamingThreshold: Double {
        get { Double(bitPattern: streamingThresholdBits.load(ordering: .relaxed)) }
        set { streamingThresholdBits.store(newValue.bitPattern, ordering: .relaxed) }
    }
    private static let streamingThresholdBits = Atomic<UInt64>(30.0.bitPattern)

    /// The smallest ring a streaming player gets, in frames (default 2^17: 2.7 s at 48 kHz; more
    /// with big slices). Any thread; applies to players initialized afterwards. Tests lower it so
    /// that small files wrap the ring many times.
    package static var streamingRingFrames: Int {
        get { streamingRingFramesValue.load(ordering: .relaxed) }
        set { streamingRingFramesValue.store(newValue, ordering: .relaxed) }
    }
    private static let streamingRingFramesValue = Atomic<Int>(1 << 17)

    // MARK: Shared (atomic): streaming counters, kept across kernels
    private let streamCounters = FileStreamer.Counters()

    // MARK: Control thread only
    /// Counts property changes: a streaming kernel re-seeks when the version it plays changes.
    private var settingsVersion: UInt64 = 0

    /// Whether the node's kernel streams from disk (false before initialize).
    public var isStreaming: Bool { kernel is StreamingPlayerKernel }

    /// Frames a streaming player had to output as silence because the disk reader had not
    /// delivered them yet (0 for in-memory players). Any thread.
    public var streamStarvedFrames: Int64 { streamCounters.starvedFrames.load(ordering: .relaxed) }

    /// Failed or short reads of the file while streaming (their frames play as silence). Any thread.
    public var streamReadFailures: Int64 { streamCounters.readFailures.load(ordering: .relaxed) }

    /// For offline rendering: switches a streaming player to synchronous reading — its disk
    /// thread stops and every later render reads exactly the frames it needs from the file on
    /// the rendering thread, so an offline render never waits for another thread and never
    /// reads a file region twice (unless the player seeks back). The output is bit-identical to
    /// the in-memory path. Does nothing for an in-memory player or before initialize; call it
    /// from the thread that renders, after the graph's `update()` and before `render`, never
    /// while a render runs (cheap after the first call). The arguments are not needed any more
    /// (kept for callers).
    public func prepareForOfflineRender(graphSampleTime: Int64, graphSampleRate: Double) {
        (kernel as? StreamingPlayerKernel)?.prepareForOfflineRender()
    }

    private var startOffset: Int64 { FrameCount.frames(seconds: properties.startTime, sampleRate: fileInfo.sampleRate) }

    private var streamSegment: FileStreamer.Segment {
        let range = playedFrameRange
        return FileStreamer.Segment(start: range.lowerBound, length: Int64(range.count), loop: properties.loop)
    }

    public init(id: String, sampleRate: Double, properties: PlayerProperties) throws(AudioGraphError) {
        self.properties = properties
        do {
            fileInfo = try AudioFileReader.info(path: properties.path)
        } catch {
            throw .nodeSetupFailed(node: id, reason: error.description)
        }
        super.init(id: id, typeName: "player", inputBusCount: 0, outputBusCount: 1,
                   parameters: ParameterTable.player.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0),
                   declaredFormat: PartialStreamFormat(sampleRate: fileInfo.sampleRate, channelCount: fileInfo.channels))
    }

    /// The frames of the file that play: the segment, clipped to the file.
    public var playedFrameRange: Range<Int64> {
        let rate = fileInfo.sampleRate
        let start = min(fileInfo.frames, max(0, FrameCount.frames(seconds: properties.segment?.start ?? 0, sampleRate: rate)))
        var end = fileInfo.frames
        if let d = properties.segment?.duration { end = min(end, start + min(end - start, max(0, FrameCount.frames(seconds: d, sampleRate: rate)))) }
        return start..<max(start, end)
    }

    /// Seconds of graph time this player needs, from 0 to the end of its played part (nil: loops forever).
    public var playedDuration: Double? {
        properties.loop ? nil : properties.startTime + Double(playedFrameRange.count) / fileInfo.sampleRate
    }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: fileInfo.sampleRate, channelCount: fileInfo.channels)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        if Double(fileInfo.frames) > Self.streamingThreshold * fileInfo.sampleRate {
            do {
                // Room for many slices even behind a rate converter, which pulls ahead of the graph frame.
                let streamer = try FileStreamer(path: properties.path, segment: streamSegment, version: settingsVersion,
                                                capacity: max(Self.streamingRingFrames, 8 * maximumFramesPerSlice + 16384),
                                                counters: streamCounters)
                return StreamingPlayerKernel(node: self, streamer: streamer, segment: streamSegment, version: settingsVersion,
                                             startOffset: startOffset, maximumFramesPerSlice: maximumFramesPerSlice)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        let range = playedFrameRange
        let data: [[Float]]
        do {
            data = try AudioFileReader.read(path: properties.path, startFrame: range.lowerBound, frameCount: Int64(range.count)).channels
        } catch {
            throw .nodeSetupFailed(node: id, reason: error.description)
        }
        return PlayerKernel(node: self, samples: data, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        switch name {
        case "loop":
            guard value is Bool else { throw .invalidProperty(node: id, name: name, reason: "expected true or false") }
        case "startTime":
            guard let v = PropertyValue.double(value), v >= 0, v.isFinite else {
                throw .invalidProperty(node: id, name: name, reason: "expected a time in seconds >= 0")
            }
        case "segment":
            guard let v = value as? PlayerSegment? else {
                throw .invalidProperty(node: id, name: name, reason: "expected { \"start\": s, \"duration\": s } or null")
            }
            if let seg = v, !(seg.start >= 0 && seg.start.isFinite && (seg.duration.map { $0 >= 0 && $0.isFinite } ?? true)) {
                throw .invalidProperty(node: id, name: name, reason: "start and duration must be >= 0")
            }
        default:
            throw .invalidProperty(node: id, name: name, reason: "cannot be changed once the node is set up (only loop, startTime and segment can)")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        var samples: ChannelBufferStorage?
        switch name {
        case "loop": properties.loop = value as! Bool
        case "startTime": properties.startTime = PropertyValue.double(value)!
        case "segment":
            properties.segment = value as! PlayerSegment?
            // An in-memory kernel: decode the new segment here, on the control thread; the kernel
            // swaps it in. (A streaming kernel seeks; before initialize, makeKernel reads.)
            if kernel is PlayerKernel {
                let range = playedFrameRange
                let data = (try? AudioFileReader.read(path: properties.path, startFrame: range.lowerBound,
                                                      frameCount: Int64(range.count)).channels) ?? []
                samples = PlayerKernel.storage(for: data, channels: fileInfo.channels)
            }
        default: return nil
        }
        settingsVersion &+= 1
        return PlayerKernel.Settings(loop: properties.loop, startOffset: startOffset, samples: samples,
                                     frameRange: playedFrameRange, version: settingsVersion)
    }
}

/// Render side of an in-memory ``PlayerNode`` (the whole played part decoded at initialize).
final class PlayerKernel: NodeKernel, @unchecked Sendable {
    /// A property change for a running player.
    final class Settings: KernelMessage, @unchecked Sendable {
        let loop: Bool
        let startOffset: Int64
        /// New decoded samples (a segment change of an in-memory player), or nil to keep the current ones.
        let samples: ChannelBufferStorage?
        /// The file frames played (a streaming player seeks to them).
        let frameRange: Range<Int64>
        /// The node's settings version (a streaming player re-seeks when it changes).
        let version: UInt64
        init(loop: Bool, startOffset: Int64, samples: ChannelBufferStorage?, frameRange: Range<Int64>, version: UInt64) {
            self.loop = loop
            self.startOffset = startOffset
            self.samples = samples
            self.frameRange = frameRange
            self.version = version
        }
    }

    /// Copies decoded channels into storage the kernel can own (control thread).
    static func storage(for data: [[Float]], channels: Int) -> ChannelBufferStorage {
        let frames = data.first?.count ?? 0
        let storage = ChannelBufferStorage(channelCount: channels, capacity: frames)
        for (c, channel) in data.enumerated() where frames > 0 && c < channels {
            channel.withUnsafeBufferPointer { storage.list.channel(c).update(from: $0.baseAddress!, count: frames) }
        }
        return storage
    }

    // MARK: Render thread only (replaced by messages; the old storage leaves in the message)
    private var samples: ChannelBufferStorage
    private var length: Int64
    private let volumeIndex: Int

    // MARK: Render thread only
    private var loop: Bool
    private var startOffset: Int64

    init(node: PlayerNode, samples data: [[Float]], maximumFramesPerSlice: Int) {
        let storage = Self.storage(for: data, channels: node.fileInfo.channels)
        samples = storage
        length = Int64(storage.list.capacity)
        volumeIndex = node.parameterIndex(of: ParameterAddress(name: "volume"))!
        loop = node.properties.loop
        startOffset = FrameCount.frames(seconds: node.properties.startTime, sampleRate: node.fileInfo.sampleRate)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func receive(_ message: KernelMessage) {
        guard let s = message as? Settings else { return }
        loop = s.loop
        startOffset = s.startOffset
        if let new = s.samples {
            // The old samples are released with the plan, on a control thread.
            s.retired = samples
            samples = new
            length = Int64(new.list.capacity)
        }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let volume = parameterValues(volumeIndex, context)
        let begin = startSampleTime + startOffset
        let first = context.sampleTime - begin
        if length == 0 || first + Int64(n) <= 0 || (!loop && first >= length) {
            outputSilence(frameCount: n)
            return
        }
        let out = outputs[0]
        for c in 0..<out.channelCount {
            let src = samples.list.channel(c)
            let dst = out.channel(c)
            for i in 0..<n {
                var pos = first + Int64(i)
                if pos < 0 { dst[i] = 0; continue }
                if pos >= length {
                    if !loop { dst[i] = 0; continue }
                    pos %= length
                }
                dst[i] = src[Int(pos)] * volume[i]
            }
        }
        outputIsSilent[0] = false
    }
}

extension PlayerNode {
    /// The `player` node type: a source playing `properties.file` (``PlayerProperties``; `loop`,
    /// `startTime` and `segment` may change while the graph runs), ``ParameterTable/player``.
    /// Its file is read once by the checker (rate, channels, length: the segment must start
    /// before the end, a declared format must match the file) and its end sets the default
    /// length of an offline render.
    package static let descriptor = NodeTypeDescriptor(
        name: "player", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["file", "loop", "startTime", "segment"],
        runtimePropertyKeys: ["loop", "startTime", "segment"], parameters: .player,
        decode: { reader in
            var result = PlayerProperties(file: "", path: "")
            if let file = reader.requiredFile("file") {
                result.file = file.name
                result.path = file.path
            }
            if let loop = reader.bool("loop") { result.loop = loop }
            if let time = reader.time("startTime") { result.startTime = time }
            if let segment = reader.object("segment", allowed: ["start", "duration"], required: []) {
                var decoded = PlayerSegment()
                if let start = segment.time("start") { decoded.start = start }
                if segment.has("duration") { decoded.duration = segment.duration("duration") }
                result.segment = decoded
            }
            return result
        },
        typedProperty: { name, options in
            guard let p = options as? PlayerProperties else { return nil }
            switch name {
            case "loop": return p.loop
            case "startTime": return p.startTime
            case "segment": return p.segment
            default: return nil
            }
        },
        checkFiles: { options, context in
            guard let p = options as? PlayerProperties, !p.path.isEmpty,
                  let info = context.audioFileInfo(path: p.path, file: p.file, key: "file") else { return }
            if let segment = p.segment, segment.start >= info.duration {
                context.reportInvalid(["segment", "start"], "\(ParameterInfo.format(segment.start)) s is not before the end of \"\(p.file)\" (\(ParameterInfo.format(info.duration)) s)")
            }
        },
        checkFormat: { options, context in
            guard let p = options as? PlayerProperties, let info = context.knownAudioFileInfo(path: p.path) else { return }
            if let declaredRate = context.declaredFormat.sampleRate, declaredRate != info.sampleRate {
                context.reportFormatConflict(formatField: "sampleRate", "the file \"\(p.file)\" is \(ParameterInfo.format(info.sampleRate)) Hz but the format declares \(ParameterInfo.format(declaredRate)) Hz (a player outputs its file's rate; put a converter after it)")
            }
            if let declaredChannels = context.declaredFormat.channels, declaredChannels != info.channels {
                context.reportFormatConflict(formatField: "channels", "the file \"\(p.file)\" has \(info.channels) channels but the format declares \(declaredChannels)")
            }
        },
        playbackEnd: { options, files in
            guard let p = options as? PlayerProperties, !p.loop, let info = files(p.path) else { return nil }
            let start = p.segment?.start ?? 0
            let played = p.segment?.duration.map { min($0, max(0, info.duration - start)) } ?? max(0, info.duration - start)
            return p.startTime + played
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            try PlayerNode(id: context.id, sampleRate: context.sampleRate,
                           properties: context.options(as: PlayerProperties.self) ?? PlayerProperties(file: "", path: ""))
        })
}
