// Docs/Architecture.md's module table and README's module list agree with Package.swift.
import Foundation
import XCTest

final class ArchitectureDocTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A target of Package.swift: its name, kind and the names in its `dependencies` list
    /// (targets and products).
    struct Target {
        var name: String
        var kind: String
        var dependencies: Set<String>
    }

    /// Every target declared in `text` (Package.swift), the AG_FUZZ ones included.
    static func targets(in text: String) throws -> [Target] {
        let declaration = try NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget|systemLibrary)\(name: "([^"]+)""#)
        let quoted = try NSRegularExpression(pattern: #""([^"]+)""#)
        let ns = text as NSString
        let matches = declaration.matches(in: text, range: NSRange(location: 0, length: ns.length))
        return matches.enumerated().map { index, match in
            let end = index + 1 < matches.count ? matches[index + 1].range.location : ns.length
            var body = ns.substring(with: NSRange(location: match.range.upperBound, length: end - match.range.upperBound))
            // Only the dependency list: from `dependencies: [` to its closing bracket.
            var dependencies = Set<String>()
            if let start = body.range(of: "dependencies: [") {
                body = String(body[start.upperBound...])
                var depth = 1
                var list = ""
                for character in body {
                    if character == "[" { depth += 1 }
                    if character == "]" { depth -= 1; if depth == 0 { break } }
                    list.append(character)
                }
                // `.product(name: "X", package: "p")` names the product X; skip the package name.
                let cleaned = list.replacingOccurrences(of: #"package: "[^"]+""#, with: "", options: .regularExpression)
                let listNS = cleaned as NSString
                for m in quoted.matches(in: cleaned, range: NSRange(location: 0, length: listNS.length)) {
                    dependencies.insert(listNS.substring(with: m.range(at: 1)))
                }
            }
            return Target(name: ns.substring(with: match.range(at: 2)), kind: ns.substring(with: match.range(at: 1)),
                          dependencies: dependencies)
        }
    }

    /// Whether `target` is C: a system library, or a target whose folder holds C sources.
    static func isC(_ target: Target) -> Bool {
        if target.kind == "systemLibrary" { return true }
        let folder = root.appendingPathComponent("Sources").appendingPathComponent(target.name)
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { return false }
        // A C++ shim (CVoiceProcessing) is a C wrapper too.
        return files.contains { ($0 as? String).map { $0.hasSuffix(".c") || $0.hasSuffix(".cpp") } == true }
    }

    /// The rows of the module table: module names (column 1) and dependencies (column 2), each
    /// the backquoted names in the cell.
    static func tableRows(in doc: String) -> [(modules: [String], dependencies: Set<String>)] {
        let lines = doc.components(separatedBy: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| Module | Depends on |") }) else { return [] }
        var rows: [(modules: [String], dependencies: Set<String>)] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            rows.append((backquoted(cells[1]), Set(backquoted(cells[2]))))
        }
        return rows
    }

    static func backquoted(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The type names declared in Sources and Tests (so a doc's `AudioGraphError` or
    /// `AudioGraphConcurrencyTests` is not taken for a module).
    static func declaredTypeNames() throws -> Set<String> {
        let declaration = try NSRegularExpression(pattern: #"(?:class|struct|enum|protocol|actor)\s+(\w+)"#)
        var names = Set<String>()
        for folder in ["Sources", "Tests"] {
            let sources = root.appendingPathComponent(folder)
            for case let path as String in FileManager.default.enumerator(atPath: sources.path)! where path.hasSuffix(".swift") {
                let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8) as NSString
                for m in declaration.matches(in: text as String, range: NSRange(location: 0, length: text.length)) {
                    names.insert(text.substring(with: m.range(at: 1)))
                }
            }
        }
        return names
    }

    func testTheModuleTableIsPackageSwift() throws {
        let package = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = try Self.targets(in: package)
        let byName = Dictionary(uniqueKeysWithValues: targets.map { ($0.name, $0) })
        XCTAssertTrue(byName.keys.contains("AudioGraphCore") && byName.keys.contains("CPulse"), "Package.swift was not parsed")
        let doc = try String(contentsOf: Self.root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)
        let rows = Self.tableRows(in: doc)
        XCTAssertFalse(rows.isEmpty, "Architecture.md has no `| Module | Depends on |` table")
        var listed = Set<String>()
        for row in rows {
            for module in row.modules {
                listed.insert(module)
                guard let target = byName[module] else {
                    XCTFail("Architecture.md names module \(module), which Package.swift does not declare")
                    continue
                }
                let expected = target.dependencies.isEmpty ? Set(["—"]) : target.dependencies
                let documented = row.dependencies.isEmpty ? Set(["—"]) : row.dependencies
                for missing in expected.subtracting(documented) where missing != "—" {
                    XCTFail("Architecture.md omits the edge \(module) → \(missing)")
                }
                for extra in documented.subtracting(expected) where extra != "—" {
                    XCTFail("Architecture.md names an edge \(module) → \(extra) that Package.swift does not have")
                }
            }
        }
        for target in targets where target.kind != "testTarget" && !Self.isC(target) {
            XCTAssertTrue(listed.contains(target.name), "Architecture.md's module table omits \(target.name)")
        }
        // Anywhere in the doc or the README, a module-like name is a target or a declared type.
        let known = Set(targets.map(\.name)).union(try Self.declaredTypeNames())
        let moduleLike = try NSRegularExpression(pattern: #"\bAudioGraph[A-Z]\w*"#)
        for file in ["Docs/Architecture.md", "README.md"] {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8) as NSString
            for m in moduleLike.matches(in: text as String, range: NSRange(location: 0, length: text.length)) {
                let name = text.substring(with: m.range)
                XCTAssertTrue(known.contains(name), "\(file) names \(name), which is neither a target nor a type")
            }
        }
    }

    /// The checker itself: a made-up module, a missing edge and an omitted module are caught.
    func testTheParsersSeeTargetsEdgesAndRows() throws {
        let targets = try Self.targets(in: """
            .target(name: "A"),
            .target(name: "B",
                    dependencies: ["A", "CX", .product(name: "P", package: "p")]),
            .systemLibrary(name: "CX", pkgConfig: "x"),
            """)
        XCTAssertEqual(targets.map(\.name), ["A", "B", "CX"])
        XCTAssertEqual(targets[0].dependencies, [])
        XCTAssertEqual(targets[1].dependencies, ["A", "CX", "P"])
        let rows = Self.tableRows(in: """
            | Module | Depends on | What |
            |---|---|---|
            | `A` | — | a |
            | `B`, `C` | `A`, `CX` | b |

            """)
        XCTAssertEqual(rows.map(\.modules), [["A"], ["B", "C"]])
        XCTAssertEqual(rows.map(\.dependencies), [[], ["A", "CX"]])
    }

    // MARK: Imports and locks (the sources against Package.swift and the doc)

    /// The Swift files of each target with a folder of its own under Sources/, Examples/ or Fuzz/.
    static func swiftFiles(of target: Target) -> [URL] {
        let folders = ["Sources/\(target.name)", "Examples/\(target.name)", "Fuzz/\(target.name)", "Tests/\(target.name)"]
        var files: [URL] = []
        for folder in folders {
            let url = root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: url.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") { files.append(url.appendingPathComponent(path)) }
        }
        return files
    }

    /// Every target a Swift file imports is a dependency Package.swift declares for its target,
    /// and every dependency declared is imported somewhere in the target (no hidden or dead edges).
    func testEveryImportIsADeclaredDependencyAndEveryDependencyIsImported() throws {
        let package = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = try Self.targets(in: package)
        // A target's module name is its name with `-` written `_` (audiograph-tool imports as audiograph_tool).
        var targetOfModule = Dictionary(uniqueKeysWithValues: targets.map { ($0.name.replacingOccurrences(of: "-", with: "_"), $0.name) })
        targetOfModule["ArgumentParser"] = "ArgumentParser"
        let importLine = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|func|var|let|typealias|protocol)\s+)?(\w+)"#,
                                                 options: .anchorsMatchLines)
        var checked = 0
        for target in targets where target.kind != "systemLibrary" {
            let files = Self.swiftFiles(of: target)
            guard !files.isEmpty else { continue }
            var imported = Set<String>()
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8) as NSString
                for m in importLine.matches(in: text as String, range: NSRange(location: 0, length: text.length)) {
                    guard let module = targetOfModule[text.substring(with: m.range(at: 1))] else { continue }
                    imported.insert(module)
                    XCTAssertTrue(target.dependencies.contains(module),
                                  "\(file.lastPathComponent) (\(target.name)) imports \(module), which Package.swift does not list for \(target.name)")
                }
            }
            for dependency in target.dependencies.subtracting(imported) where !Self.isCTarget(dependency, targets) || target.kind == "testTarget" {
                // A C target is linked for its library even when only another C target's header
                // is imported; Swift dependencies and test dependencies must be imported.
                guard !Self.isCTarget(dependency, targets) else { continue }
                XCTFail("Package.swift lists \(dependency) for \(target.name), which no file of \(target.name) imports")
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 15, "targets checked")
    }

    static func isCTarget(_ name: String, _ targets: [Target]) -> Bool {
        targets.first { $0.name == name }.map(isC) ?? false
    }

    /// The lock and wait types a source file may use are the ones Docs/Architecture.md lists
    /// (its "Real-time rules" table), and each one listed is used.
    func testOnlyTheDocumentedLockTypesAppearInSources() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)
        guard let header = doc.range(of: "| type | where, and why not a `ControlLock` |") else {
            return XCTFail("Architecture.md has no lock-type table")
        }
        var documented = Set<String>()
        for line in doc[header.upperBound...].split(separator: "\n").dropFirst() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|") else { break }
            if let first = Self.backquoted(String(trimmed.split(separator: "|").first ?? "")).first { documented.insert(first) }
        }
        XCTAssertTrue(documented.contains("ControlLock"), "\(documented)")
        let lockTypes = ["ControlLock", "Mutex", "NSRecursiveLock", "NSLock", "NSCondition", "NSConditionLock", "pthread_mutex_t",
                         "pthread_rwlock_t", "pthread_cond_t", "os_unfair_lock", "sem_t", "DispatchSemaphore", "DispatchGroup"]
        let use = try NSRegularExpression(pattern: #"\b("# + lockTypes.joined(separator: "|") + #")\b"#)
        var found: [String: String] = [:]
        let sources = Self.root.appendingPathComponent("Sources")
        for case let path as String in FileManager.default.enumerator(atPath: sources.path)! where path.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            // Comments may name lock types; code may not, unless documented.
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            let ns = code as NSString
            for m in use.matches(in: code, range: NSRange(location: 0, length: ns.length)) {
                found[ns.substring(with: m.range(at: 1)), default: path] = found[ns.substring(with: m.range(at: 1))] ?? path
            }
        }
        for (type, file) in found where !documented.contains(type) {
            XCTFail("Sources/\(file) uses \(type), which Architecture.md's lock-type table does not list")
        }
        for type in documented where found[type] == nil {
            XCTFail("Architecture.md lists \(type), which no source uses")
        }
    }

    /// Docs/Architecture.md's "Public surface" list names exactly the public types each library
    /// module declares (a public type is a decision written there).
    /// The public surface is what the compiler exports, read from the modules' symbol graphs
    /// (`swift-symbolgraph-extract -minimum-access-level public` on the modules this test bundle
    /// was built with): every public or open type of each library module is in Architecture.md's
    /// "Public surface" list and every listed type is public, and the only public members added
    /// to other modules' types (the standard library's, Foundation's, another package module's)
    /// are the ones listed under `extensions`.
    func testThePublicTypesAreTheListedOnes() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)
        guard let section = doc.range(of: "## Public surface") else { return XCTFail("Architecture.md has no Public surface section") }
        var listed: [String: Set<String>] = [:]
        for line in doc[section.upperBound...].split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("- `") else { continue }
            let names = Self.backquoted(String(line))
            guard let module = names.first else { continue }
            listed[module, default: []].formUnion(names.dropFirst())   // a module may have several lines
        }
        let modules = ["AudioGraphRealtime", "AudioGraphCore", "AudioGraphNodes", "AudioGraphPulse", "AudioGraphPlugins",
                       "AudioGraphDescription", "AudioGraphOffline", "AudioGraphKit"]
        XCTAssertEqual(Set(listed.keys), Set(modules + ["extensions"]))
        let graphs = try Self.publicSymbolGraphs(modules)
        let typeKinds: Set<String> = ["swift.class", "swift.struct", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"]
        var extensions = Set<String>()
        var declarations = 0
        for module in modules {
            var declared = Set<String>()
            for (file, symbols) in graphs where file == module || file.hasPrefix(module + "@") {
                for symbol in symbols {
                    declarations += 1
                    if file == module, typeKinds.contains(symbol.kind) { declared.insert(symbol.path.last!) }
                    if file != module { extensions.insert(symbol.path.joined(separator: ".")) }
                }
            }
            let documented = listed[module] ?? []
            for name in declared.subtracting(documented).sorted() {
                XCTFail("\(module) exports public \(name), which Architecture.md's Public surface list does not name")
            }
            for name in documented.subtracting(declared).sorted() {
                XCTFail("Architecture.md's Public surface list names \(module).\(name), which \(module) does not export")
            }
        }
        XCTAssertEqual(extensions, listed["extensions"] ?? [], "public members added to other modules' types")
        XCTAssertGreaterThan(declarations, 100, "the symbol graphs were read (public declarations: \(declarations))")
    }

    /// One public symbol of a symbol graph: its kind (`swift.class`, `swift.method`, ...), path
    /// and declaration (`var volume: Float { get set }`).
    struct PublicSymbol { var kind: String; var path: [String]; var declaration = "" }

    /// The public and open symbols of `modules` (synthesized members left out), by symbol-graph
    /// file name (`Module`, or `Module@Other` for what Module adds to Other's types).
    static func publicSymbolGraphs(_ modules: [String]) throws -> [String: [PublicSymbol]] {
        let fm = FileManager.default
        // The modules this bundle was built with: `<scratch>/<triple>/debug/Modules`, beside the bundle.
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let moduleDir = bundleDir.appendingPathComponent("Modules")
        guard fm.fileExists(atPath: moduleDir.appendingPathComponent("AudioGraphKit.swiftmodule").path) else {
            XCTFail("no AudioGraphKit.swiftmodule beside the test bundle (\(moduleDir.path))")
            return [:]
        }
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        guard let tool = searchPath.map({ $0 + "/swift-symbolgraph-extract" }).first(where: { fm.isExecutableFile(atPath: $0) }) else {
            XCTFail("swift-symbolgraph-extract is not on PATH")
            return [:]
        }
        var flags = ["-I", moduleDir.path]
        let sources = root.appendingPathComponent("Sources")
        for name in try fm.contentsOfDirectory(atPath: sources.path).sorted() where name.hasPrefix("C") {
            flags += ["-I", sources.appendingPathComponent(name).path]
            let include = sources.appendingPathComponent(name).appendingPathComponent("include")
            if fm.fileExists(atPath: include.path) { flags += ["-I", include.path] }
            let map = bundleDir.appendingPathComponent("\(name).build/module.modulemap")
            if fm.fileExists(atPath: map.path) { flags += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        // The C libraries' headers that are not on the default path (lilv, cairo, ...).
        let pkgConfig = Process()
        pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
        pkgConfig.arguments = ["--cflags-only-I", "lilv-0", "libavformat", "cairo", "fftw3f", "soxr", "samplerate", "sndfile",
                               "libebur128", "libmysofa", "rubberband"]
        let pipe = Pipe()
        pkgConfig.standardOutput = pipe
        try pkgConfig.run()
        let cflags = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        pkgConfig.waitUntilExit()
        for flag in cflags.split(whereSeparator: { $0 == " " || $0 == "\n" }) { flags += ["-Xcc", String(flag)] }

        let output = fm.temporaryDirectory.appendingPathComponent("ag-symbolgraph-\(getpid())")
        try? fm.removeItem(at: output)
        try fm.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: output) }
        for module in modules {
            let extract = Process()
            extract.executableURL = URL(fileURLWithPath: tool)
            extract.arguments = ["-module-name", module, "-target", "x86_64-unknown-linux-gnu", "-minimum-access-level", "public",
                                 "-output-dir", output.path] + flags
            let errors = Pipe()
            extract.standardError = errors
            extract.standardOutput = errors
            try extract.run()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            extract.waitUntilExit()
            XCTAssertEqual(extract.terminationStatus, 0, "swift-symbolgraph-extract \(module): \(text)")
        }
        var graphs: [String: [PublicSymbol]] = [:]
        for file in try fm.contentsOfDirectory(atPath: output.path) where file.hasSuffix(".symbols.json") {
            let data = try Data(contentsOf: output.appendingPathComponent(file))
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            var symbols: [PublicSymbol] = []
            for case let symbol as [String: Any] in json["symbols"] as? [Any] ?? [] {
                let precise = (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? ""
                let access = symbol["accessLevel"] as? String ?? ""
                guard !precise.contains("::SYNTHESIZED::"), access == "public" || access == "open" else { continue }
                let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String ?? ""
                let fragments = symbol["declarationFragments"] as? [[String: Any]] ?? []
                symbols.append(PublicSymbol(kind: kind, path: symbol["pathComponents"] as? [String] ?? [],
                                            declaration: fragments.compactMap { $0["spelling"] as? String }.joined()))
            }
            graphs[String(file.dropLast(".symbols.json".count))] = symbols
        }
        return graphs
    }
}
