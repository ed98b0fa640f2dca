// Checks a decoded graph as a whole: ids, outputs, connections, cycles, formats, files, taps, updates.
import AudioGraphCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Validates a graph file completely and reports every problem, one line each.
///
/// Decoding (types, keys, ranges, automation) is done by the reader; this type checks what needs
/// the whole graph: unique ids, one output node, at most one input node, connection references,
/// bus indices and single connections per input bus, cycles, format propagation from the sources
/// to the output (rate mismatches name both nodes and both rates), player files (through the
/// injected `fileInfo`), taps, and the updates, applied in time order (file order for equal
/// frames) to a simulated topology, each entry leaving a valid graph.
///
/// Thread safety: stateless; call from any thread but not a render thread (it may read files).
package enum DescriptionValidator {
    /// Parses and validates `data`. See ``GraphDescription/parse(data:fileName:baseDirectory:fileInfo:)``.
    package static func validate(data: [UInt8], fileName: String, baseDirectory: String,
                                fileInfo: (String) throws -> AudioFileInfo) throws(GraphDescriptionErrors) -> ValidatedGraph {
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw GraphDescriptionErrors([GraphDescriptionError(fileName: fileName, location: "", problem: .syntax(error))])
        }
        let reader = DescriptionReader(fileName: fileName, baseDirectory: baseDirectory)
        let graph = reader.decodeDocument(root)
        let result: ValidatedGraph = withoutActuallyEscaping(fileInfo) { fileInfo in
            let checker = GraphChecker(reader: reader, graph: graph, fileInfo: fileInfo)
            return checker.run()
        }
        var seen = Set<String>()
        let errors = reader.errors.filter { seen.insert($0.line).inserted }
        if !errors.isEmpty { throw GraphDescriptionErrors(errors) }
        return result
    }
}
