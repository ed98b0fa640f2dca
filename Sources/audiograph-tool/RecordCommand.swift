// `audiograph record [--device SOURCE] [--channel-map LIST] [--duration S] -o FILE`: a PulseAudio source to a sound file.
import AudioGraphRealtime
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a PulseAudio source to a sound file, bit for bit (type from the extension).",
        discussion: """
            Builds the graph input -> recorder and renders it as the source delivers audio (48 kHz). \
            The file is written aside and renamed when the recording stops: after --duration, on \
            Ctrl-C, SIGTERM or SIGHUP, or when the source fails (the file then holds what was \
            captured, and the exit status is 3). On a terminal a level bar is drawn on standard error.
            """)

    @Option(help: "PulseAudio source name (default: the server's default source).")
    var device: String?

    @Option(name: .customLong("channel-map"), help: "Source channels to record, in order (e.g. 1,0 swaps a stereo source).")
    var channelMap: String?

    @Option(help: "Record this many seconds (default: until Ctrl-C).")
    var duration: Double?

    @Option(name: .shortAndLong, help: "The file to write (.wav, .flac, .caf, ...; float32, int24 for FLAC).")
    var output: String

    /// The recording's rate (the source is resampled by the server when it runs at another).
    static let sampleRate = 48000.0
    /// Frames rendered at a time (10 ms).
    static let slice = 480

    func validate() throws {
        if let d = duration, !(d >= 0 && d.isFinite) { throw ValidationError("--duration must be a number of seconds >= 0") }
        _ = try parsedChannelMap()
    }

    /// `--channel-map` as indices (nil when not given).
    func parsedChannelMap() throws -> [Int]? {
        guard let channelMap else { return nil }
        let parts = channelMap.split(separator: ",", omittingEmptySubsequences: false)
        let map = parts.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard map.count == parts.count, !map.isEmpty, map.count <= FormatDescription.maximumChannelCount,
              map.allSatisfy({ $0 >= 0 && $0 < FormatDescription.maximumChannelCount }) else {
            throw ValidationError("--channel-map must list source channels from 0, separated by commas (e.g. 1,0)")
        }
        return map
    }

    func run() throws {
        let map = try parsedChannelMap()
        let channels = max(2, (map?.max() ?? 0) + 1)
        let recordedChannels = map?.count ?? channels
        // Bad file names fail before anything is created.
        do {
            try AudioFileWriter.validate(path: output, sampleType: AudioFileWriter.defaultSampleType(forPath: output),
                                         channels: recordedChannels, sampleRate: Self.sampleRate)
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.invalidInput)
        }
        let context: PulseContext
        do {
            context = try PulseContext(applicationName: "audiograph")
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        defer { context.close() }
        let graph = AudioGraph(sampleRate: Self.sampleRate, maximumFramesPerSlice: Self.slice)
        let input = InputNode(id: "input", properties: InputProperties(device: device, channels: channels, latency: 20,
                                                                        channelMap: map))
        input.pulseContext = context
        let recorder = RecorderNode(id: "recorder", path: output)
        do {
            try graph.addNode(input)
            try graph.addNode(recorder)
            try graph.addNode(GenericOutputNode(id: "out"))
            try graph.connect("input", to: "recorder")
            try graph.connect("recorder", to: "out")
            try graph.initialize()
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.invalidInput)
        }
        installInterruptHandlers()
        do {
            try input.startCapture()
            try graph.start()
        } catch {
            recorder.discard()
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        // A second of captured audio may wait while this thread is busy (nothing is dropped).
        input.captureStream?.setBacklogLimit(frames: Int(Self.sampleRate))
        let endFrame = duration.map { FrameCount.frames(seconds: $0, sampleRate: Self.sampleRate) }
        let bar = isatty(2) != 0 ? LevelBar(channels: recordedChannels, frames: Int(Self.sampleRate / 10)) : nil
        var rendered: Int64 = 0
        var fault: PulseError?
        while !interruptRequested.load(ordering: .relaxed) {
            if let endFrame, rendered >= endFrame { break }
            if let f = input.fault {
                fault = f
                break
            }
            guard let capture = input.captureStream, capture.readableFrames >= Self.slice else {
                usleep(2_000)
                continue
            }
            let n = Int(min(Int64(Self.slice), (endFrame ?? .max) - rendered))
            let result = RenderThreadMark.whileMarked { graph.render(frameCount: n) }
            if let result { bar?.add(result.buffer, frameCount: n) }
            rendered += Int64(n)
            graph.collectRetiredPlans()
        }
        bar?.finish()
        input.stopCapture()
        graph.stop()
        let dropped = recorder.droppedFrameCount
        do {
            try recorder.finish()
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        let capture = input.captureStream
        print(String(format: "recorded %.2f s to %@ (%d channels); capture overruns %d, dropped %d; writer overruns %d frames",
                     Double(rendered) / Self.sampleRate, output, recordedChannels, capture?.overrunCount ?? 0,
                     capture?.droppedFrames ?? 0, dropped))
        if let fault {
            Diagnostics.error("audiograph: \(fault)")
            throw ExitCode(ExitStatus.runtime)
        }
    }
}

/// The live level bar of `record`: RMS and peak of every 100 ms, redrawn in place on standard error.
private final class LevelBar {
    private let storage: [UnsafeMutablePointer<Float>]
    private let capacity: Int
    private var fill = 0
    private var drawn = false

    init(channels: Int, frames: Int) {
        capacity = frames
        storage = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
    }

    deinit { storage.forEach { $0.deallocate() } }

    /// Adds rendered frames; draws a line each time 100 ms are complete.
    func add(_ buffer: ChannelBufferList, frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(capacity - fill, frameCount - done)
            for c in storage.indices {
                if c < buffer.channelCount { (storage[c] + fill).update(from: buffer.channel(c) + done, count: n) }
                else { (storage[c] + fill).update(repeating: 0, count: n) }
            }
            fill += n
            done += n
            if fill == capacity {
                let line = LevelMeter(channels: storage.map { UnsafePointer($0) }, frameCount: capacity).line()
                FileHandle.standardError.write(Data(("\r" + line).utf8))
                drawn = true
                fill = 0
            }
        }
    }

    /// Ends the bar's line.
    func finish() {
        if drawn { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
