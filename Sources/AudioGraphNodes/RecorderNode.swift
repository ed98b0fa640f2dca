// The recorder: passes its input through unchanged and writes it to a sound file while the graph renders.
import AudioGraphCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A node with one input and one output that passes its audio through unchanged and writes it
/// to a sound file (graph-file type `recorder`; cf. AVAudioRecorder, or a tap that writes a
/// file). The file's type comes from the extension of ``path``; its sample type is
/// ``sampleType`` (default: ``AudioFileWriter/defaultSampleType(forPath:)``, float32 but for
/// FLAC); its rate and channels are the node's output format.
///
/// **Mechanism.** The kernel copies every render into a ``LiveTap`` the node owns (never
/// installed on the graph: the same lock-free ring, the same drop-whole-buffers overrun rule).
/// With ``LiveTap/Delivery/thread`` (live rendering) the tap's delivery thread, at normal
/// priority, writes each buffer to the file; when the disk is slower than the ring holds
/// (about two seconds), buffers are dropped and counted (``droppedFrameCount``), and the render
/// thread never blocks. With ``LiveTap/Delivery/manual`` (offline rendering) whoever drives the
/// render calls ``drain()`` after every render call and nothing is lost. The file is written
/// to a temporary `.NAME.partial-PID.ext` next to ``path`` (created at initialize) and renamed
/// to ``path`` by ``finish()``; a recording never finished (the node freed, the graph
/// uninitialized and initialized again) removes its temporary.
///
/// Thread safety: configure, ``drain()`` and ``finish()`` on control threads (``finish()`` only
/// once the render thread no longer renders the node: after `AudioGraph.stop()`, or between
/// offline render calls). The kernel's render is real-time safe (a copy into the ring, no
/// allocation, lock, wait or system call). The counters may be read from any thread.
public final class RecorderNode: GraphNode, @unchecked Sendable {
    /// The file finally written (the temporary is renamed to it by ``finish()``).
    public let path: String
    /// The sample type asked for (nil: the file type's default).
    public let sampleType: SampleType?
    /// Who writes the ring to the file: a thread of the node (live) or ``drain()`` (offline).
    public let delivery: LiveTap.Delivery

    // MARK: Control thread only
    private var session: RecorderSession?
    /// The ring of the latest recording (kept after ``finish()`` for the counters).
    private var tap: LiveTap?

    /// - Parameters:
    ///   - path: the file to write (its extension picks the type).
    ///   - sampleType: the file's sample type; nil for the type's default.
    ///   - delivery: `.thread` for live rendering, `.manual` for offline rendering (call ``drain()``).
    public init(id: String, path: String, sampleType: SampleType? = nil, delivery: LiveTap.Delivery = .thread) {
        self.path = path
        self.sampleType = sampleType
        self.delivery = delivery
        super.init(id: id, typeName: "recorder", inputBusCount: 1, outputBusCount: 1, parameters: [])
    }

    /// Rendered every slice: it records even when nothing downstream pulls it.
    public override var isPulledEverySlice: Bool { true }

