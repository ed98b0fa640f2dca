// `audiograph meter [--device SRC | FILE]`: RMS and peak in dBFS ten times a second, with a bar.
import ArgumentParser
import AudioGraphKit
import Foundation

struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Print RMS and peak levels (dBFS) every 100 ms of a PulseAudio source or a sound file.")

    @Argument(help: "A sound file to measure (instead of a PulseAudio source).")
    var file: String?

    @Option(help: "PulseAudio source name (default: the server's default source).")
    var device: String?

    @Option(help: "Stop after this many seconds (live only; default: until Ctrl-C).")
    var duration: Double?

    func validate() throws {
        if file != nil && device != nil { throw ValidationError("give --device or FILE, not both") }
        if let d = duration, !(d >= 0 && d.isFinite) { throw ValidationError("--duration must be a number of seconds >= 0") }
    }

    func run() throws {
        if let file { try meterFile(file) } else { try meterLive() }
    }

    private func meterFile(_ path: String) throws {
        let audio: (info: AudioFileInfo, channels: [[Float]])
        do {
            audio = try AudioFileReader.read(path: path)
        } catch {
            Diagnostics.error("\(path): \(error)")
            throw ExitCode(ExitStatus.invalidInput)
        }
        let block = max(1, Int((audio.info.sampleRate / 10).rounded()))
        var start = 0
        let total = audio.channels.first?.count ?? 0
        while start < total {
            let n = min(block, total - start)
            let meter = withPointers(audio.channels, offset: start) { LevelMeter(channels: $0, frameCount: n) }
            print(String(format: "%7.1f s  ", Double(start) / audio.info.sampleRate) + meter.line())
            start += n
        }
    }

    private func withPointers<R>(_ channels: [[Float]], offset: Int, _ body: ([UnsafePointer<Float>]) -> R) -> R {
        func nest(_ i: Int, _ acc: [UnsafePointer<Float>]) -> R {
            if i == channels.count { return body(acc) }
            return channels[i].withUnsafeBufferPointer { nest(i + 1, acc + [$0.baseAddress! + offset]) }
        }
        return nest(0, [])
    }

    private func meterLive() throws {
        let block = 4800
        let context: PulseContext
        let stream: PulseCaptureStream
        do {
            context = try PulseContext(applicationName: "audiograph")
            stream = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
                sampleRate: 48000, channels: 2, device: device, latencyMilliseconds: 20,
                maximumFramesPerSlice: block, streamName: "audiograph meter"))
            try stream.start()
        } catch {
            Diagnostics.error("audiograph: \(error)")
            throw ExitCode(ExitStatus.runtime)
        }
        installInterruptHandlers()
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer {
            stream.stop()
            context.close()
            buffers.forEach { $0.deallocate() }
        }
        let clock = ContinuousClock()
        let started = clock.now
        var elapsed = 0.0
        while !interruptRequested.load(ordering: .relaxed) {
            if let duration, clock.now - started >= .seconds(duration) { break }
            if let fault = stream.fault {
                Diagnostics.error("audiograph: \(fault)")
                throw ExitCode(ExitStatus.runtime)
            }
            guard stream.readableFrames >= block else {
                usleep(5_000)
                continue
            }
            buffers.withUnsafeBufferPointer { _ = stream.read(frameCount: block, into: $0.baseAddress!) }
            let meter = LevelMeter(channels: buffers.map { UnsafePointer($0) }, frameCount: block)
            print(String(format: "%7.1f s  ", elapsed) + meter.line())
            fflush(nil)
            elapsed += 0.1
        }
    }
}
