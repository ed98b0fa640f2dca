// `audiograph render GRAPH`: offline, as fast as possible, through the graph's generic output.
import ArgumentParser
import AudioGraphKit
import Foundation

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

    func validate() throws {
        if duration != nil && frames != nil { throw ValidationError("give --duration or --frames, not both") }
        if let d = duration, !(d >= 0 && d.isFinite && d < 1e7) { throw ValidationError("--duration must be a number of seconds >= 0") }
        if let f = frames, f < 0 { throw ValidationError("--frames must be >= 0") }
        if let s = slice, !(1...65536).contains(s) { throw ValidationError("--slice must be between 1 and 65536") }
        if let t = threads, !(1...256).contains(t) { throw ValidationError("--threads must be between 1 and 256") }
        let out = outputPath
        guard AudioFileWriter.majorFormat(forPath: out) != nil else {
            throw ValidationError("\(out): unknown file type (use .wav, .aiff, .aif, .flac, .ogg, .opus, .mp3, .caf, .au, .w64 or .rf64)")
        }
        if let t = sampleType?.value {
            do { try AudioFileWriter.validate(path: out, sampleType: t, channels: 2, sampleRate: 48000) } catch {
                throw ValidationError(error.description)
            }
        }
    }

    var outputPath: String {
        if let output { return output }
        let name = graph.split(separator: "/").last.map(String.init) ?? graph
        var stem = name
        for ext in [".json", ".mid", ".midi", ".MID", ".MIDI"] where stem.hasSuffix(ext) { stem = String(stem.dropLast(ext.count)) }
        return stem + ".wav"
    }

    func run() throws {
        let isMIDI = GraphLoader.isMIDIFile(graph)
        if soundfont != nil && !isMIDI {
            Diagnostics.error("\(graph): --soundfont is for MIDI files (a graph names its SoundFont in its sampler's properties)")
            throw ExitCode(ExitStatus.invalidInput)
        }
        let validated: ValidatedGraph
        if isMIDI {
            // The MIDI file's own problems first, as one line naming the file and byte.
            do { _ = try MIDIFile(contentsOf: graph) } catch {
                Diagnostics.error("\(graph): " + (FileManager.default.fileExists(atPath: graph)
                                                   ? (error.offset.map { "byte \($0): " } ?? "") + error.reason : "no such file"))
                throw ExitCode(ExitStatus.invalidInput)
            }
            do { validated = try GraphLoader.loadMIDIFile(graph, soundFont: soundfont) } catch {
                Diagnostics.report(error)
                throw ExitCode(ExitStatus.invalidInput)
            }
        } else {
            validated = try Diagnostics.loadGraph(graph)
        }
        let out = outputPath
        let renderer: OfflineRenderer
        do {
            renderer = try OfflineRenderer(validated, outputPath: out, duration: duration, frames: frames,
                                           sampleType: sampleType?.value, sliceSize: slice, measuresLoudness: !quiet,
                                           renderThreads: threads ?? ProcessInfo.processInfo.activeProcessorCount)
        } catch {
            switch error {
            case .insufficientSpace:
                Diagnostics.error("\(error)")
                throw ExitCode(ExitStatus.runtime)
            case .file, .pathConflict:
                Diagnostics.error("\(error)")
            default:
                Diagnostics.error("\(graph): \(error)")
            }
            throw ExitCode(ExitStatus.invalidInput)
        }
        // SIGINT, SIGTERM and SIGHUP stop the render between slices, or 0.15 s later mid-slice;
        // its temporary files go either way.
        installInterruptHandlers(deadlineMessage: "\(out): \(RenderError.interrupted)")
        let bar = (!quiet && Diagnostics.stderrIsTerminal) ? ProgressBar() : nil
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try renderer.render(to: out, progress: bar.map { b in { b.update($0) } },
                                isCancelled: { interruptRequested.load(ordering: .relaxed) })
        } catch {
            bar?.finish()
            switch error {
            case .graph(let e):
                Diagnostics.error("\(graph): \(e)")
                throw ExitCode(ExitStatus.invalidInput)
            case .interrupted:
                if claimInterruptReport() { Diagnostics.error("\(out): \(error)") }
                throw ExitCode(ExitStatus.runtime)
            default:
                Diagnostics.error("\(out): \(error)")
                throw ExitCode(ExitStatus.runtime)
            }
        }
        bar?.finish()
        // Faults the graph contained (a plugin muted, NaN kept from a plugin) and NaN that got
        // through to the file are said, whether or not the summary is printed.
        for line in renderer.nodeFaultSummaries { Diagnostics.error("warning: \(graph): \(line)") }
        let nonFinite = renderer.nonFiniteSampleCount
        if nonFinite > 0 {
            Diagnostics.error((strict ? "" : "warning: ")
                              + "\(out): \(nonFinite) sample\(nonFinite == 1 ? " was" : "s were") NaN or infinite"
                              + " (left out of the peak, RMS and loudness)")
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let length = Double(renderer.frameCount) / renderer.outputRate
        if !quiet {
            let peak = renderer.peak > 0 ? 20 * log10(Double(renderer.peak)) : -Double.infinity
            let rms = renderer.rms > 0 ? 20 * log10(renderer.rms) : -Double.infinity
            let speed = seconds > 0 ? length / seconds : 0
            let f = { (x: Double) in String(format: "%.2f", x) }
            print("wrote \(out): \(f(length)) s (\(renderer.frameCount) frames, \(renderer.fileFormat.channelCount) ch, "
                  + "\(ParameterInfo.format(renderer.outputRate)) Hz, \(renderer.fileFormat.sampleType)), "
                  + "peak \(f(peak)) dBFS, RMS \(f(rms)) dBFS, "
                  + (nonFinite > 0 ? "\(nonFinite) non-finite samples, " : "") + "rendered in \(f(seconds)) s (\(f(speed))x real time)")
            if let loudness = renderer.loudness { print(loudness.summary) }
        }
        if strict && nonFinite > 0 { throw ExitCode(ExitStatus.runtime) }
    }
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
