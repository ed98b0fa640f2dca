// librubberband in real-time mode behind a fixed-block, output-FIFO interface (the timePitch node's DSP).
import AudioGraphCore
import CRubberBand
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Synchronization

/// One librubberband stretcher (real-time mode, no threads; R3 "finer" or R2 "faster" engine by
/// ``TimePitchQuality``) fed in fixed blocks of ``blockSize`` frames, its output collected in a
/// FIFO that the kernel reads whatever its slice size.
///
/// - Pitch mode: "high consistency" (rubberband's resampler runs always, so a pitch that moves
///   while playing, through 0 cents too, has no discontinuity) only where the pitch may move:
///   `consistentPitch`, which the node sets unless it renders a graph file offline with a
///   pitch of 0 and no pitch automation (``TimePitchNode/livePitchChanges``). Otherwise "high
///   speed": at 0 cents R3 skips the resampler, 16 % of its instructions (callgrind,
///   Docs/Performance.md "Time-stretch"); this is the default of the `rubberband` tool, which is
///   why `rubberband -3` was faster than the node. A pitch set away from 0 later still shifts,
///   through the resampler from then on, after a gap of about 20 ms of silence where it starts
///   (measured in TimePitchRealTimeSafetyTests) — why live nodes keep it on.
///
/// - `rate` is the playback rate (2: twice as fast, half as long): rubberband's time ratio is
///   `1 / rate`. `pitch` is in cents: the pitch scale is `2^(cents/1200)`.
/// - `overlap` (3...32, as AVAudioUnitTimePitch's) chooses rubberband's analysis windows when
///   the stretcher is made (rubberband fixes them at construction): below 6
///   `RubberBandOptionWindowShort` (R3 restricted to one short window: less delay and CPU, less
///   quality), 6 and above the standard multi-resolution windows (the R3 engine has no longer
///   window: it treats `RubberBandOptionWindowLong` as standard, so larger values change
///   nothing). AVAudioUnitTimePitch's overlap has no exact rubberband counterpart; this is the
///   only window choice R3 offers.
/// - Why R3 ("finer"): on a steady 440 Hz tone the R2 ("faster") engine in real-time mode
///   drifts to 434 Hz at rate 2 and dips in level every few thousand frames; R3 keeps 440.0 Hz.
///   Rate 1/32 with R2 also reallocates its window on the render thread (it says so on stderr);
///   R3 does not (RealTimeSafetyTests).
/// - Alignment: ``prime(rate:cents:)`` feeds rubberband's preferred start pad of zeros and
///   discards its start delay from the output, so output frame 0 lines up with input frame 0
///   (as AVAudioUnitTimePitch's output does). The node pulls that much input ahead instead.
///
/// Every buffer is allocated at init, and rubberband is told the largest block
/// (`rubberband_set_max_process_size`), so ``process(_:frameCount:)``, ``read(into:frameCount:)``
/// and ``setRatios(rate:cents:)`` do not allocate (RealTimeSafetyTests measure it).
///
/// Thread safety: created and released on a control thread; every other member on the render
/// thread only (one thread at a time), real-time safe.
final class TimePitchStretcher: @unchecked Sendable {
    // MARK: Immutable after init
    /// Input frames per `rubberband_process` call.
    let blockSize: Int
    let channelCount: Int
    /// The rubberband options it was made with (``options(quality:overlap:consistentPitch:)``).
    let options: UInt32
    /// Its engine.
    let quality: TimePitchQuality
    /// The largest rate per unit of pitch scale (see ``maximumRatePerPitchScale(_:)``).
    let maximumRatePerPitchScale: Double
    /// Blocks fed per pitch ratio at rate 1 in ``warmUp()``: R2 resamples its first chunk later than R3.
    private let warmUpBlocks: Int
    /// Passes through the extreme ratios in ``warmUp()``.
    private let warmUpPasses: Int

    /// The largest rate per unit of pitch scale a quality renders: unlimited for R3; 5 for R2,
    /// whose real-time mode changes its FFT size when the effective ratio (pitch scale / rate)
    /// falls below about 0.19 (librubberband 3.1.2 `R2Stretcher::calculateSizes`), and that
    /// reallocates its onset detector on the render thread (seen by
    /// TimePitchRealTimeSafetyTests at rate 32). The `faster` mode therefore plays at most 5
    /// times faster than its pitch scale.
    static func maximumRatePerPitchScale(_ quality: TimePitchQuality) -> Double {
        quality == .finer ? .infinity : 5
    }
    /// Frames the output FIFO holds per channel.
    let fifoCapacity: Int
    private let state: RubberBandState
    private let fifo: ChannelBufferStorage
    /// Scratch for output that is discarded (the start delay), `blockSize` frames per channel.
    private let discardScratch: ChannelBufferStorage
    private let inputTable: UnsafeMutablePointer<UnsafePointer<Float>?>
    private let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let zeros: ChannelBufferStorage

