// An engine error together with the place in a graph file it came from.
import AudioGraphCore

/// An ``AudioGraphError`` from building or resolving a described graph, with the JSON location
/// of the node, connection or update it came from (`nodes[2] (id "echo")`, `connections[0]`,
/// `updates[1].actions[0]`).
///
/// Thread safety: a value type; safe to share between threads.
package struct LocatedEngineError: Error {
    /// The engine's error.
    package var error: AudioGraphError
    /// Where in the file.
    package var location: String

    package init(_ error: AudioGraphError, at location: String) {
        self.error = error
        self.location = location
    }
}
