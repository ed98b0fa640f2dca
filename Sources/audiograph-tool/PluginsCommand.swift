// `audiograph plugins`: the installed LV2 plugins with their ports (what an lv2 node may name).
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit

struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List installed LV2 plugins: URI, name, ports (index, symbol, kind, direction, range, default).",
        discussion: "Plugins are searched on LV2_PATH (else ~/.lv2, /usr/local/lib/lv2, /usr/lib/lv2).")

    @Argument(help: "Only the plugins whose URI is this (exactly) or contains it.")
    var uri: String?

    func run() throws {
        let world: LV2World
        do {
            world = try LV2World.shared()
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        let all = world.plugins
        // lilv's own lines (an unreadable folder on the path: hundreds of them) as one of ours.
        if let report = world.loadReport { Diagnostics.error("warning: \(report)") }
        var shown = all
        if let uri {
            shown = all.filter { $0.uri == uri }
            if shown.isEmpty { shown = all.filter { $0.uri.contains(uri) } }
            if shown.isEmpty {
                Diagnostics.error("audiograph: \(LV2Error.pluginNotFound(uri: uri))")
                throw ExitCode(ExitStatus.invalidInput)
            }
        }
        for plugin in shown { print(plugin.listing) }
    }
}