    /// Passes its input's format through, after checking what writing the file needs: the
    /// folder exists and is writable, and the file type stores the sample type at the rate and
    /// channel count (FLAC holds no float samples). Part of the resolve step that `validate`
    /// and `initialize` share, so a file that renders would not have failed at its first write,
    /// naming its temporary file.
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let formats = try super.resolveOutputFormats(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        var status = stat()
        guard stat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw .nodeSetupFailed(node: id, reason: "\(path): the folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            throw .nodeSetupFailed(node: id, reason: "\(path): the folder \(folder) is not writable")
        }
        if let format = formats.first {
            do {
                try AudioFileWriter.validate(path: path, sampleType: sampleType ?? AudioFileWriter.defaultSampleType(forPath: path),
                                             channels: format.channelCount, sampleRate: format.sampleRate)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        return formats
    }

    /// The format the file is written in (the output format and the sample type), after initialize.
    public var fileFormat: StreamFormat? {
        guard let format = outputFormats.first else { return nil }
        var f = format
        f.sampleType = sampleType ?? AudioFileWriter.defaultSampleType(forPath: path)
        return f
    }

    /// Frames written to the file so far.
    public var recordedFrameCount: Int { tap?.deliveredFrameCount ?? 0 }
    /// Frames lost because the writer fell behind by more than the ring holds (overruns).
    public var droppedFrameCount: Int { tap?.droppedFrameCount ?? 0 }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        session = nil  // a previous, unfinished recording removes its temporary
        tap = nil
        let format = fileFormat!
        let temporary = AudioFileWriter.temporaryPath(for: path)
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: temporary, format: format)
        } catch {
            throw .nodeSetupFailed(node: id, reason: error.description)
        }
        let file = RecorderFile(writer: writer, temporary: temporary)
        // Live: about two seconds of audio between the render thread and the disk.
        let capacity = delivery == .thread
            ? max(LiveTap.defaultCapacity(bufferSize: 0, maximumFramesPerSlice: maximumFramesPerSlice, rateRatio: 1),
                  Int(format.sampleRate * 2))
            : nil
        let tap = LiveTap(bus: 0, channelCount: format.channelCount, sampleRate: format.sampleRate, bufferSize: 0,
                          maximumFramesPerSlice: maximumFramesPerSlice, minimumCapacity: capacity,
                          delivery: delivery) { buffer, frames, _, _ in file.write(buffer, frameCount: frames) }
        session = RecorderSession(tap: tap, file: file)
        self.tap = tap
        try tap.startDelivery()
        return RecorderKernel(node: self, tap: tap, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    /// Writes what the kernel has recorded since the last call (``LiveTap/Delivery/manual``:
    /// call after every render call). Control thread, never the render thread.
    public func drain() {
        session?.tap.deliverPending()
    }

    /// Writes what is left, closes the file and renames it to ``path``. Call once the render
    /// thread no longer renders the node (after `AudioGraph.stop()`, or after the last offline
    /// render call). Without an initialized recording, or a second time, nothing happens.
    /// Throws the first write failure of the recording (the temporary is then removed).
    public func finish() throws(AudioFileError) {
        guard let s = session else { return }
        session = nil
        s.tap.markDetached()
        if delivery == .thread && s.tap.waitUntilFinished(timeout: 5) {
            // The delivery thread wrote the last buffer.
        } else {
            s.tap.deliverPending()
        }
        try s.file.finish(renamingTo: path)
    }

    /// Abandons the recording: nothing more is written, the temporary is removed and ``path`` is
    /// left as it was (a failed or cancelled offline render). Control thread.
    public func discard() {
        guard let s = session else { return }
        session = nil
        s.file.discard()
    }
}

/// What one initialized recording holds: the ring and the file.
private struct RecorderSession {
    let tap: LiveTap
    let file: RecorderFile
}

/// The file of one recording: written by the tap's consumer, finished (or removed) by the control
/// thread. Thread safety: the consumer calls `write` (serialised by the tap), the control thread
/// `finish` after the last write; the mutex orders the two.
private final class RecorderFile: @unchecked Sendable {
    let writer: AudioFileWriter
    let temporary: String
    private let state = Mutex<(error: AudioFileError?, finished: Bool)>((nil, false))

    init(writer: AudioFileWriter, temporary: String) {
        self.writer = writer
        self.temporary = temporary
    }

    /// Appends a delivered buffer; remembers the first failure and writes nothing after it.
    func write(_ buffer: ChannelBufferList, frameCount: Int) {
        state.withLock { s in
            guard s.error == nil, !s.finished else { return }
            do throws(AudioFileError) {
                try writer.write(buffer, frameCount: frameCount)
            } catch {
                s.error = error
            }
        }
    }

    /// Closes the file and renames it to `path`, or removes it and throws the first failure.
    func finish(renamingTo path: String) throws(AudioFileError) {
        let failure: AudioFileError? = state.withLock { s in
            s.finished = true
            if s.error == nil {
                do throws(AudioFileError) { try writer.close() } catch { s.error = error }
            }
            if s.error == nil {
                let moved = FileSystemPath.moveIntoPlace(temporary, path)
                if moved != 0 { s.error = .ioFailed(path: path, reason: "cannot rename the recording: " + String(cString: strerror(moved))) }
            }
            return s.error
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// Stops writing and removes the temporary.
    func discard() {
        let removes = state.withLock { s in
            defer { s.finished = true }
            return !s.finished
        }
        if removes { unlink(temporary) }
    }

    deinit {
        if !state.withLock({ $0.finished }) { unlink(temporary) }
    }
}

/// Render side of ``RecorderNode``: the input to the output, and a copy into the ring.
final class RecorderKernel: NodeKernel, @unchecked Sendable {
    // MARK: Render thread only (the tap's producer side)
    private let tap: LiveTap

    init(node: RecorderNode, tap: LiveTap, maximumFramesPerSlice: Int) {
        self.tap = tap
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        outputIsSilent[0] = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        tap.record(out, frameCount: n, sampleTime: context.sampleTime)
    }
}

extension RecorderNode {
    /// The `recorder` node type: an effect that passes its input through and writes it to
    /// `properties.file` (``RecorderProperties``; the extension picks the file type, as for taps).
    /// No other tap or recorder may write the same file; offline, the renderer drains it after
    /// every render call (nothing lost), live, its writer thread does.
    package static let descriptor = NodeTypeDescriptor(
        name: "recorder", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["file", "sampleType"],
        decode: { reader in
            var result = RecorderProperties(file: "", path: "")
            if let file = reader.requiredFile("file", writing: true) {
                result.file = file.name
                result.path = file.path
            }
            if reader.has("sampleType") { result.sampleType = reader.choice("sampleType", as: SampleType.self) }
            return result
        },
        writtenFiles: { options in
            guard let p = options as? RecorderProperties, !p.path.isEmpty else { return [] }
            return [NodeWrittenFile(key: "file", file: p.file, path: p.path)]
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            let p = context.options(as: RecorderProperties.self) ?? RecorderProperties(file: "", path: "")
            return RecorderNode(id: context.id, path: p.path, sampleType: p.sampleType,
                                delivery: context.rendersOffline ? .manual : .thread)
        })
}
