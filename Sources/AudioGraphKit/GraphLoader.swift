// Loading graph files: parse and validate with the file information libsndfile gives.
import AudioGraphNodes
import AudioGraphPlugins

/// Loads and validates graph description files (`Graphs/*.json`).
///
/// Thread safety: reads files; call from a control thread.
public enum GraphLoader {
    /// Reads and validates the graph at `path`: the file checks, then the engine's own graph rules
    /// on the real nodes (``GraphRules``); sound files are probed with libsndfile.
    /// - Throws: every problem found, one line each (``GraphDescriptionErrors``).
    public static func load(_ path: String) throws(GraphDescriptionErrors) -> ValidatedGraph {
        registerNodeTypes()
        return try GraphRules.check(GraphDescription.load(contentsOf: path, fileInfo: probe), fileName: path)
    }

    /// Validates a graph given as text (relative paths against `baseDirectory`).
    public static func parse(text: String, fileName: String = "graph.json",
                             baseDirectory: String = ".") throws(GraphDescriptionErrors) -> ValidatedGraph {
        registerNodeTypes()
        return try GraphRules.check(GraphDescription.parse(text: text, fileName: fileName, baseDirectory: baseDirectory, fileInfo: probe),
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
    }

    /// Rate, channels and length of a sound file, for the validator.
    public static func probe(_ path: String) throws -> AudioFileInfo {
        try AudioFileReader.info(path: path)
    }
}
