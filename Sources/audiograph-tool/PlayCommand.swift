// `audiograph play GRAPH`: real time to PulseAudio, with timed updates and commands from stdin.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit
import Foundation
import Synchronization

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a graph in real time to PulseAudio.",
        discussion: """
            Reads commands from standard input, one per line: set NODE ADDRESS VALUE [RAMP] \
            (at once, ramping RAMP seconds), connect FROM TO and disconnect TO (queued), update \
            (applies the queued changes as one list). Stops after --duration (graph time) or on \
            Ctrl-C, SIGTERM or SIGHUP and prints the latency and the underruns.
            """)

    @Argument(help: "The graph file (a genericOutput plays to the default sink, or --device).")
    var graph: String

    @Option(help: "Play exactly this many seconds of graph time, then let the output drain.")
    var duration: Double?

    @Option(help: "Sink name (default: the graph's, else the server's default sink).")
    var device: String?

    func validate() throws {
        if let d = duration, !(d >= 0 && d.isFinite) { throw ValidationError("--duration must be a number of seconds >= 0") }
    }

    func run() throws {
        let validated = try Diagnostics.loadGraph(graph)
        let rate = validated.description.sampleRate
        // --duration is graph time: exactly that many frames play, then the output drains.
        let endFrame = duration.map { FrameCount.frames(seconds: $0, sampleRate: rate) }
        let player: LivePlayer
        installInterruptHandlers()
        do {
            player = try LivePlayer(validated, device: device)
            try player.start(frames: endFrame)
        } catch {
            throw Self.exit(for: error, graph: graph)
        }
        let commands = CommandLineReader()
        commands.start()

        var failure: LivePlayerError?
        // Between commands the loop checks Ctrl-C and the end again, so however many commands
        // are queued, neither waits for the queue: one command at a time, then the checks.
        loop: while !interruptRequested.load(ordering: .relaxed) && !player.hasPlayedToEnd {
            do {
                try player.poll()
            } catch {
                failure = error
                break
            }
            let dropped = commands.takeDroppedCount()
            if dropped > 0 {
                Diagnostics.error("audiograph: ignored \(dropped) command line\(dropped == 1 ? "" : "s") longer than \(CommandLineReader.maximumLineLength) bytes")
            }
            if let line = commands.next() {
                do {
                    if let command = try LiveCommandParser.parse(line) { try player.apply(command) }
                } catch let problem as LiveCommandParser.Failure {
                    Diagnostics.error("audiograph: \(problem)")
                } catch {
                    Diagnostics.error("audiograph: \(error)")
                }
                continue loop
            }
            _ = commands.arrived.wait(timeout: .now() + .milliseconds(5))
        }
        if failure == nil && !interruptRequested.load(ordering: .relaxed) && player.hasPlayedToEnd {
            // Let the last rendered audio play out (Ctrl-C is not polled here: at most the latency).
            player.drain(timeout: 2 + (validated.description.nodes.compactMap { n -> Double? in
                n.configuration.options(as: OutputProperties.self).map { $0.latency / 1000 }
            }.first ?? 0.02) * 4)
            // A server that stopped answering while the end played out is a failure too.
            if let fault = player.fault { failure = .pulse(fault) }
        }
        let summary = player.stop()
        for problem in summary.recordingFailures { Diagnostics.error("\(graph): \(problem)") }
        if let failure { throw Self.exit(for: failure, graph: graph) }
        if !summary.recordingFailures.isEmpty { throw ExitCode(ExitStatus.runtime) }
        let seconds = Double(summary.renderedFrames) / validated.description.sampleRate
        var line = String(format: "played %.2f s; latency requested %.0f ms", seconds, summary.requestedLatency)
        if let l = summary.latency {
            line += String(format: ", reported %.1f ms (server %.1f ms + ring %.1f ms)", l.total * 1000, l.server * 1000, l.ring * 1000)
        }
        line += "; underruns \(summary.underruns)"
        if validated.description.nodes.contains(where: { $0.type == .input }) {
            line += "; capture underruns \(summary.captureUnderruns), overruns \(summary.captureOverruns)"
            if summary.captureDroppedFrames > 0 { line += ", dropped \(summary.captureDroppedFrames) frames" }
            if summary.captureRateCorrection != 0 { line += ", rate steered \(summary.captureRateCorrection) ppm" }
            if let input = summary.inputLatency, let output = summary.latency {
                let total = input.total + output.total + summary.engineLatency
                line += String(format: "; round trip %.1f ms (input %.1f ms + output %.1f ms + engine %.1f ms)", total * 1000,
                               input.total * 1000, output.total * 1000, summary.engineLatency * 1000)
            }
        }
        print(line)
    }

    /// Reports `error` in one line and returns the exit code the spec gives it.
    static func exit(for error: Error, graph: String) -> ExitCode {
        switch error as? LivePlayerError {
        case .pulse(let e)?:
            Diagnostics.error("audiograph: \(e)")
            return ExitCode(ExitStatus.runtime)
        case .graph(let e)?:
            Diagnostics.error("\(graph): \(e)")
            return ExitCode(ExitStatus.invalidInput)
        case .notLive(let s)?:
            Diagnostics.error("\(graph): \(s)")
            return ExitCode(ExitStatus.invalidInput)
        case nil:
            Diagnostics.error("audiograph: \(error)")
            return ExitCode(ExitStatus.runtime)
        }
    }
}
