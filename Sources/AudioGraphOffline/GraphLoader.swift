// Loading graph files: parse and validate (with the file information libsndfile gives), then build the engine graph.
import AudioGraphNodes
import AudioGraphPlugins
import AudioGraphPulse

/// The graph-file pipeline: loads and validates graph description files (`Graphs/*.json`), and
/// builds the validated graph into an initialized engine graph.
///
/// Thread safety: reads files and creates nodes; call from a control thread.
public enum GraphLoader {
    /// Reads and validates the graph at `path`: the file checks, then the engine's own graph rules
    /// on the real nodes (``GraphChecker/checkEngineRules(_:fileName:)``); sound files are probed with libsndfile.
    /// - Throws: every problem found, one line each (``GraphDescriptionErrors``).
    public static func load(_ path: String) throws(GraphDescriptionErrors) -> ValidatedGraph {
        registerNodeTypes()
        return try GraphChecker.checkEngineRules(GraphDescription.load(contentsOf: path, fileInfo: probe), fileName: path)
    }

    /// Validates a graph given as text (relative paths against `baseDirectory`).
    public static func parse(text: String, fileName: String = "graph.json",
                             baseDirectory: String = ".") throws(GraphDescriptionErrors) -> ValidatedGraph {
        registerNodeTypes()
        return try GraphChecker.checkEngineRules(GraphDescription.parse(text: text, fileName: fileName, baseDirectory: baseDirectory, fileInfo: probe),
                                    fileName: fileName)
    }

    /// Registers every node type of the package with graph files (each module's own list:
    /// AudioGraphNodes' `StockNodeTypes`, AudioGraphPulse's `PulseNodeTypes`, AudioGraphPlugins'
    /// `PluginNodeTypes`) and the LV2 catalogue. Idempotent; every loading entry point calls it.
    package static func registerNodeTypes() {
        LV2World.registerWithGraphFiles()
        StockNodeTypes.register()
        PulseNodeTypes.register()
        PluginNodeTypes.register()
        // lv2 nodes that are instruments play a graph file's midiFile and notes (read here, where the MIDI reader is).
        NodeTypeRegistry.register(named: "lv2") { LV2InstrumentOptions.descriptor(wrapping: LV2Node.descriptor) }
    }

    /// Rate, channels and length of a sound file, for the validator.
    public static func probe(_ path: String) throws -> AudioFileInfo {
        try AudioFileReader.info(path: path)
    }

    /// Creates every node of `validated`, connects them and initializes the graph. (An update's
    /// actions become a pending-change list through ``GraphAssembly/changes(for:sampleRate:outputs:)``.)
    ///
    /// - Parameters:
    ///   - maximumFramesPerSlice: overrides the description's (the CLI's `--slice`).
    ///   - outputs: what the output node becomes (offline: a generic output; live: PulseAudio).
    ///   - prepare: called with every node before the graph initializes (e.g. to give input
    ///     nodes their PulseAudio context).
    public static func build(_ validated: ValidatedGraph, maximumFramesPerSlice: Int? = nil,
                             outputs: OutputPlacement = .asDescribed,
                             prepare: ((GraphNode) -> Void)? = nil) throws(AudioGraphError) -> BuiltGraph {
        let graph: AudioGraph
        do {
            graph = try GraphAssembly.assemble(validated.description, maximumFramesPerSlice: maximumFramesPerSlice, outputs: outputs,
                                               prepare: prepare)
        } catch {
            throw error.error
        }
        try graph.initialize()
        guard let output = graph.outputNode else { throw .outputNodeCount(0) }
        return BuiltGraph(graph: graph, validated: validated, outputNode: output)
    }
}
