// `audiograph devices`: PulseAudio sinks and sources with their formats.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit
import Foundation

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List PulseAudio sinks and sources with their formats (* marks the defaults).")

    func run() throws {
        let devices: [PulseDevice]
        do {
            let context = try PulseContext(applicationName: "audiograph")
            defer { context.close() }
            devices = try PulseDevices.list(context: context)
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        let width = devices.map(\.name.count).max() ?? 0
        for d in devices {
            let name = d.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let format = "\(d.sampleFormat) \(d.channels) ch \(ParameterInfo.format(Double(d.sampleRate))) Hz"
            let monitor = d.monitorOf.map { " (monitor of \($0))" } ?? ""
            print("\(d.isDefault ? "*" : " ") \(d.kind == .sink ? "sink  " : "source") \(name)  \(format)  \(d.description)\(monitor)")
        }
    }
}
