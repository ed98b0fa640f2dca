// validate and initialize agree: every graph file the repository has, and hostile ones, through both.
import AudioGraphKit
import AudioGraphPulse
import Foundation
import XCTest

final class GraphLoaderRulesTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let hostileFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/hostile")

    /// What one side made of a graph file: accepted, or refused with one message.
    enum Verdict: Equatable {
        case accepted
        case refused(String)
    }

    /// `validate` (`audiograph validate`'s call) and `initialize` followed by every update in the
    /// renderer's order (the engine's own path for a running graph, outputs as described) on the
    /// same file. Nil for `initialize` when the file checks refuse it (nothing to build: those
    /// problems are about the file, not the graph rules).
    func verdicts(_ path: String) -> (validate: Verdict, initialize: Verdict?, validated: ValidatedGraph?) {
        let validate: Verdict
        var validated: ValidatedGraph?
        do {
            validated = try GraphLoader.load(path)
            validate = .accepted
        } catch {
            validate = .refused(error.errors.map { error -> String in
                if case .engine(let e) = error.problem { return e.description }
                return error.line
            }.joined(separator: "\n"))
        }
        let described: ValidatedGraph
        do {
            described = try GraphDescription.load(contentsOf: path, fileInfo: GraphLoader.probe)
        } catch {
            return (validate, nil, validated)
        }
        return (validate, Self.initialize(described, outputs: .asDescribed), validated)
    }

    /// Builds and initializes the graph, then applies each update as the offline renderer does
    /// (time order, file order for equal frames; each entry one pending-change list).
    static func initialize(_ v: ValidatedGraph, outputs: OutputPlacement) -> Verdict {
        let d = v.description
        do {
            let built = try GraphLoader.build(v, maximumFramesPerSlice: 64, outputs: outputs) { node in
                (node as? InputNode)?.rendersSilenceWithoutContext = true
            }
            for index in d.updateOrder {
                built.graph.enqueue(contentsOf: try GraphAssembly.changes(for: d.updates[index], sampleRate: d.sampleRate,
                                                                         outputs: outputs))
                try built.graph.update(waitUntilApplied: false)
            }
            built.graph.uninitialize()
            return .accepted
        } catch {
            return .refused(error.description)
        }
    }

    /// The shared conformance cases beside the clone (`../shared/conformance/cases`), when they
    /// are there and `AG_WITHOUT_SHARED` is not set (`.ci/run` sets it for one pass, to prove that
    /// the suite stands alone on a fresh clone, as a user has it).
    static var sharedCases: URL? {
        guard ProcessInfo.processInfo.environment["AG_WITHOUT_SHARED"] == nil else { return nil }
        let cases = repository.deletingLastPathComponent().appendingPathComponent("shared/conformance/cases")
        return FileManager.default.fileExists(atPath: cases.path) ? cases : nil
    }

    /// Every graph file: Graphs/, the test fixtures, the hostile graphs and (when present) the
    /// shared conformance cases.
    static func graphFiles() -> [String] {
        let fm = FileManager.default
        var files: [String] = []
        for folder in ["Graphs", "Tests"] {
            guard let walker = fm.enumerator(atPath: repository.appendingPathComponent(folder).path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".json") && !relative.contains("expect") {
                files.append(repository.appendingPathComponent(folder).appendingPathComponent(relative).path)
            }
        }
        guard let cases = sharedCases else { return files.sorted() }
        for name in (try? fm.contentsOfDirectory(atPath: cases.path)) ?? [] {
            let graph = cases.appendingPathComponent(name).appendingPathComponent("graph.json").path
            if fm.fileExists(atPath: graph) { files.append(graph) }
        }
        return files.sorted()
    }

    func testValidateAndInitializeAgreeOnEveryGraphFile() {
        let files = Self.graphFiles()
        XCTAssertGreaterThanOrEqual(files.filter { $0.contains("/Graphs/") }.count, 7, "\(files)")
        XCTAssertGreaterThanOrEqual(files.filter { $0.contains("/hostile/") }.count, 8, "\(files)")
        var compared = 0, refused = 0, comparedHere = 0
        for path in files {
            let (validate, initialize, validated) = verdicts(path)
            guard let initialize else {
                guard case .refused = validate else { return XCTFail("\(path): the file checks refuse it but validate accepts") }
                continue
            }
            compared += 1
            if path.hasPrefix(Self.repository.path + "/") { comparedHere += 1 }
            XCTAssertEqual(validate, initialize, path)
            if case .refused = validate { refused += 1 }
            // Offline (a generic output for an `output` node) is never stricter than validate.
            if let validated {
                XCTAssertEqual(Self.initialize(validated, outputs: .offline), .accepted, "\(path) offline")
            }
        }
        print("GraphLoaderRulesTests: \(files.count) files, \(compared) through both, \(refused) refused by both")
        // The repository's own graphs stand alone (a fresh clone has no ../shared): 18 of them
        // reach both sides today; the shared cases, when present, add theirs.
        XCTAssertGreaterThanOrEqual(comparedHere, 15, "the repository's own graph files through both")
        if let cases = Self.sharedCases {
            XCTAssertGreaterThan(compared - comparedHere, 5, "the shared cases in \(cases.path) through both")
        }
    }

    /// The hostile graphs, one by one: what both sides say (so a change of verdict is seen here).
    func testHostileGraphsGetTheEnginesVerdict() {
        let expected: [String: String?] = [
            "converter-into-mixer-at-another-rate.json": nil,
            "converter-into-eq-into-mixer.json": "\"conv\" outputs 22050 Hz but \"eq\" runs at 48000 Hz and does not convert rates (put a converter between them)",
            "output-at-another-rate.json": nil,  // the PulseAudio output opens its stream at its input's rate
            "conversion-beyond-ratio.json": "node \"mix\": cannot convert 1000 Hz to 384000 Hz",
            // The engine's rule: a declared channel count wins over the input's (AudioGraphTests.testDeclaredFormatWins);
            // the old validator refused this graph, render built it.
            "channels-beyond-limits.json": nil,
            "cycle-through-updates.json": "the connections form a cycle through \"mix\"",
            "format-change-through-updates.json": "its output format would change",
            "node-added-at-another-rate.json": nil,
        ]
        for (name, message) in expected {
            let path = Self.hostileFolder.appendingPathComponent(name).path
            let (validate, initialize, _) = verdicts(path)
            XCTAssertEqual(validate, initialize, name)
            switch (validate, message) {
            case (.accepted, nil): break
            case (.refused(let got), let want?): XCTAssertTrue(got.contains(want), "\(name): \(got)")
            default: XCTFail("\(name): validate says \(validate), expected \(message ?? "accepted")")
            }
        }
    }

    func testAValidatorRefusalNamesTheFileAndThePlace() throws {
        let path = Self.hostileFolder.appendingPathComponent("converter-into-eq-into-mixer.json").path
        XCTAssertThrowsError(try GraphLoader.load(path)) { error in
            let lines = (error as! GraphDescriptionErrors).lines
            XCTAssertEqual(lines, ["\(path): connections[1]: \"conv\" outputs 22050 Hz but \"eq\" runs at 48000 Hz and does not convert rates (put a converter between them)"])
        }
    }

    func testInspectPrintsTheEnginesFormats() throws {
        let path = Self.hostileFolder.appendingPathComponent("converter-into-mixer-at-another-rate.json").path
        let v = try GraphLoader.load(path)
        let built = try GraphLoader.build(v, outputs: .offline)
        defer { built.graph.uninitialize() }
        for node in built.graph.nodes {
            XCTAssertEqual(v.formats[node.id]?.outputs.map(\.sampleRate), node.outputFormats.map(\.sampleRate), node.id)
            XCTAssertEqual(v.formats[node.id]?.outputs.map(\.channels), node.outputFormats.map(\.channelCount), node.id)
        }
        XCTAssertEqual(v.formats["conv"]?.outputs.first?.sampleRate, 8000)
        XCTAssertEqual(v.formats["mix"]?.outputs.first?.sampleRate, 48000)
    }
}
