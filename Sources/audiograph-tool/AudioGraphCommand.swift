// The root command: lists the subcommands.
import ArgumentParser

/// `audiograph`: render, play, validate and inspect AudioGraph graph files.
struct AudioGraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiograph",
        abstract: "Render, play, validate and inspect AudioGraph graph files.",
        version: "0.1.0",
        subcommands: [RenderCommand.self, ValidateCommand.self, InspectCommand.self, PlotCommand.self, PluginsCommand.self] + liveCommands)
}
