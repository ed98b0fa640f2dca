// AAC in an MPEG-4 (.m4a/.mp4) or ADTS (.aac) file through FFmpeg's libavformat and libavcodec: writing and decoding.
import AudioGraphNodes
import CAVCodec
import AudioGraphCore
import Foundation

/// FFmpeg's `AVERROR(EAGAIN)` and `AVERROR_EOF` (function-like macros, which do not import).
private let averrorAgain = -EAGAIN
private let averrorEOF: Int32 = -Int32(bitPattern: UInt32(0x45) | UInt32(0x4F) << 8 | UInt32(0x46) << 16 | UInt32(0x20) << 24)

/// Encodes deinterleaved float frames as AAC-LC (FFmpeg's native encoder) into a file whose
/// container FFmpeg picks from the extension: `.m4a` (iPod/M4A), `.mp4`, `.aac` (ADTS).
/// FFmpeg writes the encoder's priming (1024 frames) into the MP4 edit list, so decoders that
/// honour it (FFmpeg, Apple's) return exactly the frames written.
///
/// Thread safety: not synchronized; ``AudioFile`` calls it under its lock.
final class AACFileWriter {
    let path: String
    let channelCount: Int
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frameSize = 0
    /// Whether the init finished (the header written); a writer that failed half-way frees its
    /// FFmpeg objects and removes the file it created, writing no trailer.
    private var ready = false
    /// Whether the init created the file at ``path``.
    private var createdFile = false
    private var filled = 0
    private var pts: Int64 = 0

    /// The encoder's default bit rate per channel when the settings give none (AVAudioRecorder's
    /// AAC default is in this range).
    static let defaultBitRatePerChannel = 64_000