    // MARK: Render thread only
    /// Output frames discarded after the start delay so that the output is aligned (see
    /// `measureAlignment`); set at init.
    private var alignmentCorrection = 0
    /// Frames waiting in the FIFO.
    private(set) var level = 0
    /// Where the waiting frames start in the FIFO: a read advances it instead of moving the
    /// backlog; the backlog moves to the front only when rubberband's output would not fit behind it.
    private var readIndex = 0
    /// Output frames still to discard (what is left of the start delay).
    private var discard = 0
    private var rate = 1.0
    private var cents = 0.0
    /// The time ratio rubberband was last given.
    private var currentTimeRatio = 1.0
    /// Input frames fed since the last prime, and output frames kept (diagnostics and tests).
    private(set) var framesFed: Int64 = 0
    private(set) var framesProduced: Int64 = 0

    /// The window option for an `overlap` value (see the type's notes).
    static func windowOption(overlap: Double) -> RubberBandOption {
        overlap < 6 ? RubberBandOptionWindowShort : RubberBandOptionWindowStandard
    }

    /// The options every stretcher is made with (besides the engine, window and pitch mode).
    static let baseOptions: UInt32 = RubberBandOptionProcessRealTime.rawValue | RubberBandOptionThreadingNever.rawValue

    /// The rubberband options for a quality, an `overlap` and a pitch mode (see the type's notes).
    static func options(quality: TimePitchQuality, overlap: Double, consistentPitch: Bool) -> UInt32 {
        let engine = quality == .finer ? RubberBandOptionEngineFiner : RubberBandOptionEngineFaster
        let pitch = consistentPitch ? RubberBandOptionPitchHighConsistency : RubberBandOptionPitchHighSpeed
        return baseOptions | engine.rawValue | pitch.rawValue | windowOption(overlap: overlap).rawValue
    }

    /// A stretcher for `channelCount` channels at `sampleRate` (control thread: allocates).
    /// `maximumOutputPerRead` is the most frames one ``read(into:frameCount:)`` asks for.
    init(sampleRate: Double, channelCount: Int, overlap: Double, quality: TimePitchQuality = .finer,
         consistentPitch: Bool = true, blockSize: Int = 256, maximumOutputPerRead: Int, rate: Double, cents: Double) {
        self.blockSize = blockSize
        self.channelCount = max(1, channelCount)
        let optionBits = Self.options(quality: quality, overlap: overlap, consistentPitch: consistentPitch)
        options = optionBits
        maximumRatePerPitchScale = Self.maximumRatePerPitchScale(quality)
        warmUpBlocks = quality == .finer ? 8 : 32
        warmUpPasses = quality == .finer ? 1 : 2
        Self.silenceLibraryLog
        state = rubberband_new(UInt32(sampleRate.rounded()), UInt32(self.channelCount), Int32(bitPattern: optionBits),
                               1 / rate, Self.pitchScale(cents))
        rubberband_set_max_process_size(state, UInt32(blockSize))
        // One block at the slowest rate (time ratio 32) makes up to 32 blocks of output; keep room
        // for two of those, rubberband's own hops and one read, so a block's output always fits
        // (a FIFO that never fills keeps the output independent of the slice size).
        fifoCapacity = maximumOutputPerRead + 64 * blockSize + 16384
        fifo = ChannelBufferStorage(channelCount: self.channelCount, capacity: fifoCapacity)
        discardScratch = ChannelBufferStorage(channelCount: self.channelCount, capacity: blockSize)
        zeros = ChannelBufferStorage(channelCount: self.channelCount, capacity: blockSize)
        inputTable = .allocate(capacity: self.channelCount)
        inputTable.initialize(repeating: nil, count: self.channelCount)
        outputTable = .allocate(capacity: self.channelCount)
        outputTable.initialize(repeating: nil, count: self.channelCount)
        self.quality = quality
        warmUp(initialRate: rate, initialCents: cents)
        // The alignment depends on the resampler's history, which the warm-up's ratios set.
        let key = AlignmentKey(sampleRate: sampleRate, channelCount: self.channelCount, options: optionBits, blockSize: blockSize,
                               warmUpRate: quality == .finer ? 0 : rate, warmUpCents: quality == .finer ? 0 : cents)
        if let known = Self.alignments.withLock({ $0[key] }) {
            alignmentCorrection = known
        } else {
            alignmentCorrection = measureAlignment()
            Self.alignments.withLock { $0[key] = alignmentCorrection }
        }
        prime(rate: rate, cents: cents)
    }

    /// What ``measureAlignment()`` depends on.
    private struct AlignmentKey: Hashable {
        let sampleRate: Double, channelCount: Int, options: UInt32, blockSize: Int, warmUpRate: Double, warmUpCents: Double
    }

