// The engine's voice processing (cf. Apple's voice-processing I/O unit): webrtc-audio-processing on a worker thread between the capture and the graph.
import AudioGraphCore
import AudioGraphPulse
import AudioGraphRealtime
import CVoiceProcessing
import Synchronization

/// Echo cancellation, noise suppression, automatic gain control and a high-pass filter on the
/// engine's input, against what its output plays (webrtc-audio-processing, the library
/// PulseAudio's `module-echo-cancel` uses).
///
/// webrtc's `AudioProcessing` takes 10 ms frames and locks mutexes inside every call (measured:
/// 3 `pthread_mutex_lock` per frame pair, no allocation once running), so it cannot run on the
/// render thread. The render thread only moves samples through lock-free rings:
///
/// ```
///  render thread                                   worker thread "ag-voice"
///  ─────────────                                   ────────────────────────
///  OutputNode: observePlayback ──▶ far ring (mono) ──▶ AnalyzeReverseStream (10 ms)
///  InputNode:  processCapture  ──▶ capture rings ────▶ ProcessStream (10 ms, in place)
///              ◀── reads the same frame count ◀── output rings (primed with `latencyFrames` of silence)
/// ```
///
/// The output rings start with ``latencyFrames`` of silence (two 10 ms frames plus the largest
/// slice), so the worker has a full frame period to answer: the processed capture comes that
/// much later than the raw one. A frame the worker did not deliver in time is silence, counted
/// in ``lateFrameCount``; as many frames are owed, and discarded from the output rings when the
/// worker catches up, so the delay returns to ``latencyFrames`` after every late episode.
///
/// Thread safety: `processCapture` and `observePlayback` on the render thread only (real-time
/// safe: ring copies, one semaphore post, atomics); the switches (``isBypassed``,
/// ``isGainControlEnabled``, ``isMuted``) and counters from any thread; webrtc's state belongs to
/// the worker thread, which `deinit` stops and joins (on the control thread that drops the
/// last reference).
final class VoiceProcessor: CaptureProcessor, PlaybackObserver, @unchecked Sendable {
    /// The rate everything runs at (the graph's).
    let sampleRate: Int
    /// Captured channels processed (the input node's output bus).
    let channelCount: Int
    /// Frames of one webrtc frame (10 ms).
    let frameCount: Int
    /// The processed capture's delay behind the raw capture, frames.
    let latencyFrames: Int

    // MARK: Shared (atomic)
    private let bypassed = Atomic<Bool>(false)
    private let gainControl = Atomic<Bool>(true)
    private let muted = Atomic<Bool>(false)
    private let voice = Atomic<Bool>(false)
    private let late = Atomic<Int>(0)
    private let lost = Atomic<Int>(0)
    private let processed = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    private let delayMilliseconds: Atomic<Int>
    private let stopping = Atomic<Bool>(false)

    // MARK: Rings (render thread → worker → render thread), one per channel
    private let captureRings: [RingBuffer]
    private let outputRings: [RingBuffer]
    private let farRing: RingBuffer
    private let wake = WakeSemaphore()

    // MARK: Render thread only
    /// The down-mixed far end of one slice piece.
    private let farScratch: UnsafeMutablePointer<Float>
    private let farScratchFrames: Int
    /// Frames filled with silence because the worker was late, still to be discarded when they arrive.
    private var owedFrames = 0

    // MARK: Worker thread only
    private let processor: OpaquePointer
    private let work: UnsafeMutablePointer<Float>
    private let workPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let farFrame: UnsafeMutablePointer<Float>

    /// Test hook: while true the worker processes nothing (as if it were descheduled).
    let holdsWorkerForTesting = Atomic<Bool>(false)

    /// Told of speech starting and ending while muted (worker thread; set from a control thread).
    private let speechListener = ControlLock<(@Sendable (AudioVoiceProcessingSpeechActivityEvent) -> Void)?>(nil)

    // MARK: Control thread only
    private var thread: PosixThread?

