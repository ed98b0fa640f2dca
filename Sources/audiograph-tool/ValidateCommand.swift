// `audiograph validate GRAPH...`: checks files completely without rendering.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check graph files completely (schema, ranges, references, formats, cycles, updates) without rendering.")

    @Argument(help: "Graph files to check.")
    var graphs: [String]

    func validate() throws {
        guard !graphs.isEmpty else { throw ValidationError("give at least one graph file") }
    }

    func run() throws {
        var failed = false
        for path in graphs {
            do {
                _ = try GraphLoader.load(path)
                print("\(path): ok")
            } catch {
                Diagnostics.report(error)
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.invalidInput) }
    }
}
