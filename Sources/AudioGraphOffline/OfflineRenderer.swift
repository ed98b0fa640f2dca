// Offline rendering: pulls a graph as fast as possible into a sound file, with updates and taps.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AudioGraphRealtime
import AudioGraphNodes

/// Errors of an offline render (besides the graph's own).
public enum RenderError: Error, Sendable, CustomStringConvertible {
    /// The graph has no generic output to pull (and no `output` to replace).
    case noGenericOutput
    /// Writing a file failed (exit status 3 in the CLI).
    case file(AudioFileError)
    /// The graph could not be built or updated (exit status 1 in the CLI).
    case graph(AudioGraphError)
    /// A tap would write the output file, or another tap's file (compared as resolved paths);
    /// refused before anything is written (exit status 1 in the CLI).
    case pathConflict(String)
    /// The files would not fit on their disk (exit status 3 in the CLI).
    case insufficientSpace(path: String, needed: Int64, available: Int64)
    /// `isCancelled` returned true (SIGINT, SIGTERM, SIGHUP in the CLI: exit status 3); every
    /// temporary file was removed.
    case interrupted

    public var description: String {
        switch self {
        case .noGenericOutput: return "the graph has no genericOutput or output node to render through"
        case .file(let e): return e.description
        case .graph(let e): return e.description
        case .pathConflict(let s): return s
        case let .insufficientSpace(path, needed, available):
            return "\(path): the render needs \(Self.megabytes(needed)) MB but the disk has \(Self.megabytes(available)) MB free"
        case .interrupted: return "interrupted; nothing was written"
        }
    }

    static func megabytes(_ bytes: Int64) -> String { String(Int64((Double(bytes) / 1e6).rounded(.up))) }
}

/// Renders a described graph offline through its generic output into a sound file
/// (cf. AVAudioEngine's manual rendering mode).
///
/// Updates apply sample-exactly: the renderer stops the slice at an update's frame, queues its
/// actions as one pending-change list, calls `update()`, and continues — so the output is
/// bit-identical for every slice size. Taps record what a node's output bus produced for every
/// rendered frame (silence when the node did not render, e.g. while disconnected).
/// Streaming players (long files) are prepared before every slice
/// (``PlayerNode/prepareForOfflineRender(graphSampleTime:graphSampleRate:)``), so they play
/// exactly what an in-memory player would. The output file is written next to its final path
/// and renamed when complete.
///
/// Thread safety: one control thread drives the render; it is the graph's render thread too.
public final class OfflineRenderer {
    /// What to render.
    public let built: BuiltGraph
    /// Frames of the output timeline to render.
    public let frameCount: Int64
    /// The rate of the file (the generic output's client format).
    public let outputRate: Double
    /// The file format written.
    public let fileFormat: StreamFormat

    private let sliceSize: Int
    /// The largest absolute sample written to the output file.
    public private(set) var peak: Float = 0
    private var sumOfSquares: Double = 0
    private var samplesMeasured: Int64 = 0
    /// Samples written to the output file that were NaN or infinite (all channels); they are
    /// left out of ``peak``, ``rms`` and the sample count of the RMS. A NaN that reaches the
    /// output is a fault somewhere in the graph (a node that did not contain it): the command
    /// line reports the count, and `--strict` makes it an error.
    public private(set) var nonFiniteSampleCount: Int64 = 0
    /// One line per node that contained bad audio while rendering (``RenderFaultReporting``):
    /// `node "id": …`, in graph order. Read after ``render(to:progress:isCancelled:)``.
    public var nodeFaultSummaries: [String] {
        built.graph.nodes.compactMap { node in
            node.renderFaultReporter?.renderFaultSummary.map { "node \"\(node.id)\": \($0)" }
        }
    }
    /// RMS of everything written to the output file (all channels).
    public var rms: Double { samplesMeasured > 0 ? (sumOfSquares / Double(samplesMeasured)).squareRoot() : 0 }
    /// Whether ``render(to:progress:isCancelled:)`` measures ``loudness``.
    public let measuresLoudness: Bool
    /// Whether ``render(to:progress:isCancelled:)`` measures ``peak`` and ``rms`` (else they stay
    /// 0; ``nonFiniteSampleCount`` is counted either way).
    public let measuresLevels: Bool
    /// EBU R128 loudness of everything written to the output file (the float samples, before
    /// the file's sample type); nil unless `measuresLoudness` and a render ran, or at a rate
    /// libebur128 cannot measure (not an integer number of Hz).
    public private(set) var loudness: LoudnessMeter?

