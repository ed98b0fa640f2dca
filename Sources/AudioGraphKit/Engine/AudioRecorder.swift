// AVAudioRecorder without the prefix: records the input device to a file of the given settings, through its own engine.
import AudioGraphNodes
import Foundation

/// What an ``AudioRecorder`` tells its delegate, as `AVAudioRecorderDelegate` (both optional).
public protocol AudioRecorderDelegate: AnyObject {
    /// Recording ended (``AudioRecorder/stop()`` or the duration of
    /// ``AudioRecorder/record(forDuration:)``); `flag` is false when the file could not be finished.
    func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool)
    /// Writing the file failed (disk full, encoder error); recording stops.
    func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: Error?)
}

extension AudioRecorderDelegate {
    public func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {}
    public func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: Error?) {}
}

/// Records the default input (or the device ``AudioInputNode/setDevice(_:)`` names on
/// ``inputNode``) to a file, as `AVAudioRecorder(url:settings:)`: ``prepareToRecord()``,
/// ``record()``, ``record(atTime:)``, ``record(forDuration:)``, ``record(atTime:forDuration:)``,
/// ``pause()``, ``stop()``, ``deleteRecording()``, ``currentTime``, meters and a ``delegate``.
///
/// The file's type and codec follow `url`'s extension and `settings` as for ``AudioFile``
/// (`AVFormatIDKey` — e.g. `kAudioFormatMPEG4AAC` for an `.m4a`, iOS's default recording format —
/// `AVSampleRateKey`, `AVNumberOfChannelsKey`, `AVEncoderBitRateKey`, `AVEncoderAudioQualityKey`,
/// the `AVLinearPCM…` keys); the input is converted to the file's rate and channel count with an
/// ``AudioConverter`` (libsoxr; a mono input fills every channel, more input channels than the
/// file's are mixed down).
///
/// Built on the engine: a tap on its input node hands the microphone's buffers to the tap
/// thread, which converts and writes them; ``record(forDuration:)`` stops after exactly that
/// many frames of the file's rate. Meters (dBFS, -160 for silence) measure the input: the RMS of
/// the latest tap buffer and the peak since the previous ``updateMeters()``.
///
/// Where Linux differs: the delegate is called on a private queue of the recorder (no main run
/// loop to rely on); ``deviceCurrentTime`` is CLOCK_MONOTONIC in seconds.
///
/// Thread safety: use a recorder from one thread (or serialize calls); the tap thread shares its
/// state under a lock.
public final class AudioRecorder: @unchecked Sendable {
    /// Where the recording goes.
    public let url: URL
    /// The settings the recorder was made with.
    public let settings: [String: Any]
    /// The format of the recorded samples (linear PCM at the file's rate and channel count).
    public let format: AudioFormat
    /// The delegate, called on the recorder's queue.
    public weak var delegate: AudioRecorderDelegate?
    /// Whether ``updateMeters()`` measures.
    public var isMeteringEnabled = false

    /// The engine whose input is recorded (set the device on its input node before recording).
    public let engine = AudioEngine()
    /// The input node recorded.
    public var inputNode: AudioInputNode { engine.inputNode }

    private let lock = NSLock()
    /// Serializes ``finish(notify:)`` (the owner's stop() and the delegate queue's end of a
    /// duration may meet); the tap thread never takes it.
    private let finishLock = NSLock()
    private let queue = DispatchQueue(label: "AudioRecorder.delegate")
    // MARK: Under `lock` (the tap thread and the owner)
    private var file: AudioFile?
    private var converter: AudioConverter?
    private var recording = false
    private var framesWritten: Int64 = 0
    private var frameLimit: Int64?
    private var startHostTime: UInt64 = 0
    private var lastRMS: [Float] = []
    private var peakSinceUpdate: [Float] = []
    private var finishing = false
    /// Whether writing failed during this recording (its end is then not reported successful).
    private var encodeFailed = false
    private var tapInstalled = false
    private var meters: [(average: Float, peak: Float)] = []