    init(path: String, sampleRate: Int, channelCount: Int, bitRate: Int) throws(AudioFileError) {
        try Self.loadFFmpeg(path: path)   // before any stored property: no deinit on failure
        self.path = path
        self.channelCount = channelCount
        // Every stored property has its value from here: a throw below runs deinit, which frees
        // what was made so far.
        func fail(_ what: String, _ code: Int32 = 0) -> AudioFileError {
            var text = [CChar](repeating: 0, count: 256)
            if code != 0 { _ = av_strerror(code, &text, 256) }
            let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason = code != 0 ? "\(what): \(message)" : what
            return .cannotOpen(path: path, reason: reason)
        }
        var fmt: UnsafeMutablePointer<AVFormatContext>?
        var status = avformat_alloc_output_context2(&fmt, nil, nil, path)
        guard status >= 0, let fmt else { throw fail("no MPEG-4 or ADTS muxer for this file name", status) }
        format = fmt
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_AAC) else { throw fail("FFmpeg has no AAC encoder") }
        guard let ctx = avcodec_alloc_context3(encoder) else { throw fail("out of memory") }
        codec = ctx
        ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        ctx.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channelCount))
        ctx.pointee.bit_rate = Int64(bitRate)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        if (fmt.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0 {
            ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        status = avcodec_open2(ctx, encoder, nil)
        guard status >= 0 else { throw fail("the AAC encoder refuses \(channelCount) channel(s) at \(sampleRate) Hz", status) }
        guard let st = avformat_new_stream(fmt, nil) else { throw fail("out of memory") }
        stream = st
        st.pointee.time_base = ctx.pointee.time_base
        status = avcodec_parameters_from_context(st.pointee.codecpar, ctx)
        guard status >= 0 else { throw fail("codec parameters", status) }
        status = avio_open(&fmt.pointee.pb, path, AVIO_FLAG_WRITE)
        guard status >= 0 else { throw fail("cannot create the file", status) }
        createdFile = true
        status = avformat_write_header(fmt, nil)
        guard status >= 0 else { throw fail("cannot write the header", status) }
        frameSize = Int(ctx.pointee.frame_size)
        guard let fr = av_frame_alloc(), let pk = av_packet_alloc() else { throw fail("out of memory") }
        frame = fr
        packet = pk
        fr.pointee.nb_samples = Int32(frameSize)
        fr.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        fr.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_copy(&fr.pointee.ch_layout, &ctx.pointee.ch_layout)
        status = av_frame_get_buffer(fr, 0)
        guard status >= 0 else { throw fail("frame buffer", status) }
        ready = true
    }

    /// A file never closed is finished here (as AVAudioFile finishes it when it goes away).
    deinit {
        if ready { try? close() }
        release()
        if !ready && createdFile { unlink(path) }
    }

    private func release() {
        if frame != nil { av_frame_free(&frame) }
        if packet != nil { av_packet_free(&packet) }
        if codec != nil { avcodec_free_context(&codec) }
        if let format {
            if format.pointee.pb != nil { avio_closep(&format.pointee.pb) }
            avformat_free_context(format)
            self.format = nil
        }
    }

    /// Appends `frameCount` frames of `buffer`'s first ``channelCount`` channels.
    func write(_ buffer: ChannelBufferList, frameCount: Int) throws(AudioFileError) {
        guard let frame else { throw .notOpen(path: path, operation: "writing (closed)") }
        var done = 0
        while done < frameCount {
            if filled == 0 { av_frame_make_writable(frame) }
            let n = min(frameSize - filled, frameCount - done)
            for c in 0..<channelCount {
                let plane = frame.pointee.extended_data[c]!.withMemoryRebound(to: Float.self, capacity: frameSize) { $0 }
                if c < buffer.channelCount {
                    (plane + filled).update(from: buffer.channel(c) + done, count: n)
                } else {
                    (plane + filled).update(repeating: 0, count: n)
                }
            }
            filled += n
            done += n
            if filled == frameSize { try encodeFrame() }
        }
    }

    private func encodeFrame() throws(AudioFileError) {
        guard let frame else { return }
        frame.pointee.nb_samples = Int32(filled)
        frame.pointee.pts = pts
        pts += Int64(filled)
        filled = 0
        try encode(frame)
    }

    private func encode(_ frame: UnsafeMutablePointer<AVFrame>?) throws(AudioFileError) {
        guard let codec, let packet, let format, let stream else { return }
        var status = avcodec_send_frame(codec, frame)
        guard status >= 0 else { throw .ioFailed(path: path, reason: "AAC encoding failed (\(status))") }
        while true {
            status = avcodec_receive_packet(codec, packet)
            if status == averrorAgain || status == averrorEOF { return }
            guard status >= 0 else { throw .ioFailed(path: path, reason: "AAC encoding failed (\(status))") }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            status = av_interleaved_write_frame(format, packet)
            guard status >= 0 else { throw .ioFailed(path: path, reason: "write failed (\(status))") }
        }
    }

    /// Encodes what is pending, drains the encoder, writes the trailer and closes the file.
    func close() throws(AudioFileError) {
        guard ready, let format else { return }
        defer { release() }
        if filled > 0 { try encodeFrame() }
        try encode(nil)
        guard av_write_trailer(format) >= 0 else { throw .ioFailed(path: path, reason: "cannot finish the file") }
    }

    /// Loads FFmpeg on first use (CAVCodecLazy: a run without AAC never loads its ~100 shared
    /// objects); a system without it gets a clear error naming the file. Control threads.
    static func loadFFmpeg(path: String) throws(AudioFileError) {
        guard let reason = LazyLibrary.ffmpeg.loadFailure else { return }
        throw .cannotOpen(path: path, reason: "cannot load \(LazyLibrary.ffmpeg): \(reason)")
    }

    /// Whether `path` names a file this writer makes (`.m4a`, `.mp4`, `.aac`).
    static func handles(path: String) -> Bool {
        ["m4a", "mp4", "aac"].contains(URL(fileURLWithPath: path).pathExtension.lowercased())
    }

    /// Decodes the first audio stream of `path` (any codec FFmpeg decodes) into one float array
    /// per channel, honouring the container's priming and padding; returns them with the rate.
    static func decode(path: String) throws(AudioFileError) -> (sampleRate: Double, channels: [[Float]]) {
        try loadFFmpeg(path: path)
        var fmt: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&fmt, path, nil, nil) >= 0, let fmt else {
            throw .cannotOpen(path: path, reason: "not a file FFmpeg reads")
        }
        defer { var f: UnsafeMutablePointer<AVFormatContext>? = fmt; avformat_close_input(&f) }
        guard avformat_find_stream_info(fmt, nil) >= 0 else { throw .cannotOpen(path: path, reason: "no stream information") }
        var decoder: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
        guard index >= 0, let decoder else { throw .cannotOpen(path: path, reason: "no audio stream") }
        guard var ctx = avcodec_alloc_context3(decoder) else { throw .cannotOpen(path: path, reason: "out of memory") }
        var ctxOptional: UnsafeMutablePointer<AVCodecContext>? = ctx
        defer { avcodec_free_context(&ctxOptional) }
        guard avcodec_parameters_to_context(ctx, fmt.pointee.streams[Int(index)]!.pointee.codecpar) >= 0,
              avcodec_open2(ctx, decoder, nil) >= 0 else {
            throw .cannotOpen(path: path, reason: "cannot open the decoder")
        }
        ctx = ctxOptional!
        var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
        var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
        defer { av_frame_free(&frame); av_packet_free(&packet) }
        let channels = Int(ctx.pointee.ch_layout.nb_channels)
        var out = [[Float]](repeating: [], count: channels)
        func drain() throws(AudioFileError) {
            while true {
                let status = avcodec_receive_frame(ctx, frame)
                if status == averrorAgain || status == averrorEOF { return }
                guard status >= 0, let f = frame else { throw .ioFailed(path: path, reason: "decoding failed (\(status))") }
                let n = Int(f.pointee.nb_samples)
                for c in 0..<channels {
                    switch AVSampleFormat(f.pointee.format) {
                    case AV_SAMPLE_FMT_FLTP:
                        let p = UnsafeRawPointer(f.pointee.extended_data[c]!).assumingMemoryBound(to: Float.self)
                        out[c].append(contentsOf: UnsafeBufferPointer(start: p, count: n))
                    case AV_SAMPLE_FMT_FLT:
                        let p = UnsafeRawPointer(f.pointee.extended_data[0]!).assumingMemoryBound(to: Float.self)
                        for i in 0..<n { out[c].append(p[i * channels + c]) }
                    case AV_SAMPLE_FMT_S16P:
                        let p = UnsafeRawPointer(f.pointee.extended_data[c]!).assumingMemoryBound(to: Int16.self)
                        for i in 0..<n { out[c].append(Float(p[i]) / 32768) }
                    case AV_SAMPLE_FMT_S16:
                        let p = UnsafeRawPointer(f.pointee.extended_data[0]!).assumingMemoryBound(to: Int16.self)
                        for i in 0..<n { out[c].append(Float(p[i * channels + c]) / 32768) }
                    default:
                        throw .cannotOpen(path: path, reason: "the decoder's sample format \(f.pointee.format) is not supported")
                    }
                }
            }
        }
        while av_read_frame(fmt, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet!.pointee.stream_index == index else { continue }
            guard avcodec_send_packet(ctx, packet) >= 0 else { throw .ioFailed(path: path, reason: "corrupt audio data") }
            try drain()
        }
        avcodec_send_packet(ctx, nil)
        try drain()
        return (Double(ctx.pointee.sample_rate), out)
    }
}
