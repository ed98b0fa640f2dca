// AVAudioPlayer without the prefix: plays one sound file through its own engine (play, pause, seek, loops, rate, meters).
import AudioGraphNodes
import Foundation
import Synchronization

/// What an ``AudioPlayer`` tells its delegate, as `AVAudioPlayerDelegate` (both methods optional).
public protocol AudioPlayerDelegate: AnyObject {
    /// Playback reached the end of the sound (after its loops), or failed (`flag` false).
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// The file could not be decoded.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: Error?)
}

extension AudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: Error?) {}
}

/// Plays a sound file, as `AVAudioPlayer`: `init(contentsOf:)`, ``play()``, ``play(atTime:)``,
/// ``pause()``, ``stop()``, ``currentTime`` (set it to seek), ``duration``, ``volume`` (with
/// ``setVolume(_:fadeDuration:)``), ``pan``, ``rate`` (with ``enableRate``, set before
/// ``prepareToPlay()``), ``numberOfLoops``, meters (``isMeteringEnabled``, ``updateMeters()``,
/// ``averagePower(forChannel:)``, ``peakPower(forChannel:)``) and a ``delegate``.
///
/// Built on the engine: the file is decoded into memory when the player is made (as
/// AVAudioPlayer, meant for sounds, not hour-long files); a source node renders it from a
/// position the render thread owns (seeks, loops and volume fades are handed over through
/// atomics, sample-exactly at the next slice), through an ``AudioUnitTimePitch`` when
/// ``enableRate`` is set (the rate changes speed, not pitch), into the engine's main mixer
/// (``pan``) and the default PulseAudio output.
///
/// Meters (dBFS, -160 for silence): ``updateMeters()`` measures the frames around the play
/// position — ``averagePower(forChannel:)`` the RMS of the last 1024 frames played,
/// ``peakPower(forChannel:)`` the largest sample played since the previous `updateMeters()`
/// (at most the last second) — times ``volume``.
///
/// Each player has its own engine, and so its own PulseAudio playback stream, but only while it
/// plays: at the end of the sound (reported to the delegate once the output has played it) and
/// at ``stop()`` the engine stops and the stream is closed; ``play()`` opens it again. Many
/// idle players thus cost no streams or render threads; players that play at the same time
/// are mixed by the PulseAudio server, as AVAudioPlayers by the system mixer. (A shared engine
/// would save a stream per playing player but couple their start, stop and failure; not done.)
/// After the end ``currentTime`` is 0 at once, so a ``play()`` right after it plays the sound
/// again; every end is reported exactly once, and an end not yet reported when ``stop()`` is
/// called is not reported.
///
/// Where Linux differs: the delegate is called on a private queue of the player (there is no
/// main run loop to rely on); `data:` initializers and `settings` of compressed files are not
/// there; ``deviceCurrentTime`` is CLOCK_MONOTONIC in seconds (``AudioTime``'s host time).
///
/// Thread safety: use a player from one thread (or serialize calls), as AVAudioPlayer; the
/// render thread and the delegate queue touch only its atomics.
public final class AudioPlayer: @unchecked Sendable {
    // MARK: Immutable after init
    /// The file's URL.
    public let url: URL?
    /// The format of the decoded samples (deinterleaved float32 at the file's rate and channel count).
    public let format: AudioFormat
    /// The file's settings dictionary (its linear PCM description).
    public var settings: [String: Any] { format.settings }
    /// The file's channel count.
    public var numberOfChannels: Int { Int(format.channelCount) }
    /// The sound's length in seconds.
    public let duration: TimeInterval

    // MARK: Owner thread
    /// The delegate, called on the player's queue.
    public weak var delegate: AudioPlayerDelegate?
    /// Times the sound repeats after it first plays: 0 plays it once, -1 loops until ``stop()``.
    public var numberOfLoops: Int = 0 {
        didSet { state.loopsRemaining.store(numberOfLoops, ordering: .relaxed) }
    }
    /// Whether ``rate`` may change the speed; set it before ``prepareToPlay()`` or ``play()``.
    public var enableRate = false
    /// Whether ``updateMeters()`` measures.
    public var isMeteringEnabled = false

    private let engine = AudioEngine()
    private let source: AudioSourceNode
    private var timePitch: AudioUnitTimePitch?
    private let state: AudioPlayerRenderState
    private var prepared = false
    private var meters: [(average: Float, peak: Float)]
    private var lastMeterPosition = 0
    private let queue = DispatchQueue(label: "AudioPlayer.delegate")
    /// Serializes starting and stopping the engine between the owner's calls and the delegate
    /// queue's end of playback (which stops the engine when nothing plays any more).
    private let control = NSLock()
    // MARK: Under `control`
    private var monitor: DispatchSourceTimer?
    /// Changed by ``stop()``: an end of playback reported after it is dropped.
    private var reportGeneration = 0
    // MARK: Delegate queue only
    /// The render thread's count of ends already scheduled for a report.
    private var endsSeen = 0
    private var storedRate: Float = 1
    private var storedVolume: Float = 1