    /// - Parameters:
    ///   - frames: the length in frames of the output file; nil: `duration` seconds, else the
    ///     description's default length.
    ///   - sampleType: the file's sample type (nil: the client format's, or the file type's default).
    ///   - sliceSize: frames per render call (the CLI's `--slice`); nil:
    ///     ``defaultSliceSize(for:frames:)`` (4096 frames, 1024 for a render shorter than 1.4 s
    ///     at 48 kHz, unless the file says more or the graph is very large). The output is
    ///     bit-identical for every slice size.
    ///   - measuresLoudness: measure the output's EBU R128 loudness (``loudness``); off by
    ///     default, as it costs render time (4× oversampling for the true peak).
    ///   - measuresLevels: measure ``peak`` and ``rms`` (on by default; a tenth of a short
    ///     effect render's CPU time, which `render --quiet` does not print).
    ///   - renderThreads: threads that render each slice (``AudioGraph/renderThreadCount``):
    ///     1 (the default) renders serially on this thread alone; more render independent
    ///     branches on worker threads (started only when the graph has such branches) and let a
    ///     convolver or `timePitch` run part of its work on a helper thread, bit-identical to the
    ///     serial render. nil: the processors the process may use (`AvailableProcessors`, what
    ///     the command line gives without `--threads`) when the graph has work for them
    ///     (``AudioGraph/hasWorkForSeveralRenderThreads``, or any update in its timeline, which
    ///     may add some), else 1 without asking the system.
    public init(_ validated: ValidatedGraph, outputPath: String, duration: Double? = nil, frames: Int64? = nil,
                sampleType: SampleType? = nil, sliceSize: Int? = nil, measuresLoudness: Bool = false, measuresLevels: Bool = true,
                renderThreads: Int? = 1) throws(RenderError) {
        self.measuresLoudness = measuresLoudness
        self.measuresLevels = measuresLevels
        do {
            // The render's length at the graph's rate, for the default slice size (a short
            // render takes shorter slices; the output is the same).
            let expectedFrames = frames ?? FrameCount.frames(seconds: duration ?? validated.defaultRenderDuration,
                                                             sampleRate: validated.description.sampleRate)
            built = try GraphLoader.build(validated, maximumFramesPerSlice: sliceSize ?? Self.defaultSliceSize(for: validated, frames: expectedFrames),
                                           outputs: .offline)
            // Every kernel is told the thread count asked for (the convolver and `timePitch` run
            // part of their work on a helper thread above 1); the worker threads start only when
            // a plan has branches to split (their start and join cost a short render a tenth of
            // its CPU time), so a chain starts none. The output is the same either way.
            // Asking for the count reads /proc and /sys (a few percent of a short render's
            // start-up): not for a graph that renders the same on one thread.
            let threads = renderThreads
                ?? (built.graph.hasWorkForSeveralRenderThreads || !validated.description.updates.isEmpty ? AvailableProcessors.count : 1)
            try built.graph.setRenderThreadCount(threads, startingWorkersWhenParallel: true)
        } catch {
            throw .graph(error)
        }
        guard let out = built.outputNode as? GenericOutputNode else { throw .noGenericOutput }
        // Nothing connected to the output: silence, at the graph's rate in stereo unless declared.
        let client = out.clientFormat ?? out.clientFormatRequest.filled(from: .canonical(sampleRate: built.graph.sampleRate, channelCount: 2))
        self.sliceSize = built.graph.maximumFramesPerSlice
        graphTimelineRate = out.inputFormat?.sampleRate ?? built.graph.sampleRate
        outputRate = client.sampleRate
        let seconds = duration ?? validated.defaultRenderDuration
        frameCount = frames ?? FrameCount.frames(seconds: seconds, sampleRate: outputRate)
        var format = client
        // The command line's type, else the client format's declared one, else a type the graph
        // delivers (a converter's integer type), else the file type's default.
        let delivered = out.inputFormat?.sampleType
        format.sampleType = sampleType ?? out.clientFormatRequest.sampleType
            ?? ((delivered != nil && delivered != .float32) ? delivered! : AudioFileWriter.defaultSampleType(forPath: outputPath))
        format.isInterleaved = false
        fileFormat = format
        try checkFiles(outputPath: outputPath)
    }

