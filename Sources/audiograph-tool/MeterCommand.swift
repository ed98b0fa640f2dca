// `audiograph meter [--device SRC | FILE]`: RMS and peak in dBFS ten times a second, with a bar, and EBU R128 loudness.
import ArgumentParser
import AudioGraphCommandLine
import AudioGraphKit
import Foundation

struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Print RMS and peak levels (dBFS) every 100 ms of a PulseAudio source or a sound file, and its EBU R128 loudness.")

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

    /// Reads the file 100 ms at a time (a long recording is never decoded whole into memory);
    /// the last line is its EBU R128 loudness (integrated, range, true peak).
    private func meterFile(_ path: String) throws {
        let reader: SeekableAudioFileReader
        let loudness: LoudnessMeter
        do {
            reader = try SeekableAudioFileReader(path: path)
            loudness = try LoudnessMeter(channelCount: reader.info.channels, sampleRate: reader.info.sampleRate)
        } catch {
            Diagnostics.error("\(path): \(error)")
            if case .libraryMissing? = error as? LoudnessMeterError { throw ExitCode(ExitStatus.runtime) }
            throw ExitCode(ExitStatus.invalidInput)
        }
        let info = reader.info
        let channels = info.channels
        let block = max(1, Int((info.sampleRate / 10).rounded()))
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
        let planar = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer {
            interleaved.deallocate()
            planar.forEach { $0.deallocate() }
        }
        var start: Int64 = 0
        while start < info.frames {
            let n = reader.read(into: interleaved, atFrame: start, frameCount: Int(min(Int64(block), info.frames - start)))
            guard n > 0 else {
                Diagnostics.error("\(path): cannot read at frame \(start) of \(info.frames)")
                throw ExitCode(ExitStatus.invalidInput)
            }
            for c in 0..<channels {
                for f in 0..<n { planar[c][f] = interleaved[f * channels + c] }
            }
            let channelPointers = planar.map { UnsafePointer($0) }
            let meter = LevelMeter(channels: channelPointers, frameCount: n)
            loudness.add(channelPointers, frameCount: n)
            print(String(format: "%7.1f s  ", Double(start) / info.sampleRate) + meter.line())
            start += Int64(n)
        }
        print(loudness.summary)
    }

    private func meterLive() throws {
        let block = 4800
        let loudness: LoudnessMeter
        do {
            loudness = try LoudnessMeter(channelCount: 2, sampleRate: 48000, mode: .live)   // 48 kHz stereo fits libebur128
        } catch {
            Diagnostics.error("audiograph: \(error)")   // only a missing libebur128
            throw ExitCode(ExitStatus.runtime)
        }
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
            let channelPointers = buffers.map { UnsafePointer($0) }
            let meter = LevelMeter(channels: channelPointers, frameCount: block)
            loudness.add(channelPointers, frameCount: block)
            print(String(format: "%7.1f s  ", elapsed) + meter.line() + "  " + loudness.liveLine)
            fflush(nil)
            elapsed += 0.1
        }
    }
}