    /// A player of the file at `url` (any format ``AudioFile`` reads). Throws the file's error.
    public convenience init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, fileTypeHint: nil)
    }

    /// A player of the file at `url`; the hint is not needed (the type is found from the file).
    public init(contentsOf url: URL, fileTypeHint utiString: String?) throws {
        let file = try AudioFile(forReading: url)
        let frames = Int(file.length)
        guard let buffer = AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: AudioFrameCount(max(1, frames))) else {
            throw AudioFileError.formatMismatch(path: url.path, reason: "cannot hold \(frames) frames in memory")
        }
        try file.read(into: buffer)
        file.close()
        self.url = url
        format = file.processingFormat
        duration = Double(buffer.frameLength) / format.sampleRate
        state = AudioPlayerRenderState(buffer: buffer)
        meters = Array(repeating: (-160, -160), count: Int(format.channelCount))
        let state = self.state
        source = AudioSourceNode(format: format) { isSilence, timestamp, frameCount, data in
            state.render(isSilence: isSilence, hostTime: timestamp.pointee.mHostTime, frameCount: Int(frameCount),
                         output: UnsafeMutableAudioBufferListPointer(data))
        }
    }

    deinit {
        control.lock()
        monitor?.cancel()
        control.unlock()
        if engine.isRunning { engine.stop() }
    }

    // MARK: Playing

    /// Builds the engine (and the rate unit when ``enableRate`` is set). Returns whether it could.
    @discardableResult
    public func prepareToPlay() -> Bool {
        guard !prepared else { return true }
        engine.attach(source)
        if enableRate {
            let unit = AudioUnitTimePitch()
            unit.rate = storedRate
            engine.attach(unit)
            engine.connect(source, to: unit, format: format)
            engine.connect(unit, to: engine.mainMixerNode, format: nil)
            timePitch = unit
        } else {
            engine.connect(source, to: engine.mainMixerNode, format: format)
        }
        engine.prepare()
        prepared = true
        return true
    }

    /// Starts or resumes playback from ``currentTime``. Returns false when no output could be
    /// opened (no PulseAudio server).
    @discardableResult
    public func play() -> Bool {
        play(startingAt: 0)
    }

    /// Starts playback when ``deviceCurrentTime`` reaches `time` (a time in the past plays at
    /// once), to the frame.
    @discardableResult
    public func play(atTime time: TimeInterval) -> Bool {
        play(startingAt: AudioTime.hostTime(forSeconds: time))
    }

    private func play(startingAt hostTime: UInt64) -> Bool {
        guard prepareToPlay() else { return false }
        control.lock()
        defer { control.unlock() }
        state.startHostTime.store(hostTime, ordering: .relaxed)
        state.loopsRemaining.store(numberOfLoops, ordering: .relaxed)
        state.isPlaying.store(true, ordering: .releasing)
        if !engine.isRunning {
            do { try engine.start() } catch {
                state.isPlaying.store(false, ordering: .relaxed)
                return false
            }
        }
        startMonitor()
        return true
    }

    /// Pauses; ``play()`` resumes where it stopped.
    public func pause() {
        state.isPlaying.store(false, ordering: .releasing)
    }

    /// Stops playback and the engine (the output is released); ``currentTime`` stays where it
    /// was. An end of playback not yet reported is not reported (the delegate hears of ends
    /// only, as on Apple's platforms).
    public func stop() {
        control.lock()
        defer { control.unlock() }
        state.isPlaying.store(false, ordering: .releasing)
        reportGeneration += 1
        stopEngine()
    }

    /// Stops the monitor and the engine (the output stream is closed). Call under `control`.
    private func stopEngine() {
        monitor?.cancel()
        monitor = nil
        if engine.isRunning { engine.stop() }
    }

    /// Whether the player is playing.
    public var isPlaying: Bool { state.isPlaying.load(ordering: .acquiring) }

    /// The play position in seconds; setting it seeks (taken at the next render slice), clamped to
    /// the sound (NaN is ignored).
    public var currentTime: TimeInterval {
        get { Double(state.currentPosition) / format.sampleRate }
        set {
            guard !newValue.isNaN else { return }
            let seconds = min(max(0, newValue), Double(state.frameCount) / format.sampleRate)
            state.seek(to: min(Int((seconds * format.sampleRate).rounded()), state.frameCount))
        }
    }

    /// The output device's clock in seconds (CLOCK_MONOTONIC), the time base of ``play(atTime:)``.
    public var deviceCurrentTime: TimeInterval { AudioTime.seconds(forHostTime: AudioTime.currentHostTime) }

    /// The gain applied to the sound, 0...1.
    public var volume: Float {
        get { storedVolume }
        set { setVolume(newValue, fadeDuration: 0) }
    }

    /// Moves ``volume`` to `volume` linearly over `duration` seconds (0: at the next slice).
    /// (Values outside 0...1 are clamped, NaN is ignored; a fade longer than the graph-file
    /// limit of 10^7 s is cut to it.)
    public func setVolume(_ volume: Float, fadeDuration duration: TimeInterval) {
        guard !volume.isNaN else { return }
        storedVolume = min(1, max(0, volume))
        let seconds = duration.isNaN ? 0 : min(max(0, duration), 10_000_000)
        state.fade(to: storedVolume, frames: Int((seconds * format.sampleRate).rounded()))
    }

    /// Stereo position, -1 (left) ... 1 (right), as the main mixer's pan of the player.
    public var pan: Float {
        get { source.pan }
        set { source.pan = min(1, max(-1, newValue)) }
    }

    /// Playback speed, 0.5...2 (1: normal), pitch kept; only when ``enableRate`` was set before
    /// the player was prepared (otherwise stored and ignored, as on Apple's platforms).
    public var rate: Float {
        get { storedRate }
        set {
            storedRate = min(2, max(0.5, newValue))
            timePitch?.rate = storedRate
        }
    }

    // MARK: Meters

    /// Measures the frames around the play position (see the type's documentation).
    public func updateMeters() {
        guard isMeteringEnabled else { return }
        let position = state.currentPosition
        let gain = storedVolume
        let channels = Int(format.channelCount)
        let averageStart = max(0, position - 1024)
        let peakStart = max(0, min(lastMeterPosition, position), position - Int(format.sampleRate))
        for c in 0..<channels {
            let samples = state.channel(c)
            var sum = 0.0
            for i in averageStart..<position { sum += Double(samples[i]) * Double(samples[i]) }
            let rms = position > averageStart ? (sum / Double(position - averageStart)).squareRoot() * Double(gain) : 0
            var peak: Float = 0
            for i in peakStart..<position { peak = max(peak, abs(samples[i])) }
            meters[c] = (Self.decibels(rms), Self.decibels(Double(peak * gain)))
        }
        lastMeterPosition = position
    }

    /// The RMS level of channel `channelNumber` at the last ``updateMeters()``, in dBFS (-160 for silence).
    public func averagePower(forChannel channelNumber: Int) -> Float {
        meters.indices.contains(channelNumber) ? meters[channelNumber].average : -160
    }

    /// The peak level of channel `channelNumber` at the last ``updateMeters()``, in dBFS (-160 for silence).
    public func peakPower(forChannel channelNumber: Int) -> Float {
        meters.indices.contains(channelNumber) ? meters[channelNumber].peak : -160
    }

    static func decibels(_ x: Double) -> Float {
        x > 0 ? max(-160, Float(20 * log10(x))) : -160
    }

    // MARK: Finishing

    /// Watches for the render thread's ends of the sound (it counts them and has already put
    /// the position back to 0); reports each once, when the output has played it, and then, if
    /// nothing plays any more, stops the engine so an idle player holds no output stream. Call
    /// under `control`.
    private func startMonitor() {
        guard monitor == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let ends = self.state.endCount.load(ordering: .acquiring)
            guard ends != self.endsSeen else { return }
            let newEnds = ends - self.endsSeen
            self.endsSeen = ends
            self.control.lock()
            let generation = self.reportGeneration
            self.control.unlock()
            let latency = self.engine.outputNode.presentationLatency
            self.queue.asyncAfter(deadline: .now() + latency) { [weak self] in
                guard let self else { return }
                self.control.lock()
                guard generation == self.reportGeneration else {
                    self.control.unlock()
                    return
                }
                // play() again before this report keeps the engine; otherwise it stops here,
                // and the next play() starts it.
                if !self.state.isPlaying.load(ordering: .acquiring) { self.stopEngine() }
                self.control.unlock()
                for _ in 0..<newEnds { self.delegate?.audioPlayerDidFinishPlaying(self, successfully: true) }
            }
        }
        monitor = timer
        timer.resume()
    }
}

