// The pitch shift of timePitch's `fastest` mode: WSOLA's output resampled by the pitch ratio with libsamplerate (SoX's `pitch`).
import AudioGraphCore
import CSampleRate
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Shifts the pitch of a ``WSOLAStretcher``'s output the way SoX's `pitch` effect does (its
/// `tempo` followed by its `rate`): for a playback rate `r` and a pitch ratio `p = 2^(cents/1200)`
/// the stretcher runs at tempo `r / p` (the input lasts `p / r` times as long, pitch kept) and its
/// output is resampled by `1 / p` (played `p` times as fast: `p` times the frequencies, `1 / p`
/// of the length), so the input plays at `r` with its pitch times `p`.
///
/// Resampler: libsamplerate's `SRC_SINC_FASTEST` (`src_process`, interleaved floats), the
/// library the converter node already loads lazily. Its ratio may change between calls, which is
/// all a pitch read once per block needs (``blockSize`` output frames); it is set as a step
/// (`src_set_ratio`, no glide within a call), the phase stays continuous. libsamplerate never
/// allocates while converting (libsoxr grows its buffers during its first blocks and has no
/// such guarantee in its variable-rate mode), so every buffer here is sized at init for the
/// worst ratio (±2400 cents: ``maximumPitchRatio``).
///
/// At a ratio of 1 the caller does not use it at all (the stretcher's output is the node's,
/// sample for sample): it starts shifting when the pitch first leaves 0 (``start(cents:)``) and
/// keeps resampling until the next ``prime()`` (at ratio 1: transparent within libsamplerate's
/// passband). Started in the middle of a signal, the resampler's history is the last
/// ``historyFrames`` frames the node played (``remember(_:at:frameCount:)``): it converts them
/// again and drops the output frames that belong to them, so the join has no dip; the first
/// shifted frame lies less than one output frame after where it belongs.
///
/// Determinism: the output is made in blocks of ``blockSize`` frames into a FIFO, the
/// stretcher's output fed in pieces of ``feedFrames``: it depends on the parameters given per
/// block, never on the render slices.
///
/// Thread safety: created and released on a control thread (allocates); every other member on
/// the render thread only (one thread at a time), real-time safe (no allocation, no lock;
/// TimePitchRealTimeSafetyTests).
final class WSOLAPitchShifter: @unchecked Sendable {
    /// Output frames per block: the pitch (and the stretcher's rate) is read once per block.
    static let blockSize = 256
    /// Stretcher frames handed to libsamplerate per feed.
    static let feedFrames = 256
    /// Frames of the node's recent output kept as the resampler's history when it starts
    /// (libsamplerate's fastest sinc reaches about 20 frames each side at ratio 1, 4 times that
    /// at 1/4).
    static let historyFrames = 256
    /// The largest pitch ratio either way: ±2400 cents.
    static let maximumPitchRatio = 4.0

    // MARK: Immutable after init
    let channelCount: Int
    private let state: OpaquePointer
    /// Interleaved stretcher output not yet taken by libsamplerate (``feedFrames`` frames, or
    /// the history when it starts).
    private let pending: UnsafeMutablePointer<Float>
    /// Interleaved output of one block.
    private let block: UnsafeMutablePointer<Float>
    /// Shifted output waiting to be read: room for one read and one block.
    private let fifo: PlanarFIFO
    /// The node's last ``historyFrames`` output frames (per channel, oldest first) while not shifting.
    private let history: ChannelBufferStorage

    // MARK: Render thread only
    private var pendingStart = 0
    private var pendingCount = 0
    /// Frames waiting in the FIFO.
    var level: Int { fifo.level }
    /// Whether the output is resampled (from ``start(cents:)`` to the next ``prime()``).
    private(set) var isShifting = false
    /// libsamplerate's ratio (output / input = 1 / pitch ratio) last set.
    private var ratio = 1.0
    /// Output frames still to drop: those of the history converted at the start.
    private var discard = 0
    /// The history holds nothing but silence (nothing remembered since the last prime at the start).
    private var historyIsSilent = true

    /// A shifter for `channelCount` channels whose reads ask for at most `maximumOutputPerRead`
    /// frames. Control thread: allocates; throws when libsamplerate refuses (the caller checked
    /// that the library loads: ``TimePitchNode`` requires it).
    init(nodeID: String, channelCount: Int, maximumOutputPerRead: Int) throws(AudioGraphError) {
        self.channelCount = max(1, channelCount)
        var error: Int32 = 0
        guard let s = src_new(Int32(SRC_SINC_FASTEST), Int32(self.channelCount), &error) else {
            throw .nodeSetupFailed(node: nodeID, reason: "libsamplerate: \(String(cString: src_strerror(error)))")
        }
        state = s
        let feed = max(Self.feedFrames, Self.historyFrames) * self.channelCount
        pending = .allocate(capacity: feed)
        pending.initialize(repeating: 0, count: feed)
        block = .allocate(capacity: Self.blockSize * self.channelCount)
        block.initialize(repeating: 0, count: Self.blockSize * self.channelCount)
        fifo = PlanarFIFO(channelCount: self.channelCount, capacity: max(1, maximumOutputPerRead) + Self.blockSize)
        history = ChannelBufferStorage(channelCount: self.channelCount, capacity: Self.historyFrames)
    }

    deinit {
        src_delete(state)
        pending.deallocate()
        block.deallocate()
    }

    /// The pitch ratio of `cents` (clamped to ±2400; NaN reads as 0).
    @inline(__always)
    static func pitchRatio(cents: Double) -> Double {
        cents.isNaN ? 1 : exp2(min(max(cents, -2400), 2400) / 1200)
    }

    /// Stops shifting and forgets everything (the FIFO, the resampler); `silentHistory`: the
    /// history is silence (the node starts over at its beginning). Real-time safe.
    func prime(silentHistory: Bool) {
        isShifting = false
        fifo.removeAll()
        pendingStart = 0
        pendingCount = 0
        discard = 0
        if silentHistory {
            historyIsSilent = true
            for c in 0..<channelCount { history.list.channel(c).update(repeating: 0, count: Self.historyFrames) }
        }
    }

    /// Keeps the last frames of the node's output (`frameCount` frames of `output` from
    /// `offset`) while not shifting, as the resampler's history for ``start(cents:)``. Real-time safe.
    @inline(__always)
    func remember(_ output: ChannelBufferList, at offset: Int, frameCount n: Int) {
        guard n > 0 else { return }
        historyIsSilent = false
        let h = Self.historyFrames
        for c in 0..<channelCount {
            let x = output.channel(min(c, output.channelCount - 1)) + offset
            let y = history.list.channel(c)
            if n >= h {
                y.update(from: x + (n - h), count: h)
            } else {
                UnsafeMutableRawPointer(y).copyMemory(from: y + n, byteCount: (h - n) * MemoryLayout<Float>.stride)
                (y + h - n).update(from: x, count: n)
            }
        }
    }

    /// Starts shifting at `cents` (the FIFO empty): the resampler starts over with the history
    /// (or, at the node's start, with none: output frame 0 is then the stretcher's frame 0).
    /// Real-time safe.
    func start(cents: Double) {
        isShifting = true
        fifo.removeAll()
        src_reset(state)
        ratio = 1 / Self.pitchRatio(cents: cents)
        src_set_ratio(state, ratio)
        pendingStart = 0
        if historyIsSilent {
            pendingCount = 0
            discard = 0
        } else {
            // Convert the history again and drop its output frames: those at history positions
            // j / ratio < historyFrames.
            let h = Self.historyFrames
            for c in 0..<channelCount {
                let x = history.list.channel(c)
                for i in 0..<h { pending[i &* channelCount &+ c] = x[i] }
            }
            pendingCount = h
            discard = Int((Double(h) * ratio - 1e-9).rounded(.up))
        }
    }

    /// Makes one block (``blockSize`` frames) at `cents` and appends it to the FIFO, `source`
    /// filling `count` interleaved frames of the stretcher's output (at its tempo `r / p`, which
    /// the caller sets) whenever the resampler needs more. Real-time safe when `source` is.
    func makeBlock(cents: Double, source: (_ interleaved: UnsafeMutablePointer<Float>, _ count: Int) -> Void) {
        let r = 1 / Self.pitchRatio(cents: cents)
        if r != ratio { ratio = r; src_set_ratio(state, r) }
        let b = Self.blockSize
        var produced = 0
        var stalls = 0
        while produced < b {
            if pendingCount == 0 {
                source(pending, Self.feedFrames)
                pendingStart = 0
                pendingCount = Self.feedFrames
            }
            let want = discard > 0 ? min(discard, b - produced) : b - produced
            var data = SRC_DATA()
            data.data_in = UnsafePointer(pending + pendingStart * channelCount)
            data.input_frames = pendingCount
            data.data_out = block + produced * channelCount
            data.output_frames = want
            data.end_of_input = 0
            data.src_ratio = ratio
            if src_process(state, &data) != 0 { break }
            pendingStart += data.input_frames_used
            pendingCount -= data.input_frames_used
            let got = data.output_frames_gen
            if discard > 0 { discard -= got } else { produced += got }
            // libsamplerate always takes input or gives output; never spin if it did neither.
            if got == 0 && data.input_frames_used == 0 { stalls += 1; if stalls > 2 { break } } else { stalls = 0 }
        }
        if produced < b { (block + produced * channelCount).update(repeating: 0, count: (b - produced) * channelCount) }
        let w = fifo.reserve(b)
        for c in 0..<channelCount {
            let y = fifo.channel(c) + w
            let x = block + c
            for i in 0..<b { y[i] = x[i &* channelCount] }
        }
        fifo.didAppend(b)
    }

    /// Moves `frameCount` frames (at most ``level``) from the FIFO to `output`'s channels from
    /// frame `offset` on. Real-time safe.
    @inline(__always)
    func read(into output: ChannelBufferList, at offset: Int, frameCount n: Int) {
        fifo.read(into: output, at: offset, frameCount: n)
    }
}
