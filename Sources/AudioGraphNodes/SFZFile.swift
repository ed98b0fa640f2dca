// SFZ instrument files read into sampler zones (the regions' samples, keys, velocities, loops), for AudioFileInstrument.
import Foundation

/// An SFZ instrument (a text file of `<region>`s naming samples) read as sampler zones, played
/// by ``AudioFileInstrument`` (a Linux addition to `loadInstrument(at:)`; Debian has no SFZ
/// library). The headers `<control>`, `<global>`, `<master>`, `<group>` and `<region>` nest as
/// SFZ 2 says (a region takes the opcodes of the headers above it, its own winning); `//` and
/// `/* */` comments are skipped.
///
/// Opcodes used: `sample` (relative to the file's folder and `default_path`), `key`, `lokey`,
/// `hikey`, `pitch_keycenter` (default 60), `lovel`, `hivel`, `tune` (cents), `transpose`
/// (semitones), `loop_mode` (`no_loop`, `one_shot`, `loop_continuous`, `loop_sustain`; default:
/// the sample's own loop, if it has one, continuous), `loop_start`/`loop_end` (frames, the end
/// included; `loopstart`/`loopend` too), `ampeg_release` (seconds, default 0.1 here — SFZ says
/// 0.001; our audio-file zones fade over 0.1 s) and `default_path`. Keys are numbers or note
/// names (`c4` = 60, `c#4`/`db4` = 61). Other opcodes (filters, envelopes, effects, round robins,
/// …) are not played and ignored, as SFZ players ignore what they do not support. `one_shot`
/// zones let the recording play to its end: the note off starts fluidsynth's longest release
/// (100 s, −96 dB over it). `#include` and `#define` are refused.
///
/// Thread safety: a value namespace; control threads (file I/O).
enum SFZFile {
    /// The zones of the SFZ file at `path`, in the order of its regions.
    /// - Throws: a one-line reason naming the file and line (unreadable, bad opcode value,
    ///   missing sample, a region without `sample`, no regions).
    static func zones(contentsOf path: String) throws(SamplerLoadError) -> [SamplerZone] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) else {
            throw .init("cannot read SFZ file \(path)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var levels: [String: [String: (String, Int)]] = [:]       // header → opcode → (value, line)
        var current = ""
        var regions: [[String: (String, Int)]] = []
        var control: [String: (String, Int)] = [:]
        let order = ["global", "master", "group"]

        func closeRegion() {
            guard current == "region" else { return }
            var merged: [String: (String, Int)] = [:]
            for header in order { merged.merge(levels[header] ?? [:]) { $1 } }
            merged.merge(levels["region"] ?? [:]) { $1 }
            regions.append(merged)
            levels["region"] = [:]
        }

        var inBlockComment = false
        for (index, rawLine) in text.components(separatedBy: .newlines).enumerated() {
            let lineNumber = index + 1
            var line = rawLine
            if inBlockComment {
                guard let end = line.range(of: "*/") else { continue }
                line = String(line[end.upperBound...])
                inBlockComment = false
            }
            while let start = line.range(of: "/*") {
                if let end = line.range(of: "*/", range: start.upperBound..<line.endIndex) {
                    line.removeSubrange(start.lowerBound..<end.upperBound)
                } else {
                    line = String(line[..<start.lowerBound])
                    inBlockComment = true
                }
            }
            if let comment = line.range(of: "//") { line = String(line[..<comment.lowerBound]) }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") {
                throw .init("\(path): line \(lineNumber): \(trimmed.split(separator: " ").first ?? "") is not supported")
            }
            // Headers and opcodes: `<name>` or `name=value` (a value runs to the next opcode or header).
            var rest = Substring(trimmed)
            while !rest.isEmpty {
                rest = rest.drop { $0 == " " || $0 == "\t" }
                if rest.isEmpty { break }
                if rest.first == "<" {
                    guard let close = rest.firstIndex(of: ">") else {
                        throw .init("\(path): line \(lineNumber): unterminated header \(rest)")
                    }
                    let name = String(rest[rest.index(after: rest.startIndex)..<close])
                    closeRegion()
                    current = name
                    switch name {
                    case "region": levels["region"] = [:]
                    case "group": levels["group"] = [:]; levels["region"] = [:]
                    case "master": levels["master"] = [:]; levels["group"] = [:]
                    case "global": levels["global"] = [:]; levels["master"] = [:]; levels["group"] = [:]
                    default: break
                    }
                    rest = rest[rest.index(after: close)...]
                    continue
                }
                guard let equals = rest.firstIndex(of: "=") else {
                    throw .init("\(path): line \(lineNumber): expected opcode=value, found \"\(rest)\"")
                }
                let name = String(rest[..<equals]).trimmingCharacters(in: .whitespaces)
                var valueEnd = rest.endIndex
                // The value ends where the next `word=` or `<` begins (sample names may hold spaces).
                var i = rest.index(after: equals)
                while i < rest.endIndex {
                    if rest[i] == "<" { valueEnd = i; break }
                    if rest[i] == " " || rest[i] == "\t" {
                        let after = rest[i...].drop { $0 == " " || $0 == "\t" }
                        if let eq = after.firstIndex(of: "="), !after[..<eq].contains(" "), !after[..<eq].isEmpty,
                           after[..<eq].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                            valueEnd = i
                            break
                        }
                    }
                    i = rest.index(after: i)
                }
                let value = String(rest[rest.index(after: equals)..<valueEnd]).trimmingCharacters(in: .whitespaces)
                if current == "control" {
                    control[name] = (value, lineNumber)
                } else if ["global", "master", "group", "region"].contains(current) {
                    levels[current, default: [:]][name] = (value, lineNumber)
                }
                rest = rest[valueEnd...]
            }
        }
        closeRegion()
        guard !regions.isEmpty else { throw .init("\(path) has no <region>") }

        let defaultPath = control["default_path"]?.0.replacingOccurrences(of: "\\", with: "/") ?? ""
        var zones: [SamplerZone] = []
        for region in regions {
            func at(_ opcode: String) -> String { "\(path): line \(region[opcode]?.1 ?? 0): \(opcode)" }
            func key(_ opcode: String) throws(SamplerLoadError) -> Int? {
                guard let (v, _) = region[opcode] else { return nil }
                guard let k = noteNumber(v) else { throw .init("\(at(opcode)): \(v) is not a key 0...127 or a note name") }
                return k
            }
            func integer(_ opcode: String, in range: ClosedRange<Int>) throws(SamplerLoadError) -> Int? {
                guard let (v, _) = region[opcode] else { return nil }
                guard let n = Int(v), range.contains(n) else { throw .init("\(at(opcode)): \(v) is not an integer in \(range)") }
                return n
            }
            guard let (sample, line) = region["sample"] else {
                throw .init("\(path): the <region> ending before line \((region.values.map(\.1).max() ?? 0) + 1) has no sample")
            }
            var relative = (defaultPath + sample.replacingOccurrences(of: "\\", with: "/"))
            if relative.hasPrefix("/") == false { relative = (folder as NSString).appendingPathComponent(relative) }
            let samplePath = (relative as NSString).standardizingPath
            let frames: Int
            var info: AudioFileInstrument.FileInstrument
            do throws(SamplerLoadError) {
                info = try AudioFileInstrument.instrument(of: samplePath)
                frames = Int((try? AudioFileReader.info(path: samplePath))?.frames ?? 0)
            } catch {
                throw .init("\(path): line \(line): sample: \(error.description)")
            }
            var zone = SamplerZone(path: samplePath, rootKey: 60, pitchCorrection: 0, keys: 0...127, velocities: 0...127, loop: nil)
            if let k = try key("key") { zone.keys = k...k; zone.rootKey = k }
            let low = try key("lokey") ?? zone.keys.lowerBound, high = try key("hikey") ?? zone.keys.upperBound
            guard low <= high else { throw .init("\(at("hikey")): \(high) is below lokey \(low)") }
            zone.keys = low...high
            if let k = try key("pitch_keycenter") { zone.rootKey = k }
            let lowVelocity = try integer("lovel", in: 0...127) ?? 0, highVelocity = try integer("hivel", in: 0...127) ?? 127
            guard lowVelocity <= highVelocity else { throw .init("\(at("hivel")): \(highVelocity) is below lovel \(lowVelocity)") }
            zone.velocities = lowVelocity...highVelocity
            zone.pitchCorrection = (try integer("tune", in: -9600...9600) ?? 0) + 100 * (try integer("transpose", in: -127...127) ?? 0)
            if let (v, _) = region["ampeg_release"] {
                guard let r = Double(v), r >= 0, r <= 100 else { throw .init("\(at("ampeg_release")): \(v) is not seconds in 0...100") }
                zone.release = r
            }
            let startOpcode = region["loop_start"] != nil ? "loop_start" : "loopstart"
            let endOpcode = region["loop_end"] != nil ? "loop_end" : "loopend"
            let start = try integer(startOpcode, in: 0...Int(Int32.max))
            let last = try integer(endOpcode, in: 0...Int(Int32.max))
            var loop = info.loop
            if let start, let last {
                guard start < last, last < frames else {
                    throw .init("\(at(endOpcode)): the loop \(start)...\(last) is not within the sample's \(frames) frames")
                }
                loop = start..<(last + 1)
            }
            switch region["loop_mode"]?.0 ?? region["loopmode"]?.0 {
            case nil: zone.loop = loop
            case "no_loop": zone.loop = nil
            case "one_shot":
                zone.loop = nil
                zone.release = 100
            case "loop_continuous":
                guard let loop else { throw .init("\(at("loop_mode")): loop_continuous, but neither the region nor the sample gives a loop") }
                zone.loop = loop
            case "loop_sustain":
                guard let loop else { throw .init("\(at("loop_mode")): loop_sustain, but neither the region nor the sample gives a loop") }
                zone.loop = loop
                zone.loopsWhileHeld = true
            case let other?:
                throw .init("\(at(region["loop_mode"] != nil ? "loop_mode" : "loopmode")): \(other) is not no_loop, one_shot, loop_continuous or loop_sustain")
            }
            zones.append(zone)
        }
        return zones
    }

    /// A key: a number 0...127 or a note name (`c4` = 60; `#` sharps, `b` flats, octave -1...9).
    static func noteNumber(_ text: String) -> Int? {
        if let n = Int(text) { return (0...127).contains(n) ? n : nil }
        let lower = text.lowercased()
        guard let letter = lower.first, let base = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11][String(letter)] else { return nil }
        var rest = lower.dropFirst()
        var offset = 0
        if rest.first == "#" { offset = 1; rest = rest.dropFirst() } else if rest.first == "b", rest.count > 1 { offset = -1; rest = rest.dropFirst() }
        guard let octave = Int(rest) else { return nil }
        let n = (octave + 1) * 12 + base + offset
        return (0...127).contains(n) ? n : nil
    }
}