    /// A processor for `channelCount` captured channels at `sampleRate`, for slices of at most
    /// `maximumFramesPerSlice`, with `delayMilliseconds` as the first guess of the echo path
    /// (webrtc's delay-agnostic mode refines it). Starts its worker thread.
    ///
    /// - Throws: a one-line reason when webrtc refuses the rate or channels, or no thread starts.
    init(sampleRate: Int, channelCount: Int, maximumFramesPerSlice: Int, delayMilliseconds: Int) throws(VoiceProcessingError) {
        var message = [CChar](repeating: 0, count: 256)
        guard let p = ag_voice_processor_create(Int32(sampleRate), Int32(channelCount), 1, &message, message.count) else {
            throw VoiceProcessingError(reason: String(cString: message))
        }
        let status = ag_voice_processor_configure(p, 1, 1, 1, 1)
        guard status == 0 else {
            ag_voice_processor_destroy(p)
            throw VoiceProcessingError(reason: "webrtc-audio-processing refused its settings (error \(status))")
        }
        processor = p
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        let frame = Int(ag_voice_processor_frame_count(p))
        let latency = 2 * frame + maximumFramesPerSlice
        frameCount = frame
        latencyFrames = latency
        self.delayMilliseconds = Atomic(delayMilliseconds)
        // A second of audio in every ring: the worker may fall that far behind before frames are lost.
        let ringFrames = max(sampleRate, 4 * latency)
        captureRings = (0..<channelCount).map { _ in RingBuffer(capacity: ringFrames) }
        outputRings = (0..<channelCount).map { _ in
            let ring = RingBuffer(capacity: ringFrames)
            _ = ring.writeSilence(count: latency)
            return ring
        }
        farRing = RingBuffer(capacity: ringFrames)
        farScratchFrames = max(1, maximumFramesPerSlice)
        farScratch = .allocate(capacity: farScratchFrames)
        farScratch.initialize(repeating: 0, count: farScratchFrames)
        work = .allocate(capacity: channelCount * frame)
        work.initialize(repeating: 0, count: channelCount * frame)
        workPointers = .allocate(capacity: channelCount)
        for c in 0..<channelCount { workPointers[c] = work + c * frame }
        farFrame = .allocate(capacity: frame)
        farFrame.initialize(repeating: 0, count: frame)
        // Below the render thread's priority: it must never wait for the worker.
        do {
            try startWorker()
        } catch {
            throw VoiceProcessingError(reason: error.description)
        }
    }

    private func startWorker() throws(PosixThread.StartError) {
        thread = try PosixThread(name: "ag-voice", scheduling: .realtime(priority: PosixThread.renderPriority - 1)) { [self] in
            runWorker()
        }
    }

    deinit {
        stopping.store(true, ordering: .releasing)
        wake.post()
        thread?.join()
        ag_voice_processor_destroy(processor)
        farScratch.deallocate()
        work.deallocate()
        workPointers.deallocate()
        farFrame.deallocate()
    }

