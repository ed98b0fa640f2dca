// Loading a Standard MIDI File as a graph: the default sampler graph that `audiograph render song.mid` renders.
import AudioGraphNodes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension GraphLoader {
    /// The default sampler graph for a MIDI file: one `sampler` node (General MIDI from
    /// `soundFont`, default ``SamplerProperties/defaultSoundFontPath``) playing every track of
    /// the file at `path` from the start, into a generic output at `sampleRate`; its render
    /// length is the file's plus the sampler's release tail.
    /// - Throws: the file's problems, one line each (a damaged MIDI file names its byte; a
    ///   SoundFont that cannot be read names the file).
    public static func loadMIDIFile(_ path: String, soundFont: String? = nil,
                                    sampleRate: Double = 48000) throws(GraphDescriptionErrors) -> ValidatedGraph {
        var properties = "\"midiFile\": " + jsonString(FileSystemPath.standardized(path))
        if let soundFont { properties += ", \"soundfont\": " + jsonString(FileSystemPath.standardized(soundFont)) }
        let rate = sampleRate.isFinite ? "\(sampleRate)" : "null"
        let text = """
            {"version": 1, "sampleRate": \(rate),
             "nodes": [{"id": "sampler", "type": "sampler", "properties": {\(properties)}}, {"id": "out", "type": "genericOutput"}],
             "connections": [{"from": "sampler", "to": "out"}]}
            """
        var cwd = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        return try parse(text: text, fileName: path, baseDirectory: getcwd(&cwd, cwd.count).map { String(cString: $0) } ?? ".")
    }

    /// `text` as a JSON string literal: quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Whether `path` names a Standard MIDI File (by extension, else by the `MThd` header of a
    /// regular file: a FIFO or a device is never opened here, where opening could block).
    public static func isMIDIFile(_ path: String) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".mid") || lower.hasSuffix(".midi") || lower.hasSuffix(".smf") || lower.hasSuffix(".kar") { return true }
        // lstat and read(2), not FileManager's attributes (which look up the owner's and group's
        // names in /etc/passwd and /etc/group: a tenth of a short render's start-up).
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        var got = 0
        while got < 4 {
            let n = withUnsafeMutableBytes(of: &header) { read(fd, $0.baseAddress! + got, 4 - got) }
            if n > 0 { got += n } else if n < 0 && errno == EINTR { continue } else { break }
        }
        return got == 4 && header == (0x4D, 0x54, 0x68, 0x64)  // "MThd"
    }
}
