// `audiograph plot FILE|GRAPH -o OUT.png|OUT.svg`: a picture of a sound file, or of a graph rendered offline first.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit
import Foundation

struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a waveform, spectrum or spectrogram of a sound file, or of a graph (.json) rendered offline first, as PNG or SVG.")

    @Argument(help: "A sound file, or a graph file (.json) to render offline first.")
    var input: String

    @Option(name: .shortAndLong, help: "The picture: a .png or .svg file.")
    var output: String

    @Option(help: "waveform, spectrum or spectrogram.")
    var kind: String = PlotKind.waveform.rawValue

    @Option(help: "Width in pixels, 64...16384.")
    var width: Int = 1200

    @Option(help: "Height in pixels, 64...16384.")
    var height: Int = 400

    @Option(help: "Only this channel (0-based; default: all).")
    var channel: Int?

    func validate() throws {
        guard PlotKind(rawValue: kind) != nil else { throw ValidationError("--kind must be waveform, spectrum or spectrogram") }
        guard (64...16384).contains(width), (64...16384).contains(height) else {
            throw ValidationError("--width and --height must be between 64 and 16384")
        }
        if let channel, channel < 0 { throw ValidationError("--channel must be >= 0") }
        let ext = output.split(separator: "/").last?.split(separator: ".").last?.lowercased()
        guard output.split(separator: "/").last?.contains(".") == true, ext == "png" || ext == "svg" else {
            throw ValidationError("\(output): unknown picture type (use .png or .svg)")
        }
    }

    func run() throws {
        var soundFile = input
        var temporary: String?
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        // A signal stops the render between slices or, at the latest, 0.15 s later (mid-slice or
        // while drawing); the rendered file goes either way.
        installInterruptHandlers(deadlineMessage: "\(output): \(RenderError.interrupted)")
        if input.lowercased().hasSuffix(".json") {
            let validated = try Diagnostics.loadGraph(input)
            // A registered temporary (`.audiograph-plot.partial-PID.wav`): removed on a signal's
            // deadline, and by the next plot when this process dies without removing it.
            let path = AudioFileWriter.temporaryPath(for: NSTemporaryDirectory() + "/audiograph-plot.wav")
            temporary = path
            do {
                let renderer = try OfflineRenderer(validated, outputPath: path)
                try renderer.render(to: path, isCancelled: { interruptRequested.load(ordering: .relaxed) })
            } catch {
                if case .interrupted = error {
                    if claimInterruptReport() { Diagnostics.error("\(output): \(error)") }
                    throw ExitCode(ExitStatus.runtime)
                }
                Diagnostics.error("\(input): \(error)")
                throw ExitCode(ExitStatus.invalidInput)
            }
            soundFile = path
        }
        do {
            try AudioPlot.draw(file: soundFile, to: output, kind: PlotKind(rawValue: kind)!,
                               width: width, height: height, channel: channel,
                               title: input.split(separator: "/").last.map(String.init))
        } catch {
            switch error {
            case .cairo, .libraryMissing:
                Diagnostics.error("\(error)")
                throw ExitCode(ExitStatus.runtime)
            default:
                Diagnostics.error(temporary == nil ? "\(error)" : "\(input): \(error)")
                throw ExitCode(ExitStatus.invalidInput)
            }
        }
    }
}
