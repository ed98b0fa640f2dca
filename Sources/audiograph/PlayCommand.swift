// `audiograph play GRAPH`: real time to PulseAudio, with timed updates and commands from stdin.
import ArgumentParser
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
            (applies the queued changes as one list). Stops after --duration or on Ctrl-C and \
            prints the latency and the underruns.
            """)

    @Argument(help: "The graph file (a genericOutput plays to the default sink, or --device).")
    var graph: String

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Sink name (default: the graph's, else the server's default sink).")
    var device: String?

    func validate() throws {
        if let d = duration, !(d >= 0 && d.isFinite) { throw ValidationError("--duration must be a number of seconds >= 0") }
    }

    func run() throws {
        let validated = try Diagnostics.loadGraph(graph)
        let player: LivePlayer
        do {
            player = try LivePlayer(validated, device: device)
            try player.start()
        } catch {
            throw Self.exit(for: error, graph: graph)
        }
        installInterruptHandlers()
        let commands = Mutex<[String]>([])
        // The control loop sleeps up to 5 ms between polls; a command line wakes it at once.
        let wake = DispatchSemaphore(value: 0)
        let reader = Thread {
            while let line = readLine() {
                commands.withLock { $0.append(line) }
                wake.signal()
            }
        }
        reader.start()

        let clock = ContinuousClock()
        let started = clock.now
        var failure: LivePlayerError?
        while !interruptRequested.load(ordering: .relaxed) {
            if let duration, clock.now - started >= .seconds(duration) { break }
            do {
                try player.poll()
            } catch {
                failure = error
                break
            }
            for line in commands.withLock({ q -> [String] in defer { q.removeAll() }; return q }) {
                if let problem = player.execute(line) { Diagnostics.error("audiograph: \(problem)") }
            }
            _ = wake.wait(timeout: .now() + .milliseconds(5))
        }
        let summary = player.stop()
        if let failure { throw Self.exit(for: failure, graph: graph) }
        let seconds = Double(summary.renderedFrames) / validated.description.sampleRate
        var line = String(format: "played %.2f s; latency requested %.0f ms", seconds, summary.requestedLatency)
        if let l = summary.latency {
            line += String(format: ", reported %.1f ms (server %.1f ms + ring %.1f ms)", l.total * 1000, l.server * 1000, l.ring * 1000)
        }
        line += "; underruns \(summary.underruns)"
        if validated.description.nodes.contains(where: { $0.type == .input }) {
            line += "; capture underruns \(summary.captureUnderruns), overruns \(summary.captureOverruns)"
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