    /// What the files need, checked before anything is written: no tap writes the output file
    /// (or a file another tap writes — the loader checks that too), the file types can hold the
    /// length (a `.wav` past 4 GiB becomes RF64; AIFF and AU are refused), and the uncompressed
    /// files fit in the free space of their disks.
    private func checkFiles(outputPath: String) throws(RenderError) {
        let taps = built.validated.description.taps
        let output = FileSystemPath.resolved(outputPath)
        for (index, tap) in taps.enumerated() where FileSystemPath.resolved(tap.path) == output {
            throw .pathConflict("\(built.validated.description.fileName): taps[\(index)].file: \"\(tap.file)\" is the render's output file \(outputPath)")
        }
        for node in built.validated.description.nodes {
            guard case .registered(let r) = node.configuration, let descriptor = r.type.descriptor else { continue }
            for written in descriptor.writtenFiles(r.options) where FileSystemPath.resolved(written.path) == output {
                throw .pathConflict("\(built.validated.description.fileName): node \"\(node.id)\" properties.\(written.key): \"\(written.file)\" is the render's output file \(outputPath)")
            }
        }
        var needed: [String: (path: String, bytes: Int64)] = [:]
        func account(_ path: String, _ format: StreamFormat, frames: Int64) throws(RenderError) {
            let bytes = AudioFileWriter.dataBytes(frames: frames, format: format)
            do {
                _ = try AudioFileWriter.majorFormat(forPath: path, dataBytes: bytes)
            } catch {
                throw .file(error)
            }
            // Compressed types (FLAC, Ogg) take less than this; only the uncompressed are counted.
            guard !AudioFileWriter.isCompressed(path: path) else { return }
            let folder = Self.folder(of: FileSystemPath.resolved(path))
            let sum = needed[folder]?.bytes ?? 0
            needed[folder] = (path, sum > Int64.max - bytes ? Int64.max : sum + bytes)
        }
        try account(outputPath, fileFormat, frames: frameCount)
        for tap in taps {
            let (format, frames) = tapFile(tap)
            try account(tap.path, format, frames: frames)
        }
        for (folder, need) in needed {
            var info = statvfs()
            guard statvfs(folder, &info) == 0 else { continue }
            let available = Int64(clamping: UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue)
            if need.bytes > available { throw .insufficientSpace(path: need.path, needed: need.bytes, available: available) }
        }
    }

    /// The format a tap's file is written in (its bus's format, or mono at the output timeline's
    /// rate for a node that does not exist yet) and the frames it will hold at most.
    private func tapFile(_ tap: TapDescription) -> (format: StreamFormat, frames: Int64) {
        var format = built.graph.node(tap.node)?.outputFormats[safe: tap.bus] ?? .canonical(sampleRate: graphTimelineRate, channelCount: 1)
        format.sampleType = AudioFileWriter.defaultSampleType(forPath: tap.path)
        return (format, FrameCount.int64(Double(frameCount) * format.sampleRate / outputRate, rounding: .up))
    }

    /// The folder part of an absolute path.
    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The rate of the graph's output timeline (what reaches the generic output): update frames
    /// and taps count on it. The file's rate is ``outputRate`` (the client format's).
    public let graphTimelineRate: Double