/// The render side of an ``AudioPlayer``: the decoded sound and the atomics the control side
/// sets. Real-time safe: ``render(isSilence:hostTime:frameCount:output:)`` copies samples and
/// reads and writes atomics only.
///
/// Thread safety: the atomics from any thread; the `// MARK: Render thread only` fields from
/// the render thread only.
package final class AudioPlayerRenderState: @unchecked Sendable {
    // MARK: Immutable after init
    private let buffer: AudioPCMBuffer
    let frameCount: Int
    private let channelCount: Int

    // MARK: Shared (atomic)
    package let isPlaying = Atomic<Bool>(false)
    /// How many times the sound (and its loops) ended: counted by the render thread, each end
    /// reported once by the monitor.
    package let endCount = Atomic<Int>(0)
    package let loopsRemaining = Atomic<Int>(0)
    /// The host time to start at (0: at once).
    let startHostTime = Atomic<UInt64>(0)
    /// The position the render thread reached (frames of the sound).
    private let position = Atomic<Int>(0)
    /// A seek to hand over (-1: none).
    private let seekRequest = Atomic<Int>(-1)
    /// The fade to start: target gain bits, frames, and a generation that changes with each fade.
    private let fadeTarget = Atomic<UInt32>(Float(1).bitPattern)
    private let fadeFrames = Atomic<Int>(0)
    private let fadeGeneration = Atomic<Int>(0)

    // MARK: Render thread only
    private var renderPosition = 0
    private var gain: Float = 1
    private var gainStep: Float = 0
    private var gainStepsLeft = 0
    private var seenFadeGeneration = 0

    package init(buffer: AudioPCMBuffer) {
        self.buffer = buffer
        frameCount = Int(buffer.frameLength)
        channelCount = Int(buffer.format.channelCount)
    }

    func channel(_ c: Int) -> UnsafeMutablePointer<Float> { buffer.floatChannelData![c] }

    /// The position: a pending seek's target, else where the render thread is.
    package var currentPosition: Int {
        let pending = seekRequest.load(ordering: .acquiring)
        return pending >= 0 ? pending : position.load(ordering: .acquiring)
    }

    package func seek(to frame: Int) {
        seekRequest.store(frame, ordering: .releasing)
        position.store(frame, ordering: .releasing)
    }

    package func fade(to target: Float, frames: Int) {
        fadeTarget.store(target.bitPattern, ordering: .relaxed)
        fadeFrames.store(frames, ordering: .relaxed)
        fadeGeneration.add(1, ordering: .releasing)
    }

    /// Renders one slice. Real-time safe.
    package func render(isSilence: UnsafeMutablePointer<ObjCBool>, hostTime: UInt64, frameCount n: Int,
                output: UnsafeMutableAudioBufferListPointer) -> OSStatus {
        let seek = seekRequest.exchange(-1, ordering: .acquiring)
        if seek >= 0 { renderPosition = seek }
        let generation = fadeGeneration.load(ordering: .acquiring)
        if generation != seenFadeGeneration {
            seenFadeGeneration = generation
            let target = Float(bitPattern: fadeTarget.load(ordering: .relaxed))
            let frames = fadeFrames.load(ordering: .relaxed)
            if frames <= 0 {
                gain = target
                gainStepsLeft = 0
            } else {
                gainStep = (target - gain) / Float(frames)
                gainStepsLeft = frames
            }
        }
        for c in 0..<output.count {
            if let d = output[c].mData { d.assumingMemoryBound(to: Float.self).update(repeating: 0, count: n) }
        }
        guard isPlaying.load(ordering: .acquiring) else {
            isSilence.pointee = true
            return noErr
        }
        // A start time inside this slice starts at its frame; a later one waits.
        var written = 0
        let start = startHostTime.load(ordering: .relaxed)
        if start > hostTime {
            let delay = Double(start - hostTime) / 1e9 * buffer.format.sampleRate
            guard delay < Double(n) else { return noErr }
            written = Int(delay)
        }
        startHostTime.store(0, ordering: .relaxed)
        while written < n {
            if renderPosition >= frameCount {
                let loops = loopsRemaining.load(ordering: .relaxed)
                if loops != 0 && frameCount > 0 {
                    if loops > 0 { loopsRemaining.store(loops - 1, ordering: .relaxed) }
                    renderPosition = 0
                    continue
                }
                // Ended: back to the start (Apple's currentTime is 0 after the end), so a play()
                // right after it plays the sound again rather than ending at once.
                renderPosition = 0
                isPlaying.store(false, ordering: .releasing)
                endCount.add(1, ordering: .releasing)
                break
            }
            let k = min(n - written, frameCount - renderPosition)
            var g = gain, steps = gainStepsLeft
            for c in 0..<min(channelCount, output.count) {
                guard let d = output[c].mData?.assumingMemoryBound(to: Float.self) else { continue }
                let src = buffer.floatChannelData![c] + renderPosition
                g = gain
                steps = gainStepsLeft
                for i in 0..<k {
                    d[written + i] = src[i] * g
                    if steps > 0 { g += gainStep; steps -= 1 }
                }
            }
            gain = g
            gainStepsLeft = steps
            renderPosition += k
            written += k
        }
        position.store(renderPosition, ordering: .releasing)
        return noErr
    }
}
