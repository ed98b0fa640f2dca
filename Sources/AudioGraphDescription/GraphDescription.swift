// A whole graph file, decoded: settings, nodes, connections, updates and taps.
import AudioGraphCore


/// A graph file (format version 1), decoded and validated. Load one with
/// ``GraphDescription/load(contentsOf:fileInfo:)`` or ``GraphDescription/parse(data:fileName:baseDirectory:fileInfo:)``.
///
/// Thread safety: a value type; safe to share between threads. Loading runs on the caller's
/// thread, reads files (the graph, and sound files through `fileInfo`) and may block on I/O:
/// never call it on a render thread.
package struct GraphDescription: Sendable, Hashable {
    /// The format version (1).
    package var version: Int
    /// The graph's rate: sources without a file, mixers and outputs run at it (default 48000).
    package var sampleRate: Double
    /// The largest slice any render call asks for (default 512).
    package var maximumFramesPerSlice: Int
    /// Default length of an offline render, seconds (nil: not given).
    package var duration: Double?
    /// The nodes, in file order.
    package var nodes: [NodeDescription]
    /// The connections, in file order.
    package var connections: [ConnectionDescription]
    /// The timed updates, in file order.
    package var updates: [UpdateDescription]
    /// The taps, in file order.
    package var taps: [TapDescription]
    /// The file's name as errors print it (e.g. `graph.json`).
    package var fileName: String
    /// The folder relative paths are resolved against.
    package var baseDirectory: String

    /// The default graph rate.
    package static let defaultSampleRate = 48000.0
    /// The default maximum slice.
    package static let defaultMaximumFramesPerSlice = 512
    /// The rates accepted for the graph, formats and sound files, hertz. Beyond 768 kHz no
    /// sound card or file type is in use, and buffers sized from the rate (delay lines, HRTF
    /// sets resampled to it) would grow without purpose.
    package static let sampleRateRange: ClosedRange<Double> = 1...768_000
    /// The longest time or length accepted anywhere in a graph file, seconds (10^7 s, about 115
    /// days): every time times every accepted rate stays far inside `Int64` frames.
    package static let maximumTime = 10_000_000.0
    /// The largest ratio between two rates one conversion bridges (libsamplerate's limit, either
    /// way): a converter, a mixer or environment input, or a generic output's client format.
    package static let maximumConversionRatio = StreamFormat.maximumConversionRatio
    /// The most nodes a graph holds at any moment (every node is pulled, planned and formatted
    /// on each update; beyond this a file is a mistake or an attack).
    package static let maximumNodeCount = 10_000
    /// The largest latency accepted for `output` and `input` nodes, milliseconds.
    package static let maximumLatency = 10_000.0
    /// The largest `maximumFramesPerSlice` accepted.
    package static let maximumFramesPerSliceLimit = 65536

    /// Creates a description (the loader fills every field; tests may build one directly).
    package init(version: Int = 1, sampleRate: Double = GraphDescription.defaultSampleRate,
                maximumFramesPerSlice: Int = GraphDescription.defaultMaximumFramesPerSlice, duration: Double? = nil,
                nodes: [NodeDescription] = [], connections: [ConnectionDescription] = [],
                updates: [UpdateDescription] = [], taps: [TapDescription] = [],
                fileName: String = "graph.json", baseDirectory: String = ".") {
        self.version = version
        self.sampleRate = sampleRate
        self.maximumFramesPerSlice = maximumFramesPerSlice
        self.duration = duration
        self.nodes = nodes
        self.connections = connections
        self.updates = updates
        self.taps = taps
        self.fileName = fileName
        self.baseDirectory = baseDirectory
    }

    /// The node with `id`, nil when there is none.
    package func node(_ id: String) -> NodeDescription? { nodes.first { $0.id == id } }

    /// The graph's output node (`output` or `genericOutput`); validated graphs have exactly one.
    package var outputNode: NodeDescription? { nodes.first { $0.schema.kind == .output } }

    // MARK: Loading

    /// Reads, decodes and validates the graph file at `path`. Relative paths inside it are
    /// resolved against its folder; errors name the file as `path` was given.
    ///
    /// - Parameter fileInfo: returns a sound file's rate, channels and length, or throws when it
    ///   cannot be read (called once per distinct player file, with the resolved path).
    /// - Throws: every problem found, each one line (see ``GraphDescriptionError/line``).
    package static func load(contentsOf path: String,
                            fileInfo: (String) throws -> AudioFileInfo) throws(GraphDescriptionErrors) -> ValidatedGraph {
        let directory = Self.directory(of: path)
        // A FIFO or a device as the graph file would block or never end: refused before reading.
        let data: [UInt8]
        do { data = try FileSystemPath.contentsOfRegularFile(path) } catch {
            throw GraphDescriptionErrors([GraphDescriptionError(fileName: path, location: "", problem: .cannotReadFile(reason: error.reason))])
        }
        return try parse(data: data, fileName: path, baseDirectory: directory, fileInfo: fileInfo)
    }

    /// Decodes and validates a graph file's bytes.
    ///
    /// - Parameters:
    ///   - data: the file's bytes (any bytes: malformed input is reported, never a crash).
    ///   - fileName: how error lines name the file.
    ///   - baseDirectory: the folder relative paths are resolved against.
    ///   - fileInfo: see ``load(contentsOf:fileInfo:)``.
    package static func parse<Bytes: Collection<UInt8>>(data: Bytes, fileName: String, baseDirectory: String,
                                                       fileInfo: (String) throws -> AudioFileInfo) throws(GraphDescriptionErrors) -> ValidatedGraph {
        try GraphChecker.checkFile(data: Array(data), fileName: fileName, baseDirectory: baseDirectory, fileInfo: fileInfo)
    }

    /// Decodes and validates a graph given as text (convenient for tests and embedding).
    package static func parse(text: String, fileName: String = "graph.json", baseDirectory: String = ".",
                             fileInfo: (String) throws -> AudioFileInfo) throws(GraphDescriptionErrors) -> ValidatedGraph {
        try parse(data: Array(text.utf8), fileName: fileName, baseDirectory: baseDirectory, fileInfo: fileInfo)
    }

    /// `path`'s folder (`.` when it has none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `path` resolved against `base` when relative.
    static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") || base.isEmpty || base == "." { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }
}

extension GraphDescription {
    /// The indices of ``updates`` in the order every front door applies them: by frame at the
    /// graph's rate (``sampleRate``), file order for equal frames. The checker, the engine's
    /// rules, the offline renderer and live playback all use this one order (a renderer whose
    /// output runs at another rate places each update at its own frame, in this order).
    package var updateOrder: [Int] {
        updates.indices.sorted {
            (updates[$0].when.frame(sampleRate: sampleRate), $0) < (updates[$1].when.frame(sampleRate: sampleRate), $1)
        }
    }

    /// Each update's frame on a timeline running at `timelineRate` (the output's rate, which a
    /// renderer may run at rather than the graph's), in ``updateOrder``: an update never lands
    /// before one the order puts first. The one schedule the offline renderer and live playback
    /// apply (at the graph's own rate this is every update's frame, already in order).
    package func updateSchedule(timelineRate: Double) -> [(frame: Int64, index: Int)] {
        var schedule: [(frame: Int64, index: Int)] = []
        for index in updateOrder {
            let frame = max(updates[index].when.frame(sampleRate: timelineRate), schedule.last?.frame ?? 0)
            schedule.append((frame, index))
        }
        return schedule
    }
}
