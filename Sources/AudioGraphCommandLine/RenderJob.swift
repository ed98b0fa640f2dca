// What `audiograph render` does once its arguments are known, and the parser of its plain command lines.
import AudioGraphOffline
import AudioGraphRealtime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `render` run: the graph (or MIDI file), where to write, and the options; `audiograph-tool`'s
/// `RenderCommand` builds it from swift-argument-parser's parse, `init?(plainArguments:)` from a
/// plain command line (the `audiograph` executable, which links neither swift-argument-parser nor
/// Foundation: Docs/Performance.md "Start-up: a render without Foundation").
///
/// A plain command line (`render GRAPH [-o OUT] [--duration S] ... [--quiet]`, each option once,
/// its value in the next argument) skips swift-argument-parser: its first parse builds every
/// subcommand's argument set by reflection, and each first conformance lookup of the Swift runtime
/// scans the binary's ~6 000 conformance records, about half the CPU time of a short render
/// (Docs/Performance.md "Start-up: the render command line"). Anything else (`--help`, `--x=y`,
/// a value starting with `-`, an option given twice, a value the option does not take, a failed
/// validation) returns nil, and the caller hands the command line to `audiograph-tool`, whose
/// swift-argument-parser prints its usual messages.
///
/// Thread safety: a value type; `run()` belongs on the main thread (it installs signal handlers).
package struct RenderJob {
    package var graph: String
    package var soundfont: String?
    package var output: String?
    package var duration: Double?
    package var frames: Int64?
    package var sampleType: SampleType?
    package var slice: Int?
    package var threads: Int?
    package var quiet = false
    package var strict = false

    /// A command line's problem that `validate()` finds, in the words swift-argument-parser's
    /// `ValidationError` prints.
    package struct InvalidArguments: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    package init(graph: String, soundfont: String?, output: String?, duration: Double?, frames: Int64?, sampleType: SampleType?,
         slice: Int?, threads: Int?, quiet: Bool, strict: Bool) {
        self.graph = graph
        self.soundfont = soundfont
        self.output = output
        self.duration = duration
        self.frames = frames
        self.sampleType = sampleType
        self.slice = slice
        self.threads = threads
        self.quiet = quiet
        self.strict = strict
    }

    /// The job of `arguments` (the command line without the program's name) when it is a plain,
    /// valid `render` command line, with the values swift-argument-parser would give (`Double(_:)`,
    /// `Int(_:)`, `Int64(_:)`, `SampleType(rawValue:)`); nil for anything else.
    package init?(plainArguments arguments: [String]) {
        guard arguments.first == "render" else { return nil }
        var graph: String?
        var values: [String: String] = [:]
        var flags: Set<String> = []
        let valued: Set<String> = ["--soundfont", "--output", "--duration", "--frames", "--sample-type", "--slice", "--threads"]
        var i = 1
        while i < arguments.count {
            let a = arguments[i]
            let name = a == "-o" ? "--output" : a
            if valued.contains(name) {
                guard i + 1 < arguments.count, values[name] == nil else { return nil }
                let v = arguments[i + 1]
                guard !v.isEmpty, !v.hasPrefix("-") else { return nil }
                values[name] = v
                i += 2
                continue
            }
            if a == "--quiet" || a == "--strict" {
                guard flags.insert(a).inserted else { return nil }
            } else if !a.hasPrefix("-"), !a.isEmpty, graph == nil, a != "help" {
                graph = a
            } else {
                return nil
            }
            i += 1
        }
        guard let graph else { return nil }
        self.graph = graph
        soundfont = values["--soundfont"]
        output = values["--output"]
        if let v = values["--duration"] { guard let d = Double(v) else { return nil }; duration = d }
        if let v = values["--frames"] { guard let f = Int64(v) else { return nil }; frames = f }
        if let v = values["--sample-type"] { guard let t = SampleType(rawValue: v) else { return nil }; sampleType = t }
        if let v = values["--slice"] { guard let s = Int(v) else { return nil }; slice = s }
        if let v = values["--threads"] { guard let t = Int(v) else { return nil }; threads = t }
        quiet = flags.contains("--quiet")
        strict = flags.contains("--strict")
        do { try validate() } catch { return nil }
    }

    package func validate() throws(InvalidArguments) {
        if duration != nil && frames != nil { throw InvalidArguments("give --duration or --frames, not both") }
        if let d = duration, !(d >= 0 && d.isFinite && d < 1e7) { throw InvalidArguments("--duration must be a number of seconds >= 0") }
        if let f = frames, f < 0 { throw InvalidArguments("--frames must be >= 0") }
        if let s = slice, !(1...65536).contains(s) { throw InvalidArguments("--slice must be between 1 and 65536") }
        if let t = threads, !(1...256).contains(t) { throw InvalidArguments("--threads must be between 1 and 256") }
        let out = outputPath
        guard AudioFileWriter.majorFormat(forPath: out) != nil else {
            throw InvalidArguments("\(out): unknown file type (use .wav, .aiff, .aif, .flac, .ogg, .opus, .mp3, .caf, .au, .w64 or .rf64)")
        }
        if let t = sampleType {
            do { try AudioFileWriter.validate(path: out, sampleType: t, channels: 2, sampleRate: 48000) } catch {
                throw InvalidArguments(error.description)
            }
        }
    }

    package var outputPath: String {
        if let output { return output }
        let name = graph.split(separator: "/").last.map(String.init) ?? graph
        var stem = name
        for ext in [".json", ".mid", ".midi", ".MID", ".MIDI"] where stem.hasSuffix(ext) { stem = String(stem.dropLast(ext.count)) }
        return stem + ".wav"
    }

    /// - Throws: ``CommandFailure`` with the exit status, once the problem is reported on standard error.
    package func run() throws(CommandFailure) {
        let isMIDI = GraphLoader.isMIDIFile(graph)
        if soundfont != nil && !isMIDI {
            Diagnostics.error("\(graph): --soundfont is for MIDI files (a graph names its SoundFont in its sampler's properties)")
            throw CommandFailure(ExitStatus.invalidInput)
        }
        let validated: ValidatedGraph
        if isMIDI {
            // The MIDI file's own problems first, as one line naming the file and byte.
            do { _ = try MIDIFile(contentsOf: graph) } catch {
                Diagnostics.error("\(graph): " + (access(graph, F_OK) == 0
                                                   ? (error.offset.map { "byte \($0): " } ?? "") + error.reason : "no such file"))
                throw CommandFailure(ExitStatus.invalidInput)
            }
            do { validated = try GraphLoader.loadMIDIFile(graph, soundFont: soundfont) } catch {
                Diagnostics.report(error)
                throw CommandFailure(ExitStatus.invalidInput)
            }
        } else {
            validated = try Diagnostics.loadGraph(graph)
        }
        let out = outputPath
        let renderer: OfflineRenderer
        do {
            renderer = try OfflineRenderer(validated, outputPath: out, duration: duration, frames: frames,
                                           sampleType: sampleType, sliceSize: slice, measuresLoudness: !quiet, measuresLevels: !quiet,
                                           renderThreads: threads)
        } catch {
            switch error {
            case .insufficientSpace:
                Diagnostics.error("\(error)")
                throw CommandFailure(ExitStatus.runtime)
            case .file, .pathConflict:
                Diagnostics.error("\(error)")
            default:
                Diagnostics.error("\(graph): \(error)")
            }
            throw CommandFailure(ExitStatus.invalidInput)
        }
        // SIGINT, SIGTERM and SIGHUP stop the render between slices, or 0.15 s later mid-slice;
        // its temporary files go either way.
        installInterruptHandlers(deadlineMessage: "\(out): \(RenderError.interrupted)")
        let bar = (!quiet && Diagnostics.stderrIsTerminal) ? ProgressBar() : nil
        let started = MonotonicClock.seconds()
        do {
            try renderer.render(to: out, progress: bar.map { b in { b.update($0) } },
                                isCancelled: { interruptRequested.load(ordering: .relaxed) })
        } catch {
            bar?.finish()
            switch error {
            case .graph(let e):
                Diagnostics.error("\(graph): \(e)")
                throw CommandFailure(ExitStatus.invalidInput)
            case .interrupted:
                if claimInterruptReport() { Diagnostics.error("\(out): \(error)") }
                throw CommandFailure(ExitStatus.runtime)
            case .file:
                Diagnostics.error("\(error)")   // it names the file (the output or a tap)
                throw CommandFailure(ExitStatus.runtime)
            default:
                Diagnostics.error("\(out): \(error)")
                throw CommandFailure(ExitStatus.runtime)
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
        let seconds = MonotonicClock.seconds() - started
        let length = Double(renderer.frameCount) / renderer.outputRate
        if !quiet {
            let peak = renderer.peak > 0 ? 20 * log10(Double(renderer.peak)) : -Double.infinity
            let rms = renderer.rms > 0 ? 20 * log10(renderer.rms) : -Double.infinity
            let speed = seconds > 0 ? length / seconds : 0
            let f = { (x: Double) in PrintfFormat.string("%.2f", x) }
            print("wrote \(out): \(f(length)) s (\(renderer.frameCount) frames, \(renderer.fileFormat.channelCount) ch, "
                  + "\(ParameterInfo.format(renderer.outputRate)) Hz, \(renderer.fileFormat.sampleType)), "
                  + "peak \(f(peak)) dBFS, RMS \(f(rms)) dBFS, "
                  + (nonFinite > 0 ? "\(nonFinite) non-finite samples, " : "") + "rendered in \(f(seconds)) s (\(f(speed))x real time)")
            if let loudness = renderer.loudness { print(loudness.summary) }
        }
        if strict && nonFinite > 0 { throw CommandFailure(ExitStatus.runtime) }
    }
}
