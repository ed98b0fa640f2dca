// Recording what passes a node's output bus to a file while the engine runs (cf. EZRecorder, AERecorder).
import AudioGraphNodes
import Foundation

/// Records whatever a node's output bus produces to a sound file while the engine renders —
/// live or in manual rendering — the way EZRecorder and AERecorder record any point of a graph.
///
/// It taps the bus with a tap of its own (the application's taps on the same bus, installed with
/// `installTap(onBus:...)`, stay, and `removeTap(onBus:)` leaves this one): the render thread only copies into the tap's lock-free ring;
/// the file is written on the tap's thread (never the render thread), next to its final path
/// (`.NAME.partial-PID.ext`) and moved into place by ``stop()``, so a file at `url` is always
/// complete. The file type follows the extension (wav, aiff, flac, ogg, ...); the samples are
/// the bus's format, 32-bit float unless `settings` say otherwise (e.g. `AVLinearPCMBitDepthKey`
/// 16). A slow disk loses whole buffers (``droppedBufferCount``), never audio on the render thread.
///
/// Thread safety: `record()` and `stop()` from a control thread; the counters from any thread.
public final class AudioNodeRecorder: @unchecked Sendable {
    /// The node recorded.
    public let node: AudioNode
    /// Its output bus.
    public let bus: AudioNodeBus
    /// Where the finished file goes.
    public let url: URL

    private let settings: [String: Any]?
    private let lock = NSLock()
    private var file: AudioFile?
    private var temporary: URL?
    private var frames: Int64 = 0
    private var failure: Error?
    /// The recorder's own tap on the node (while recording).
    private var tapKey: TapKey?
    /// Buffers the last take's tap lost.
    private var lastDropped = 0

    /// A recorder of `node`'s bus `bus` into `url` (nothing happens until ``record()``).
    public init(node: AudioNode, bus: AudioNodeBus = 0, url: URL, settings: [String: Any]? = nil) {
        self.node = node
        self.bus = bus
        self.url = url
        self.settings = settings
    }

    deinit {
        if isRecording { try? stop() }
    }

    /// Whether it is recording.
    public var isRecording: Bool { lock.withLock { file != nil } }
    /// Frames written so far.
    public var recordedFrameCount: Int64 { lock.withLock { frames } }
    /// Tap buffers lost because the file could not keep up (this take, or the last one); on the
    /// input node, the capture's holes too (`AudioInputNode.captureFaultCount`).
    public var droppedBufferCount: Int {
        guard let key = lock.withLock({ tapKey }), let engine = node.engine else { return lock.withLock { lastDropped } }
        return engine.droppedBufferCount(of: node, key: key) + ((node as? AudioInputNode)?.captureFaultCount ?? 0)
    }

    /// Starts recording: opens the file (aside) and installs the tap. The node must be attached.
    ///
    /// - Throws: when the file cannot be created (unknown extension, bad settings, no permission).
    public func record() throws {
        guard !isRecording else { return }
        let format = node.outputFormat(forBus: bus)
        var fileSettings = format.settings
        if let settings { fileSettings.merge(settings) { $1 } }
        let aside = URL(fileURLWithPath: AudioFileWriter.temporaryPath(for: url.path))
        let f = try AudioFile(forWriting: aside, settings: fileSettings, commonFormat: .pcmFormatFloat32, interleaved: false)
        lock.withLock {
            file = f
            temporary = aside
            frames = 0
            failure = nil
        }
        guard let engine = node.engine else {
            f.close()
            unlink(aside.path)
            lock.withLock { file = nil; temporary = nil }
            engineProgrammerError("record()", node, "the node is not attached to an engine")
        }
        let key = engine.installTap(on: node, bus: bus, bufferSize: 0, format: nil, isInternal: true) { [weak self] buffer, _ in
            self?.write(buffer)
        }
        lock.withLock { tapKey = key }
    }

    /// Stops recording: removes the tap (its last buffer is written), closes the file and moves
    /// it to ``url``.
    ///
    /// - Throws: a write that failed while recording (the partial file is removed), or the move.
    public func stop() throws {
        guard isRecording else { return }
        if let key = lock.withLock({ tapKey }), let engine = node.engine {
            let dropped = engine.droppedBufferCount(of: node, key: key) + ((node as? AudioInputNode)?.captureFaultCount ?? 0)
            engine.removeTap(on: node, key: key)
            lock.withLock { lastDropped = dropped; tapKey = nil }
        }
        let (f, aside, error) = lock.withLock { () -> (AudioFile?, URL?, Error?) in
            defer { file = nil; temporary = nil }
            return (file, temporary, failure)
        }
        f?.close()
        guard let aside else { return }
        if let error {
            unlink(aside.path)
            throw error
        }
        let moved = FileSystemPath.moveIntoPlace(aside.path, url.path)
        guard moved == 0 else {
            let reason = String(cString: strerror(moved))
            unlink(aside.path)
            throw AudioFileError.ioFailed(path: url.path, reason: "cannot move the recording into place: \(reason)")
        }
    }

    /// Tap thread: appends a buffer to the file.
    private func write(_ buffer: AudioPCMBuffer) {
        lock.withLock {
            guard let file, failure == nil else { return }
            do {
                try file.write(from: buffer)
                frames += Int64(buffer.frameLength)
            } catch {
                failure = error
            }
        }
    }
}