    /// Renders everything into `outputPath` (written aside, then renamed). `progress` is called
    /// with the fraction done, at most about 100 times. `isCancelled` is asked before every
    /// slice; when it returns true the render stops, removes its temporary files and throws
    /// ``RenderError/interrupted``.
    /// A file error names the file the user gave (the output or a tap), not the temporary name
    /// it is written under.
    public func render(to outputPath: String, progress: ((Double) -> Void)? = nil,
                       isCancelled: (() -> Bool)? = nil) throws(RenderError) {
        do {
            try renderFiles(to: outputPath, progress: progress, isCancelled: isCancelled)
        } catch {
            guard case .file(let e) = error else { throw error }
            for path in [outputPath] + built.validated.description.taps.map(\.path)
            where e.path == AudioFileWriter.unregisteredTemporaryPath(for: path) {
                throw .file(e.naming(path))
            }
            throw error
        }
    }

    private func renderFiles(to outputPath: String, progress: ((Double) -> Void)?,
                             isCancelled: (() -> Bool)?) throws(RenderError) {
        let graph = built.graph
        let d = built.validated.description
        let temporary = Self.temporaryPath(for: outputPath)
        var tapWriters: [(tap: TapDescription, writer: AudioFileWriter, temporary: String, rate: Double)] = []
        var finished = false
        // Recorders, drained after every render call and finished with the render.
        var recorderNodes = graph.nodes.compactMap { $0 as? RecorderNode }
        defer {
            if !finished {
                unlink(temporary)
                for t in tapWriters { unlink(t.temporary) }
                for r in recorderNodes { r.discard() }
            }
        }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: temporary, format: fileFormat, expectedFrames: frameCount)
            for tap in d.taps {
                let (tf, frames) = tapFile(tap)
                let path = Self.temporaryPath(for: tap.path)
                tapWriters.append((tap, try AudioFileWriter(path: path, format: tf, expectedFrames: frames), path, tf.sampleRate))
            }
        } catch {
            throw .file(error)
        }

        // Updates in the description's one schedule (GraphDescription.updateSchedule), each at its
        // frame on the output's timeline.
        let updates = d.updateSchedule(timelineRate: graphTimelineRate).map { (frame: $0.frame, index: $0.index, update: d.updates[$0.index]) }
        var nextUpdate = 0
        let silence = ChannelBufferStorage(channelCount: 64, capacity: sliceSize, faultsInPages: false)
        let mapped = ChannelBufferStorage(channelCount: fileFormat.channelCount, capacity: sliceSize)
        var graphFrames: Int64 = 0
        var failure: RenderError?
        // One recorder per tap, attached to the node's kernel once it exists (nodes added by an
        // update get theirs after that update).
        var recorders = [KernelTap?](repeating: nil, count: tapWriters.count)
        func attachRecorders() {
            for (i, t) in tapWriters.enumerated() where recorders[i] == nil {
                guard let node = graph.node(t.tap.node), let kernel = node.kernel, t.tap.bus < kernel.outputs.count else { continue }
                let tap = KernelTap(bus: t.tap.bus, channelCount: kernel.outputs[t.tap.bus].channelCount,
                                    capacity: 16 * sliceSize + 4 * Resampler.blockFrames)
                kernel.attachTap(tap)
                recorders[i] = tap
            }
        }
        attachRecorders()
        // Streaming players fill their rings before each slice (the render never waits for the disk).
        var players = graph.nodes.compactMap { $0 as? PlayerNode }

        /// Renders `count` graph frames (splitting slices at update frames, applying updates,
        /// writing taps) into `destination`, remixed to the file's channel count.
        func pullGraph(into destination: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, count: Int) -> Int {
            var done = 0
            while done < count && failure == nil {
                while nextUpdate < updates.count && updates[nextUpdate].frame <= graphFrames {
                    do {
                        let list = try GraphAssembly.changes(for: updates[nextUpdate].update, sampleRate: d.sampleRate, outputs: .offline)
                        graph.enqueue(contentsOf: list)
                        try graph.update(waitUntilApplied: false)
                        attachRecorders()
                        players = graph.nodes.compactMap { $0 as? PlayerNode }
                        recorderNodes = graph.nodes.compactMap { $0 as? RecorderNode }
                    } catch {
                        failure = .graph(error)
                        return done
                    }
                    nextUpdate += 1
                }
                var n = min(sliceSize, count - done)
                if nextUpdate < updates.count { n = Int(min(Int64(n), updates[nextUpdate].frame - graphFrames)) }
                for p in players { p.prepareForOfflineRender(graphSampleTime: graph.renderSampleTime, graphSampleRate: graph.sampleRate) }
                // Only the render call runs as a render thread (updates and file writes do not).
                let result = RenderThreadMark.whileMarked { graph.render(frameCount: n) }
                for r in recorderNodes { r.drain() }
                let source = result?.buffer ?? silence.list
                var written = source
                if source.channelCount != fileFormat.channelCount {
                    Self.remix(source, into: mapped.list, frameCount: n)
                    written = mapped.list
                }
                for c in 0..<destination.count { (destination[c] + done).update(from: written.channel(c), count: n) }
                do {
                    for (i, t) in tapWriters.enumerated() {
                        guard let recorder = recorders[i] else {
                            try t.writer.write(silence.list, frameCount: n)
                            continue
                        }
                        var recorded = 0
                        try recorder.drain { (b, frames) throws(AudioFileError) in
                            recorded = frames
                            try t.writer.write(b, frameCount: frames)
                        }
                        // A node on the output timeline that did not render this slice (it was
                        // not pulled) produced silence; a node at another rate records as it ran.
                        if recorded == 0 && t.rate == graphTimelineRate { try t.writer.write(silence.list, frameCount: n) }
                    }
                } catch {
                    failure = .file(error)
                    return done
                }
                graph.collectRetiredPlans()
                graphFrames += Int64(n)
                done += n
            }
            return done
        }

        do {
            try graph.start()
        } catch {
            throw .graph(error)
        }
        defer { graph.stop() }
        let chunk = ChannelBufferStorage(channelCount: fileFormat.channelCount, capacity: sliceSize)
        var chunkPointers = (0..<fileFormat.channelCount).map { chunk.list.channel($0) }
        var resampler: Resampler?
        if outputRate != graphTimelineRate {
            do {
                resampler = try Resampler(channelCount: fileFormat.channelCount, inputSampleRate: graphTimelineRate,
                                          outputSampleRate: outputRate, quality: .best) { buffers, count in
                    pullGraph(into: buffers, count: count)
                }
            } catch {
                throw .graph(.formatNotSupported(node: built.outputNode.id, reason: "\(error)"))
            }
        }
        loudness = measuresLoudness ? try? LoudnessMeter(channelCount: fileFormat.channelCount, sampleRate: outputRate) : nil
        let loudnessInputs = chunkPointers.map { UnsafePointer($0) }
        var done: Int64 = 0
        var lastReported = -1
        while done < frameCount {
            if let isCancelled, isCancelled() { throw .interrupted }
            let n = Int(min(Int64(sliceSize), frameCount - done))
            let got = chunkPointers.withUnsafeMutableBufferPointer { p in
                let pointers = UnsafeBufferPointer(p)
                if let resampler { return resampler.read(into: pointers, frameCount: n) }
                return pullGraph(into: pointers, count: n)
            }
            if let failure { throw failure }
            if got < n { chunk.list.clear(frameCount: n) }
            do {
                try writer.write(chunk.list, frameCount: n)
            } catch {
                throw .file(error)
            }
            measure(chunk.list, frameCount: n)
            loudness?.add(loudnessInputs, frameCount: n)
            done += Int64(n)
            if let progress {
                let percent = Int(Double(done) * 100 / Double(max(1, frameCount)))
                if percent != lastReported {
                    lastReported = percent
                    progress(Double(done) / Double(max(1, frameCount)))
                }
            }
        }
        do {
            try writer.close()
            for t in tapWriters { try t.writer.close() }
        } catch {
            throw .file(error)
        }
        do throws(AudioFileError) {
            for r in recorderNodes { try r.finish() }
        } catch {
            throw .file(error)
        }
        let moved = FileSystemPath.moveIntoPlace(temporary, outputPath)
        guard moved == 0 else {
            throw .file(.ioFailed(path: outputPath, reason: "cannot rename the finished file into place: " + String(cString: strerror(moved))))
        }
        for t in tapWriters where FileSystemPath.moveIntoPlace(t.temporary, t.tap.path) != 0 {
            throw .file(.ioFailed(path: t.tap.path, reason: "cannot rename the finished tap file into place"))
        }
        finished = true
    }

    private func measure(_ b: ChannelBufferList, frameCount n: Int) {
        if !measuresLevels {
            for c in 0..<min(b.channelCount, fileFormat.channelCount) {
                nonFiniteSampleCount += Int64(NonFiniteSamples.count(b.channel(c), count: n))
            }
            return
        }
        for c in 0..<min(b.channelCount, fileFormat.channelCount) {
            let x = b.channel(c)
            // Locals in the loop: a stored property of a class read and written per sample costs
            // a dynamic exclusivity check each time (a fifth of a B4 render's time).
            // Four running sums and peaks, so the additions do not wait on each other (one
            // sum is a chain of dependent Double additions, a tenth of a B3 render's time).
            // The four lanes of a SIMD4 are those four sums and peaks, with the scalar code's
            // arithmetic lane by lane (`max(t, v)` is `v >= t ? v : t`; `abs` clears the sign bit),
            // so the figures are bit-identical; the vector form skips the per-index overflow checks.
            var sums = SIMD4<Double>(repeating: 0)
            var peaks = SIMD4<Float>(repeating: peak)
            let raw = UnsafeRawPointer(x)
            var i = 0
            while i &+ 4 <= n {
                let v = raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Float>.self)
                let a = unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7fff_ffff, to: SIMD4<Float>.self)
                peaks.replace(with: a, where: a .>= peaks)
                let d = SIMD4<Double>(v)
                sums += d * d
                i &+= 4
            }
            var t0 = peaks[0], s0 = sums[0]
            let t1 = peaks[1], t2 = peaks[2], t3 = peaks[3], s1 = sums[1], s2 = sums[2], s3 = sums[3]
            while i < n {
                t0 = max(t0, abs(x[i]))
                s0 += Double(x[i]) * Double(x[i])
                i += 1
            }
            let channelPeak = max(max(t0, t1), max(t2, t3)), channelSum = (s0 + s1) + (s2 + s3)
            if channelPeak.isFinite && channelSum.isFinite {
                peak = channelPeak
                sumOfSquares += channelSum
                samplesMeasured += Int64(n)
                continue
            }
            // NaN or infinity in the slice (rare): counted, and left out of the peak and RMS so
            // that they still describe the audio around them.
            var finitePeak = peak, finiteSum = 0.0, bad: Int64 = 0
            for i in 0..<n {
                let v = x[i]
                if v.isFinite {
                    finitePeak = max(finitePeak, abs(v))
                    finiteSum += Double(v) * Double(v)
                } else {
                    bad += 1
                }
            }
            peak = finitePeak
            sumOfSquares += finiteSum
            samplesMeasured += Int64(n) - bad
            nonFiniteSampleCount += bad
        }
    }

    /// Up/down-mixes to the file's channel count ("speakers" rules for 1/2/4/6, discrete otherwise).
    static func remix(_ source: ChannelBufferList, into target: ChannelBufferList, frameCount: Int) {
        var ins = (0..<source.channelCount).map { UnsafePointer(source.channel($0)) }
        var outs = (0..<target.channelCount).map { target.channel($0) }
        ins.withUnsafeMutableBufferPointer { i in
            outs.withUnsafeMutableBufferPointer { o in
                ChannelMixing.mix(input: UnsafeBufferPointer(i), output: UnsafeBufferPointer(o), frameCount: frameCount)
            }
        }
    }

    /// `dir/.name.partial-PID.ext` (see ``AudioFileWriter/temporaryPath(for:)``).
    package static func temporaryPath(for path: String) -> String { AudioFileWriter.temporaryPath(for: path) }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
