// `audiograph render GRAPH`: offline, as fast as possible, through the graph's generic output.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a graph offline to a sound file (the extension picks the file type).",
        discussion: "A Standard MIDI File (.mid) in place of the graph renders through the default sampler graph: a SoundFont sampler (--soundfont, default the installed General MIDI SoundFont) playing every track.")

    @Argument(help: "The graph file, or a Standard MIDI File.")
    var graph: String

    @Option(help: "The SoundFont 2 file a MIDI file is played with (default: the installed General MIDI SoundFont).")
    var soundfont: String?

    @Option(name: .shortAndLong, help: "Output file (default: the graph's name with .wav, in the current folder).")
    var output: String?

    @Option(help: "Length in seconds.")
    var duration: Double?

    @Option(help: "Length in frames of the output.")
    var frames: Int64?

    @Option(name: .customLong("sample-type"), help: "float32, float64, int16, int24 or int32.")
    var sampleType: SampleTypeArgument?

    @Option(help: "Frames per render call, 1...65536 (default: 4096, or the file's maximumFramesPerSlice if larger; the output is the same).")
    var slice: Int?

    @Option(help: "Threads that render each slice (default: the number of cores; 1: serial).")
    var threads: Int?

    @Flag(help: "No progress bar.")
    var quiet = false

    @Flag(help: "Exit with status 3 when the output holds NaN or infinite samples (the file is still written).")
    var strict = false

    /// The parsed arguments as the render they ask for.
    var job: RenderJob {
        RenderJob(graph: graph, soundfont: soundfont, output: output, duration: duration, frames: frames,
                  sampleType: sampleType?.value, slice: slice, threads: threads, quiet: quiet, strict: strict)
    }

    func validate() throws {
        do { try job.validate() } catch { throw ValidationError(error.description) }
    }

    func run() throws { try job.run() }
}

/// `--sample-type` values.
struct SampleTypeArgument: ExpressibleByArgument {
    let value: SampleType
    init?(argument: String) {
        guard let v = SampleType(rawValue: argument) else { return nil }
        value = v
    }
    static var allValueStrings: [String] { SampleType.allCases.map(\.rawValue) }
}