    /// ``measureAlignment()``'s results so far: a property of librubberband and the settings,
    /// measured once per process (it cost 0.4 G instructions of a 0.6 s render). Control threads.
    private static let alignments = Mutex<[AlignmentKey: Int]>([:])

    /// The frames by which the output still lags after discarding rubberband's start delay, at
    /// rate 1 and no pitch shift: the warmed-up resampler's history buffer is longer than the
    /// one rubberband's `get_start_delay` assumes (127 frames at 48 kHz with librubberband
    /// 3.1.2). Found by passing an impulse (control thread: allocates nothing, may take long).
    private func measureAlignment() -> Int {
        alignmentCorrection = 0
        prime(rate: 1, cents: 0)
        let impulse = zeros.list.channel(0)
        impulse[0] = 1
        for c in 0..<channelCount { inputTable[c] = UnsafePointer(zeros.list.channel(c)) }
        rubberband_process(state, inputTable, UInt32(blockSize), 0)
        impulse[0] = 0
        collect()
        var blocks = 0
        while level < 8192 && blocks < 256 {
            rubberband_process(state, inputTable, UInt32(blockSize), 0)
            collect()
            blocks += 1
        }
        let y = fifo.list.channel(0)
        var peak = 0
        for i in 0..<level where abs(y[i]) > abs(y[peak]) { peak = i }
        return min(peak, 8192)
    }

    /// Runs rubberband through the extreme and awkward ratios once, on the control thread.
    ///
    /// Why: librubberband 3.1.2's built-in resampler (BQResampler, which R3 uses for pitch)
    /// grows two buffers when a pitch ratio needs more than they hold — its phase table (one entry
    /// per numerator of the ratio's rational approximation, denominators up to 192000) and its
    /// history buffer — and never shrinks them, not even on reset. Measured with
    /// CAllocationCounter: without this warm-up a pitch ramp allocates on the render thread
    /// (29 times in TimePitchRealTimeSafetyTests); with it, never. The ratios: ±2400 cents and
    /// values just inside (the largest numerators), at rates 32 and 1/32.
    private func warmUp(initialRate: Double, initialCents: Double) {
        for c in 0..<channelCount { inputTable[c] = UnsafePointer(zeros.list.channel(c)) }
        let extremes = [(32.0, 2400.0), (1.0 / 32, -2400.0), (1.0, 2399.999_7), (1.0, -2399.999_7),
                        (1.0, 2399.998_3), (1.0, -2399.998_3)]
        // R2's resampler changes ratio smoothly through a second phase table (its "fade"
        // state), so each extreme must reach both tables: R2 goes through the list twice.
        // R2 (whose pitch is fixed at initialize) also builds its tables for the initial ratios.
        let ratios = quality == .finer ? extremes : extremes + [(initialRate, initialCents)]
        for (rate, cents) in Array(repeating: ratios, count: warmUpPasses).joined() + [(1.0, 0.0)] {
            rubberband_set_time_ratio(state, timeRatio(rate: rate, cents: cents))
            rubberband_set_pitch_scale(state, Self.pitchScale(cents))
            // Blocks: 8 (R3, and R2 at the extreme rates); R2 at rate 1 needs more input before
            // its resampler runs, and costs little there (at rate 1/32 each block is 32 chunks).
            for _ in 0..<(rate == 1 ? warmUpBlocks : 8) {
                rubberband_process(state, inputTable, UInt32(blockSize), 0)
                while true {
                    let available = Int(rubberband_available(state))
                    guard available > 0 else { break }
                    for c in 0..<channelCount { outputTable[c] = discardScratch.list.channel(c) }
                    if rubberband_retrieve(state, outputTable, UInt32(min(available, blockSize))) == 0 { break }
                }
            }
        }
    }

    deinit {
        rubberband_delete(state)
        inputTable.deallocate()
        outputTable.deallocate()
    }

    @inline(__always)
    static func pitchScale(_ cents: Double) -> Double { pow(2, cents / 1200) }

    /// librubberband prints its warnings ("Ratio yields ideal inhop < minimum, results may be
    /// suspect", one per analysis frame of NaN input: 13,640 lines for 0.5 s) on standard error
    /// from the render thread, where nothing can capture them; below its level 0 it prints
    /// nothing. Set once, before the first stretcher is made (each takes the default level).
    private static let silenceLibraryLog: Void = rubberband_set_default_debug_level(-1)

    /// Rubberband's start delay at the current ratios: output frames discarded after priming.
    var startDelay: Int { Int(rubberband_get_start_delay(state)) }
    /// Rubberband's preferred start pad: zeros fed before the input when priming.
    var startPad: Int { Int(rubberband_get_preferred_start_pad(state)) }

