// Loading a Standard MIDI File as a graph: the default sampler graph that `audiograph render song.mid` renders.
import AudioGraphNodes
import Foundation

extension GraphLoader {
    /// The default sampler graph for a MIDI file: one `sampler` node (General MIDI from
    /// `soundFont`, default ``SamplerProperties/defaultSoundFontPath``) playing every track of
    /// the file at `path` from the start, into a generic output at `sampleRate`; its render
    /// length is the file's plus the sampler's release tail.
    /// - Throws: the file's problems, one line each (a damaged MIDI file names its byte; a
    ///   SoundFont that cannot be read names the file).
    public static func loadMIDIFile(_ path: String, soundFont: String? = nil,
                                    sampleRate: Double = 48000) throws(GraphDescriptionErrors) -> ValidatedGraph {
        var properties: [String: Any] = ["midiFile": (path as NSString).standardizingPath]
        if let soundFont { properties["soundfont"] = (soundFont as NSString).standardizingPath }
        let graph: [String: Any] = [
            "version": 1, "sampleRate": sampleRate,
            "nodes": [["id": "sampler", "type": "sampler", "properties": properties], ["id": "out", "type": "genericOutput"]],
            "connections": [["from": "sampler", "to": "out"]],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: graph, options: [.sortedKeys])) ?? Data()
        return try parse(text: String(decoding: data, as: UTF8.self), fileName: path,
                         baseDirectory: FileManager.default.currentDirectoryPath)
    }

    /// Whether `path` names a Standard MIDI File (by extension, else by the `MThd` header of a
    /// regular file: a FIFO or a device is never opened here, where opening could block).
    public static func isMIDIFile(_ path: String) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".mid") || lower.hasSuffix(".midi") || lower.hasSuffix(".smf") || lower.hasSuffix(".kar") { return true }
        guard let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType,
              type == .typeRegular, let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        return (try? h.read(upToCount: 4)) == Data("MThd".utf8)
    }
}
