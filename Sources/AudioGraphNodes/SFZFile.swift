// SFZ instrument files read into sampler zones (the regions' samples, keys, velocities, loops), for AudioFileInstrument.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

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
/// included; `loopstart`/`loopend` too; one without the other loops from the sample's start or
/// to its last frame, as SFZ players do), `ampeg_release` (seconds, default 0.1 here — SFZ says
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
        let bytes: [UInt8]
        do { bytes = try FileSystemPath.contentsOfRegularFile(path) } catch {
            throw .init("cannot read SFZ file \(path): \(error.reason)")
        }
        // UTF-8 (a byte-order mark before it dropped, as Foundation's decoding drops it), or else
        // Latin-1 (every byte a character), as older SFZ files are written.
        let utf8 = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        let text = String(validating: utf8, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.lazy.map { Unicode.Scalar($0) }))
        let folder = FileSystemPath.deletingLastComponent(path)
        var levels: [String: [String: (String, Int)]] = [:]       // header → opcode → (value, line)
        var current = ""
        var regions: [(opcodes: [String: (String, Int)], line: Int)] = []
        var regionLine = 0
        var control: [String: (String, Int)] = [:]
        let order = ["global", "master", "group"]

        func closeRegion() {
            guard current == "region" else { return }
            var merged: [String: (String, Int)] = [:]
            for header in order { merged.merge(levels[header] ?? [:]) { $1 } }
            merged.merge(levels["region"] ?? [:]) { $1 }
            regions.append((merged, regionLine))
            levels["region"] = [:]
        }

        var inBlockComment = false
        // Lines end at \r\n, \n or \r (a \r\n is one Character in Swift, so one line end).
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, rawLine) in lines.enumerated() {
            let lineNumber = index + 1
            var line = String(rawLine)
            if inBlockComment {
                guard let end = range(of: "*/", in: line) else { continue }
                line = String(line[end.upperBound...])
                inBlockComment = false
            }
            while let start = range(of: "/*", in: line) {
                if let end = range(of: "*/", in: line, from: start.upperBound) {
                    line.removeSubrange(start.lowerBound..<end.upperBound)
                } else {
                    line = String(line[..<start.lowerBound])
                    inBlockComment = true
                }
            }
            if let comment = range(of: "//", in: line) { line = String(line[..<comment.lowerBound]) }
            let trimmed = trimmingBlanks(line)
            if trimmed.hasPrefix("#") {
                throw .init("\(path): line \(lineNumber): \(trimmed.split(separator: " ").first ?? "") is not supported")
            }
            // Headers and opcodes: `<name>` or `name=value` (a value runs to the next opcode or
            // header). One pass over the line's characters: every index is visited a bounded
            // number of times, so a long line costs linear time.
            // UTF-8 bytes: every delimiter is ASCII, which never occurs inside a multi-byte character.
            let chars = Array(trimmed.utf8)
            func text(_ r: Range<Int>) -> String { String(decoding: chars[r], as: UTF8.self) }
            func isBlank(_ c: UInt8) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") }
            func isWord(_ c: UInt8) -> Bool {
                (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
            }
            var i = 0
            while i < chars.count {
                while i < chars.count, isBlank(chars[i]) { i += 1 }
                if i == chars.count { break }
                if chars[i] == UInt8(ascii: "<") {
                    guard let close = chars[i...].firstIndex(of: UInt8(ascii: ">")) else {
                        throw .init("\(path): line \(lineNumber): unterminated header \(text(i..<min(chars.count, i + 80)))")
                    }
                    let name = text((i + 1)..<close)
                    closeRegion()
                    current = name
                    switch name {
                    case "region": levels["region"] = [:]; regionLine = lineNumber
                    case "group": levels["group"] = [:]; levels["region"] = [:]
                    case "master": levels["master"] = [:]; levels["group"] = [:]
                    case "global": levels["global"] = [:]; levels["master"] = [:]; levels["group"] = [:]
                    default: break
                    }
                    i = close + 1
                    continue
                }
                guard let equals = chars[i...].firstIndex(of: UInt8(ascii: "=")) else {
                    throw .init("\(path): line \(lineNumber): expected opcode=value, found \"\(text(i..<min(chars.count, i + 80)))\"")
                }
                let name = trimmingBlanks(text(i..<equals))
                // The value ends where the next `word=` or `<` begins (sample names may hold spaces).
                var valueEnd = chars.count
                var j = equals + 1
                scan: while j < chars.count {
                    if chars[j] == UInt8(ascii: "<") { valueEnd = j; break }
                    if isBlank(chars[j]) {
                        var word = j
                        while word < chars.count, isBlank(chars[word]) { word += 1 }
                        var w = word
                        while w < chars.count, isWord(chars[w]) { w += 1 }
                        if w > word, w < chars.count, chars[w] == UInt8(ascii: "=") { valueEnd = j; break scan }
                        j = max(w, j + 1)       // the word is no opcode name: go on after it
                        continue
                    }
                    j += 1
                }
                let value = trimmingBlanks(text((equals + 1)..<valueEnd))
                if current == "control" {
                    control[name] = (value, lineNumber)
                } else if ["global", "master", "group", "region"].contains(current) {
                    levels[current, default: [:]][name] = (value, lineNumber)
                }
                i = valueEnd
            }
        }
        closeRegion()
        guard !regions.isEmpty else { throw .init("\(path) has no <region>") }

        let defaultPath = control["default_path"].map { slashes($0.0) } ?? ""
        var zones: [SamplerZone] = []
        for (region, regionLine) in regions {
            /// `file: line N: opcode`, N the opcode's line (the region's header line if it is absent).
            func at(_ opcode: String) -> String { "\(path): line \(region[opcode]?.1 ?? regionLine): \(opcode)" }
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
            var relative = defaultPath + slashes(sample)
            if relative.hasPrefix("/") == false { relative = FileSystemPath.appending(relative, to: folder) }
            let samplePath = FileSystemPath.standardized(relative)
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
            guard low <= high else {
                // Name an opcode that is there: hikey, or else lokey above the key given by `key`.
                throw .init(region["hikey"] != nil ? "\(at("hikey")): \(high) is below lokey \(low)" : "\(at("lokey")): \(low) is above key \(high)")
            }
            zone.keys = low...high
            if let k = try key("pitch_keycenter") { zone.rootKey = k }
            let lowVelocity = try integer("lovel", in: 0...127) ?? 0, highVelocity = try integer("hivel", in: 0...127) ?? 127
            guard lowVelocity <= highVelocity else {
                throw .init(region["hivel"] != nil ? "\(at("hivel")): \(highVelocity) is below lovel \(lowVelocity)" : "\(at("lovel")): \(lowVelocity) is above hivel \(highVelocity)")
            }
            zone.velocities = lowVelocity...highVelocity
            zone.pitchCorrection = (try integer("tune", in: -9600...9600) ?? 0) + 100 * (try integer("transpose", in: -127...127) ?? 0)
            if let (v, _) = region["ampeg_release"] {
                guard let r = Double(v), r >= 0, r <= 100 else { throw .init("\(at("ampeg_release")): \(v) is not seconds in 0...100") }
                zone.release = r
            }
            let startOpcode = region["loop_start"] != nil ? "loop_start" : "loopstart"
            let endOpcode = region["loop_end"] != nil ? "loop_end" : "loopend"
            let givenStart = try integer(startOpcode, in: 0...Int(Int32.max))
            let givenLast = try integer(endOpcode, in: 0...Int(Int32.max))
            var loop = info.loop
            if givenStart != nil || givenLast != nil {
                // One of the two alone: the other is the sample's start (0) or its last frame, as SFZ players take it.
                let start = givenStart ?? 0, last = givenLast ?? (frames - 1)
                guard start < last, last < frames else {
                    let named = givenLast != nil ? endOpcode : startOpcode
                    throw .init("\(at(named)): the loop \(start)...\(last) is not within the sample's \(frames) frames")
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

    /// The first range of `marker` in `line` at or after `start` (default: the start), by
    /// characters. Written out rather than the standard library's `firstRange(of:)`, which is in
    /// _StringProcessing: linking it brings the regex engine into the `audiograph` executable.
    static func range(of marker: String, in line: String, from start: String.Index? = nil) -> Range<String.Index>? {
        var i = start ?? line.startIndex
        while i < line.endIndex {
            if line[i...].starts(with: marker) { return i..<line.index(i, offsetBy: marker.count) }
            i = line.index(after: i)
        }
        return nil
    }

    /// `path` with its backslashes made slashes (SFZ files written on Windows).
    static func slashes(_ path: String) -> String {
        String(path.map { $0 == "\\" ? "/" : $0 })
    }

    /// `text` without the spaces and tabs at its ends (Unicode space separators and tab, the
    /// set `CharacterSet.whitespaces` names).
    static func trimmingBlanks(_ text: String) -> String {
        func isBlank(_ c: Character) -> Bool {
            c.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
        }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(text[first...last])
    }

    /// A key: a number 0...127 or a note name (`c4` = 60; `#` sharps, `b` flats, octave -1...9).
    static func noteNumber(_ text: String) -> Int? {
        if let n = Int(text) { return (0...127).contains(n) ? n : nil }
        let lower = text.lowercased()
        guard let letter = lower.first, let base = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11][String(letter)] else { return nil }
        var rest = lower.dropFirst()
        var offset = 0
        if rest.first == "#" { offset = 1; rest = rest.dropFirst() } else if rest.first == "b", rest.count > 1 { offset = -1; rest = rest.dropFirst() }
        guard let octave = Int(rest), (-1...9).contains(octave) else { return nil }
        let n = (octave + 1) * 12 + base + offset
        return (0...127).contains(n) ? n : nil
    }
}