    /// A recorder to `url` with `settings`; throws when the settings cannot be recorded (as
    /// ``AudioFile/init(forWriting:settings:)`` would), before anything is created.
    public init(url: URL, settings: [String: Any]) throws {
        let codec = try AudioFileCodec.forWriting(path: url.path, settings: settings)
        let parsed: StreamFormat
        do {
            // The file's own codec decides which keys the PCM parser sees (a WAV's bit depth and
            // format ID are checked here, not first when recording starts).
            parsed = try AudioFormat.parse(settings: AudioFileCodec.pcmSettings(settings, codec: codec), requireFormatID: kAudioFormatLinearPCM,
                                           alsoAccepted: [kAudioFormatFLAC])
        } catch let problem as AudioFormat.SettingsProblem {
            throw AudioFileError.invalidSettings(path: url.path, reason: problem.reason)
        }
        guard let format = AudioFormat(standardFormatWithSampleRate: parsed.sampleRate, channels: AudioChannelCount(parsed.channelCount)) else {
            throw AudioFileError.invalidSettings(path: url.path, reason: "no format of \(parsed.channelCount) channels at \(parsed.sampleRate) Hz")
        }
        self.url = url
        self.settings = settings
        self.format = format
        meters = Array(repeating: (-160, -160), count: parsed.channelCount)
    }

    /// A recorder to `url` of linear PCM in `format` (its settings).
    public convenience init(url: URL, format: AudioFormat) throws {
        try self.init(url: url, settings: format.settings)
    }

    deinit {
        finish(notify: false)
    }

    // MARK: Recording