    /// Sets the playback rate and the pitch shift in cents for the blocks fed from now on
    /// (rubberband is called only when a value changes). Real-time safe.
    @inline(__always)
    func setRatios(rate: Double, cents: Double) {
        guard rate != self.rate || cents != self.cents else { return }
        if cents != self.cents { rubberband_set_pitch_scale(state, Self.pitchScale(cents)) }
        self.rate = rate
        self.cents = cents
        let ratio = timeRatio(rate: rate, cents: cents)
        if ratio != currentTimeRatio {
            currentTimeRatio = ratio
            rubberband_set_time_ratio(state, ratio)
        }
    }

    /// Rubberband's time ratio for `rate` and `cents`: `1 / rate`, the rate limited to
    /// ``maximumRatePerPitchScale`` times the pitch scale.
    @inline(__always)
    func timeRatio(rate: Double, cents: Double) -> Double {
        1 / min(rate, maximumRatePerPitchScale * Self.pitchScale(cents))
    }

    /// Starts over: resets rubberband, sets the ratios, feeds the start pad and arms the
    /// discarding of the start delay; empties the FIFO. Real-time safe (measured).
    func prime(rate: Double, cents: Double) {
        rubberband_reset(state)
        self.rate = rate
        self.cents = cents
        currentTimeRatio = timeRatio(rate: rate, cents: cents)
        rubberband_set_time_ratio(state, currentTimeRatio)
        rubberband_set_pitch_scale(state, Self.pitchScale(cents))
        level = 0
        readIndex = 0
        framesFed = 0
        framesProduced = 0
        var pad = startPad
        discard = startDelay + alignmentCorrection
        for c in 0..<channelCount { inputTable[c] = UnsafePointer(zeros.list.channel(c)) }
        while pad > 0 {
            let n = min(pad, blockSize)
            rubberband_process(state, inputTable, UInt32(n), 0)
            collect()
            pad -= n
        }
    }

    /// Feeds `frameCount` (at most ``blockSize``) frames of `channels` (one pointer per channel,
    /// ``channelCount`` of them) and collects what rubberband outputs. Real-time safe.
    @inline(__always)
    func process(_ channels: UnsafePointer<UnsafePointer<Float>>, frameCount: Int) {
        for c in 0..<channelCount { inputTable[c] = channels[c] }
        rubberband_process(state, inputTable, UInt32(frameCount), 0)
        framesFed += Int64(frameCount)
        collect()
    }

    /// Moves what rubberband has ready into the FIFO (dropping the start delay first).
    @inline(__always)
    private func collect() {
        while true {
            let available = Int(rubberband_available(state))
            guard available > 0 else { return }
            if discard > 0 {
                let n = min(available, discard, blockSize)
                for c in 0..<channelCount { outputTable[c] = discardScratch.list.channel(c) }
                let got = Int(rubberband_retrieve(state, outputTable, UInt32(n)))
                discard -= got
                if got == 0 { return }
                continue
            }
            if readIndex > 0 && fifoCapacity - readIndex - level < available {
                // Move the backlog to the front (rare: once per FIFO's worth of output).
                for c in 0..<channelCount {
                    let f = fifo.list.channel(c)
                    UnsafeMutableRawPointer(f).copyMemory(from: f + readIndex, byteCount: level * MemoryLayout<Float>.stride)
                }
                readIndex = 0
            }
            let n = min(available, fifoCapacity - readIndex - level)
            guard n > 0 else { return }
            for c in 0..<channelCount { outputTable[c] = fifo.list.channel(c) + readIndex + level }
            let got = Int(rubberband_retrieve(state, outputTable, UInt32(n)))
            level += got
            framesProduced += Int64(got)
            if got == 0 { return }
        }
    }

    /// Moves `frameCount` frames (at most ``level``) of channel 0 from the FIFO to `destination`
    /// (a mono stretcher's output into one channel of a wider buffer). Real-time safe.
    @inline(__always)
    func read(channel0Into destination: UnsafeMutablePointer<Float>, frameCount n: Int) {
        destination.update(from: fifo.list.channel(0) + readIndex, count: n)
        level -= n
        readIndex = level == 0 ? 0 : readIndex + n
    }

    /// Moves `frameCount` frames (at most ``level``) from the FIFO to `output`'s channels from
    /// frame `offset` on (channels beyond ``channelCount`` are left alone). Real-time safe.
    @inline(__always)
    func read(into output: ChannelBufferList, at offset: Int = 0, frameCount n: Int) {
        for c in 0..<min(channelCount, output.channelCount) {
            (output.channel(c) + offset).update(from: fifo.list.channel(c) + readIndex, count: n)
        }
        level -= n
        readIndex = level == 0 ? 0 : readIndex + n
    }
}
