// `audiograph inspect GRAPH [--dot]`: nodes, buses and formats after propagation.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print the nodes, buses and formats after propagation (or Graphviz with --dot).")

    @Argument(help: "The graph file.")
    var graph: String

    @Flag(help: "Print the graph in Graphviz dot format.")
    var dot = false

    func run() throws {
        let validated = try Diagnostics.loadGraph(graph)
        print(dot ? GraphInspection.dot(validated) : GraphInspection.text(validated), terminator: "")
    }
}