    /// Creates the file (replacing one at `url`). Returns false when it cannot.
    @discardableResult
    public func prepareToRecord() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if file != nil { return true }
        do {
            file = try AudioFile(forWriting: url, settings: settings)
            framesWritten = 0
            return true
        } catch {
            return false
        }
    }

    /// Starts or resumes recording. Returns false when the file or the input cannot be opened.
    @discardableResult
    public func record() -> Bool { start(at: 0, limit: nil) }

    /// Starts recording at `time` of ``deviceCurrentTime`` (input before it is not recorded).
    @discardableResult
    public func record(atTime time: TimeInterval) -> Bool { start(at: AudioTime.hostTime(forSeconds: time), limit: nil) }

    /// Records `duration` seconds (exactly that many frames at the file's rate), then stops and
    /// tells the delegate.
    @discardableResult
    public func record(forDuration duration: TimeInterval) -> Bool {
        start(at: 0, limit: Int64((max(0, duration) * format.sampleRate).rounded()))
    }

    /// Records `duration` seconds from `time` of ``deviceCurrentTime``.
    @discardableResult
    public func record(atTime time: TimeInterval, forDuration duration: TimeInterval) -> Bool {
        start(at: AudioTime.hostTime(forSeconds: time), limit: Int64((max(0, duration) * format.sampleRate).rounded()))
    }

    private func start(at hostTime: UInt64, limit: Int64?) -> Bool {
        guard prepareToRecord() else { return false }
        let inputFormat = engine.inputNode.outputFormat(forBus: 0)
        lock.lock()
        // A new stream (no tap yet: the first start, or after a failed one) converts from the
        // input's format as it is now (the device or the channel map may have changed); a
        // resume after pause() keeps the converter and its history.
        let needsTap = !tapInstalled
        if needsTap || converter == nil {
            converter = AudioConverter(from: inputFormat, to: format)
            converter?.downmix = true
        }
        startHostTime = hostTime
        frameLimit = limit.map { framesWritten + $0 }
        recording = converter != nil
        // Only a tap that is really installed counts (a failed start leaves none behind).
        if recording { tapInstalled = true }
        lock.unlock()
        guard recording else { return false }
        if needsTap {
            engine.inputNode.installTap(onBus: 0, bufferSize: AudioFrameCount(inputFormat.sampleRate / 20), format: inputFormat) { [weak self] buffer, time in
                self?.received(buffer, at: time)
            }
        }
        if !engine.isRunning {
            do { try engine.start() } catch {
                lock.lock()
                recording = false
                lock.unlock()
                if needsTap { undoTap() }
                return false
            }
        }
        return true
    }

    /// Removes the tap a failed ``record()`` installed and forgets its converter, so the next
    /// start installs both afresh for the input's format then.
    private func undoTap() {
        engine.inputNode.removeTap(onBus: 0)
        lock.lock()
        tapInstalled = false
        converter = nil
        lock.unlock()
    }

    /// Pauses; ``record()`` resumes appending to the same file.
    public func pause() {
        lock.lock()
        recording = false
        lock.unlock()
    }

    /// Stops recording, finishes the file and tells the delegate (successfully unless the file
    /// could not be finished).
    public func stop() {
        finish(notify: true)
    }

    /// Removes the recording's file (stop first). Returns whether it was removed.
    @discardableResult
    public func deleteRecording() -> Bool {
        guard !isRecording else { return false }
        return (try? FileManager.default.removeItem(at: url)) != nil
    }

    /// Whether the recorder is recording (not paused or stopped).
    public var isRecording: Bool {
        lock.lock()
        defer { lock.unlock() }
        return recording
    }

    /// Seconds recorded into the file so far; 0 when the recorder is stopped (as on Apple's
    /// platforms: read it before ``stop()``).
    public var currentTime: TimeInterval {
        lock.lock()
        defer { lock.unlock() }
        return Double(framesWritten) / format.sampleRate
    }

    /// The input device's clock in seconds (CLOCK_MONOTONIC), the time base of ``record(atTime:)``.
    public var deviceCurrentTime: TimeInterval { AudioTime.seconds(forHostTime: AudioTime.currentHostTime) }

    // MARK: Meters

    /// Takes the input's levels (see the type's documentation).
    public func updateMeters() {
        guard isMeteringEnabled else { return }
        lock.lock()
        defer { lock.unlock() }
        for c in meters.indices {
            let rms = c < lastRMS.count ? lastRMS[c] : 0
            let peak = c < peakSinceUpdate.count ? peakSinceUpdate[c] : 0
            meters[c] = (AudioPlayer.decibels(Double(rms)), AudioPlayer.decibels(Double(peak)))
        }
        for c in peakSinceUpdate.indices { peakSinceUpdate[c] = 0 }
    }

    /// The RMS level of channel `channelNumber` (of the input) at the last ``updateMeters()``, dBFS.
    public func averagePower(forChannel channelNumber: Int) -> Float {
        lock.lock()
        defer { lock.unlock() }
        return meters.indices.contains(channelNumber) ? meters[channelNumber].average : -160
    }

    /// The peak level of channel `channelNumber` (of the input) at the last ``updateMeters()``, dBFS.
    public func peakPower(forChannel channelNumber: Int) -> Float {
        lock.lock()
        defer { lock.unlock() }
        return meters.indices.contains(channelNumber) ? meters[channelNumber].peak : -160
    }

    // MARK: The tap thread

    private func received(_ buffer: AudioPCMBuffer, at time: AudioTime) {
        lock.lock()
        defer { lock.unlock() }
        measure(buffer)
        guard recording, let converter, let file else { return }
        var input = buffer
        if startHostTime > 0, time.isHostTimeValid {
            // Drop the input before the start time (to the frame).
            let rate = buffer.format.sampleRate
            let skip = startHostTime > time.hostTime ? Int((Double(startHostTime - time.hostTime) / 1e9 * rate).rounded()) : 0
            if skip >= Int(buffer.frameLength) { return }
            if skip > 0, let tail = AudioPCMBuffer(pcmFormat: buffer.format, frameCapacity: buffer.frameLength - AudioFrameCount(skip)) {
                tail.frameLength = buffer.frameLength - AudioFrameCount(skip)
                for c in 0..<Int(buffer.format.channelCount) {
                    tail.floatChannelData![c].update(from: buffer.floatChannelData![c] + skip, count: Int(tail.frameLength))
                }
                input = tail
            }
            startHostTime = 0
        }
        do {
            try write(converting: input, with: converter, to: file, end: false)
        } catch {
            recording = false
            encodeFailed = true
            let failure = error
            queue.async { [weak self] in
                guard let self else { return }
                self.delegate?.audioRecorderEncodeErrorDidOccur(self, error: failure)
                self.finish(notify: true)
            }
            return
        }
        if let frameLimit, framesWritten >= frameLimit, !finishing {
            recording = false
            finishing = true
            queue.async { [weak self] in self?.finish(notify: true) }
        }
    }

    /// Converts `buffer` (or, at the end, drains the converter) and appends to the file, never
    /// past ``frameLimit``. Call with the lock held.
    private func write(converting buffer: AudioPCMBuffer, with converter: AudioConverter, to file: AudioFile, end: Bool) throws {
        let capacity = AudioFrameCount(Double(buffer.frameLength) * format.sampleRate / buffer.format.sampleRate) + 64
        guard let out = AudioPCMBuffer(pcmFormat: format, frameCapacity: max(capacity, 1024)) else { return }
        var supplied = end
        while true {
            var error: NSError?
            let status = converter.convert(to: out, error: &error) { _, outStatus in
                if end {
                    outStatus.pointee = .endOfStream
                    return nil
                }
                if supplied {
                    outStatus.pointee = .noDataNow
                    return nil
                }
                supplied = true
                outStatus.pointee = .haveData
                return buffer
            }
            if let error { throw error }
            var frames = Int64(out.frameLength)
            if let frameLimit { frames = min(frames, max(0, frameLimit - framesWritten)) }
            if frames > 0 {
                out.frameLength = AudioFrameCount(frames)
                try file.write(from: out)
                framesWritten += frames
            }
            if status != .haveData || (frameLimit.map { framesWritten >= $0 } ?? false) { break }
        }
    }

    private func measure(_ buffer: AudioPCMBuffer) {
        guard isMeteringEnabled, let data = buffer.floatChannelData else { return }
        let channels = Int(buffer.format.channelCount), n = Int(buffer.frameLength)
        if lastRMS.count != channels {
            lastRMS = Array(repeating: 0, count: channels)
            peakSinceUpdate = Array(repeating: 0, count: channels)
        }
        for c in 0..<channels {
            var sum: Float = 0, peak: Float = 0
            for i in 0..<n {
                let x = data[c][i]
                sum += x * x
                peak = max(peak, abs(x))
            }
            lastRMS[c] = n > 0 ? (sum / Float(n)).squareRoot() : 0
            peakSinceUpdate[c] = max(peakSinceUpdate[c], peak)
        }
    }

    /// Stops the input, drains the converter into the file, closes it and (if `notify`) tells
    /// the delegate — once per recording: a recorder already stopped has nothing to report.
    private func finish(notify: Bool) {
        finishLock.lock()
        defer { finishLock.unlock() }
        lock.lock()
        let active = file != nil || tapInstalled
        lock.unlock()
        guard active else { return }
        if tapInstalled {
            engine.inputNode.removeTap(onBus: 0)
            tapInstalled = false
        }
        if engine.isRunning { engine.stop() }
        lock.lock()
        recording = false
        var success = file != nil && !encodeFailed
        if let file {
            if let converter, let dummy = AudioPCMBuffer(pcmFormat: converter.inputFormat, frameCapacity: 1) {
                do { try write(converting: dummy, with: converter, to: file, end: true) } catch { success = false }
            }
            do { try file.closeReportingFailure() } catch { success = false }
        }
        encodeFailed = false
        file = nil
        converter = nil
        framesWritten = 0
        finishing = false
        frameLimit = nil
        lock.unlock()
        guard notify else { return }
        let succeeded = success
        queue.async { [weak self] in
            guard let self else { return }
            self.delegate?.audioRecorderDidFinishRecording(self, successfully: succeeded)
        }
    }
}