    /// Stops the worker (and so every later processing); the processor is then inert. Control thread.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.post()
        thread?.join()
        thread = nil
    }

    // MARK: Switches and counters (any thread)

    /// Whether the capture passes unprocessed (still delayed by ``latencyFrames``, bit for bit).
    var isBypassed: Bool {
        get { bypassed.load(ordering: .relaxed) }
        set { bypassed.store(newValue, ordering: .relaxed) }
    }

    /// Whether webrtc's automatic gain control runs (adaptive digital, -3 dBFS target).
    var isGainControlEnabled: Bool {
        get { gainControl.load(ordering: .relaxed) }
        set { gainControl.store(newValue, ordering: .relaxed) }
    }

    /// Whether the processed capture is replaced by silence (processing goes on, so voice
    /// activity is still detected).
    var isMuted: Bool {
        get { muted.load(ordering: .relaxed) }
        set { muted.store(newValue, ordering: .relaxed) }
    }

    /// The block told, on the worker thread, when speech starts (a frame webrtc's voice activity
    /// detector calls voiced) and ends (``speechEndFrames`` frames without voice) while
    /// ``isMuted``; once per change.
    func setMutedSpeechListener(_ listener: (@Sendable (AudioVoiceProcessingSpeechActivityEvent) -> Void)?) {
        speechListener.withLock { $0 = listener }
    }

    /// 10 ms frames without voice that end speech (300 ms).
    static let speechEndFrames = 30

    /// Whether webrtc's voice activity detector heard voice in the last processed frame.
    var hasVoice: Bool { voice.load(ordering: .relaxed) }

    /// Frames the render thread found missing (the worker was late): silence in their place.
    var lateFrameCount: Int { late.load(ordering: .relaxed) }

    /// Frames dropped because a ring was full (the worker stalled for a second or more).
    var lostFrameCount: Int { lost.load(ordering: .relaxed) }

    /// 10 ms capture frames processed so far.
    var processedFrameCount: Int { processed.load(ordering: .relaxed) }

    /// webrtc calls that returned an error.
    var failureCount: Int { failures.load(ordering: .relaxed) }

    /// The echo path's delay given to webrtc, milliseconds (its delay-agnostic mode refines it).
    var streamDelayMilliseconds: Int {
        get { delayMilliseconds.load(ordering: .relaxed) }
        set { delayMilliseconds.store(newValue, ordering: .relaxed) }
    }

    // MARK: Render thread

    /// Hands the captured slice to the worker and replaces it by the processed frames of
    /// ``latencyFrames`` earlier. Real-time safe.
    func processCapture(_ buffer: ChannelBufferList, frameCount n: Int) {
        let channels = min(channelCount, buffer.channelCount)
        if captureRings[0].writableCount >= n {
            for c in 0..<channelCount {
                _ = captureRings[c].write(buffer.channel(min(c, channels - 1)), count: n)
            }
            wake.post()
        } else {
            lost.add(n, ordering: .relaxed)
            // Those frames will never come out: they no longer count as owed.
            owedFrames = max(0, owedFrames - n)
        }
        if owedFrames > 0 {
            // Frames already replaced by silence when the worker was late: dropped, not played late.
            var ready = Int.max
            for c in 0..<channelCount { ready = min(ready, outputRings[c].readableCount) }
            let drop = min(owedFrames, ready)
            if drop > 0 {
                for c in 0..<channelCount { _ = outputRings[c].discard(count: drop) }
                owedFrames -= drop
            }
        }
        var available = n
        for c in 0..<channelCount { available = min(available, outputRings[c].readableCount) }
        for c in 0..<channels {
            _ = outputRings[c].read(into: buffer.channel(c), count: available)
            if available < n { buffer.channel(c).advanced(by: available).update(repeating: 0, count: n - available) }
        }
        for c in channels..<channelCount { _ = outputRings[c].discard(count: available) }
        if available < n {
            late.add(n - available, ordering: .relaxed)
            owedFrames += n - available
        }
        if muted.load(ordering: .relaxed) {
            for c in 0..<buffer.channelCount { buffer.channel(c).update(repeating: 0, count: n) }
        }
    }

    /// Down-mixes the played slice to mono for the worker's far end. Real-time safe.
    func observePlayback(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount count: Int, frameCount n: Int) {
        guard count > 0 else { return }
        let scale = 1 / Float(count)
        var done = 0
        while done < n {
            let piece = min(farScratchFrames, n - done)
            farScratch.update(from: channels[0] + done, count: piece)
            for c in 1..<max(1, count) {
                let source = channels[c] + done
                for i in 0..<piece { farScratch[i] += source[i] }
            }
            if count > 1 { for i in 0..<piece { farScratch[i] *= scale } }
            if farRing.write(farScratch, count: piece) < piece { lost.add(piece, ordering: .relaxed) }
            done += piece
        }
    }

    // MARK: Worker thread

    private func runWorker() {
        var appliedGainControl = true
        var speaking = false, quietFrames = 0
        while !stopping.load(ordering: .acquiring) {
            wake.wait(timeout: 0.05)
            while !stopping.load(ordering: .relaxed) && !holdsWorkerForTesting.load(ordering: .relaxed) {
                var ready = Int.max
                for c in 0..<channelCount { ready = min(ready, captureRings[c].readableCount) }
                guard ready >= frameCount else { break }
                // The far end played so far first: its echo can only come later.
                while farRing.readableCount >= frameCount {
                    _ = farRing.read(into: farFrame, count: frameCount)
                    var far: UnsafePointer<Float>? = UnsafePointer(farFrame)
                    if ag_voice_processor_process_render(processor, &far) != 0 { failures.add(1, ordering: .relaxed) }
                }
                for c in 0..<channelCount { _ = captureRings[c].read(into: work + c * frameCount, count: frameCount) }
                let agc = gainControl.load(ordering: .relaxed)
                if agc != appliedGainControl {
                    if ag_voice_processor_configure(processor, 1, 1, agc ? 1 : 0, 1) != 0 { failures.add(1, ordering: .relaxed) }
                    appliedGainControl = agc
                }
                if !bypassed.load(ordering: .relaxed) {
                    if ag_voice_processor_process_capture(processor, workPointers, Int32(delayMilliseconds.load(ordering: .relaxed))) != 0 {
                        failures.add(1, ordering: .relaxed)
                    }
                    let voiced = ag_voice_processor_capture_has_voice(processor) != 0
                    voice.store(voiced, ordering: .relaxed)
                    if muted.load(ordering: .relaxed) {
                        quietFrames = voiced ? 0 : quietFrames + 1
                        if voiced != speaking && (voiced || quietFrames >= Self.speechEndFrames) {
                            speaking = voiced
                            let event: AudioVoiceProcessingSpeechActivityEvent = voiced ? .started : .ended
                            speechListener.withLock { $0 }?(event)
                        }
                    } else {
                        speaking = false
                        quietFrames = 0
                    }
                }
                if outputRings[0].writableCount >= frameCount {
                    for c in 0..<channelCount { _ = outputRings[c].write(work + c * frameCount, count: frameCount) }
                } else {
                    lost.add(frameCount, ordering: .relaxed)
                }
                processed.add(1, ordering: .relaxed)
            }
        }
    }
}

/// Why voice processing could not be set up (one line).
struct VoiceProcessingError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
