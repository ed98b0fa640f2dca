// AudioPlot of samples in memory: written to a temporary float32 WAV, then drawn like a file.
import AudioGraphCore
import AudioGraphNodes
#if canImport(Glibc)
import Glibc
#endif

extension AudioPlot {
    /// Draws a `kind` picture of `channels` (one array of samples per channel, all the same
    /// length, at `sampleRate`) into `output` (`.png` or `.svg`); as
    /// ``draw(file:to:kind:width:height:channel:title:)`` otherwise (`title` defaults to
    /// "buffer"). The samples go through a temporary float32 WAV beside `output` (removed
    /// afterwards), so the picture is exactly the one of that file.
    /// - Throws: ``PlotError``; ``PlotError/file(_:)`` with `invalidSettings` when there are no
    ///   channels or their lengths differ.
    package static func draw(channels: [[Float]], sampleRate: Double, to output: String, kind: PlotKind = .waveform,
                            width: Int = 1200, height: Int = 400, channel: Int? = nil,
                            title: String? = nil) throws(PlotError) {
        let temporary = output + ".samples-\(getpid()).wav"
        guard let frames = channels.first?.count, channels.allSatisfy({ $0.count == frames }) else {
            throw .file(.invalidSettings(path: temporary, reason: "a picture needs at least one channel, all of the same length"))
        }
        defer { unlink(temporary) }
        do {
            let storage = ChannelBufferStorage(channelCount: channels.count, capacity: max(1, frames))
            for (c, samples) in channels.enumerated() {
                for i in 0..<frames { storage.list.channel(c)[i] = samples[i] }
            }
            let writer = try AudioFileWriter(path: temporary, format: StreamFormat(sampleRate: sampleRate, channelCount: channels.count))
            if frames > 0 { try writer.write(storage.list, frameCount: frames) }
            try writer.close()
        } catch {
            throw .file(error)
        }
        try draw(file: temporary, to: output, kind: kind, width: width, height: height, channel: channel,
                 title: title ?? "buffer")
    }
}
