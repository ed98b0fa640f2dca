// A tap: one output bus recorded to a sound file while rendering.
import AudioGraphCore

/// `{ "node": "mix", "bus": 0, "file": "mix-tap.wav" }`.
///
/// Thread safety: a value type; safe to share between threads.
package struct TapDescription: Sendable, Hashable {
    /// The tapped node's id.
    package var node: String
    /// The tapped output bus (default 0).
    package var bus: Int
    /// The file as written in the graph.
    package var file: String
    /// The file's path, resolved against the graph file's folder when relative.
    package var path: String

    /// Creates a tap.
    package init(node: String, bus: Int = 0, file: String, path: String) {
        self.node = node
        self.bus = bus
        self.file = file
        self.path = path
    }

    /// File name extensions (lower case) a tap may write, each with the container it selects.
    package static let supportedExtensions: [String: String] = [
        "wav": "WAV", "wave": "WAV", "aif": "AIFF", "aiff": "AIFF", "aifc": "AIFF", "flac": "FLAC",
        "ogg": "Ogg Vorbis", "oga": "Ogg Vorbis", "caf": "CAF", "au": "AU", "snd": "AU", "w64": "Wave64",
        "rf64": "RF64",
    ]

    /// The lower-cased extension of `file`, or nil when it has none.
    package var fileExtension: String? { Self.fileExtension(of: file) }

    /// The lower-cased extension of a path (after the last `.` of its last component), or nil.
    package static func fileExtension(of path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext.lowercased()
    }
}
