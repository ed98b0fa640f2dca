// A disk-reader thread that streams a player's output sequence from a sound file into a lock-free ring.
import AudioGraphRealtime
import Glibc
import Synchronization

/// Streams the frames a ``PlayerNode`` plays from its file into a ``StreamRing`` on a thread of
/// its own, so that a long file never has to be decoded into memory (cf. the disk streaming of
/// JUCE's `BufferingAudioSource`, made lock-free for the render side).
///
/// The ring holds the player's *stream*: stream position `q` (0 = the first frame of the
/// segment, counted on the player's own timeline) is file frame `segment.start + q`, or
/// `segment.start + q % segment.length` when looping — the reader wraps by itself. The render
/// thread (the consumer) asks for a position with ``acquire(position:segment:version:)``: when
/// the ring does not hold it (a `startTime`, `segment` or `loop` change, or a first slice after
/// a jump) the consumer posts a *seek request* — a generation counter plus a request slot, all
/// atomics — and gets nothing until the reader has answered (the player outputs silence and
/// counts the frames meanwhile). Between requests the reader keeps the ring topped up.
///
/// Offline rendering never waits for the reader thread: ``enterSynchronousMode()`` (on the
/// offline control thread, between two renders) stops the reader thread for good, and from then
/// on the consumer is also the producer: ``acquire(position:segment:version:wanted:)`` reads the
/// frames it lacks from the file itself, on the calling thread, continuing where the last read
/// ended (whole chunks, never more than the ring has room for), so no file region is read twice
/// unless the stream seeks back. The stream is bit-identical to decoding the file into memory.
///
/// Thread safety:
/// - `init` and ``stop()`` on a control thread (`stop` joins the reader; `deinit` of the owner
///   must call it). The reader thread runs at normal priority.
/// - The consumer API (``acquire(position:segment:version:wanted:)``, ``headIndex`` with the
///   ring's ``StreamRing/copy(channel:from:count:into:gains:gain:)``, ``consume(_:)``) is for one thread at a time, the render thread. It is real-time safe (no
///   allocation, no lock, no I/O, no waiting) until ``enterSynchronousMode()``; afterwards
///   `acquire` reads the file (offline rendering only).
/// - ``enterSynchronousMode()`` joins the reader thread: a control thread, while no render runs.
final class FileStreamer: @unchecked Sendable {
    /// What the stream plays: file frames `start..<start + length`, once or looping.
    struct Segment: Equatable, Sendable {
        var start: Int64
        var length: Int64
        var loop: Bool
    }

    /// Counters the control side reads (shared by every kernel of one node).
    final class Counters: Sendable {
        /// Frames the render thread needed that were not in the ring (output as silence).
        let starvedFrames = Atomic<Int64>(0)
        /// Reads or seeks that failed, or came back short, on the disk thread (output as silence).
        let readFailures = Atomic<Int64>(0)
        init() {}
    }

    /// Frames read from the file per disk access.
    static let chunkFrames = 8192
    /// How long the idle reader sleeps before looking for work again.
    static let idlePollSeconds = 0.005

    let ring: StreamRing
    let counters: Counters

    // MARK: Shared (atomic)
    /// The consumer's latest seek request (0: the initial stream, no request).
    private let requestGeneration = Atomic<UInt64>(0)
    /// Request slots, written before the generation that names them: position, start, length, loop.
    private let requestSlots: UnsafeMutablePointer<Atomic<Int64>>
    private static let slotCount = 8
    /// The request the ring's newest frames answer, and the ring index where its frames begin.
    private let dataGeneration = Atomic<UInt64>(0)
    private let dataStartIndex = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    /// Test hook: microseconds the reader sleeps before each disk read (a slow disk).
    let testOnly_readDelayMicroseconds = Atomic<Int>(0)
    /// Test hook: file frames read so far (every read, on either thread).
    let testOnly_framesRead = Atomic<Int64>(0)

    // MARK: Consumer only (render thread, or the offline control thread between renders)
    private var readIndex = 0
    /// The stream position at `readIndex` (or the one requested while `waiting`).
    private var headPosition: Int64 = 0
    private var headVersion: UInt64
    private var waiting = false
    private var requestedGeneration: UInt64 = 0
    /// Set by ``enterSynchronousMode()``: the consumer reads the file itself (no reader thread).
    private(set) var isSynchronous = false
    /// In synchronous mode: the ring's contents do not answer `headPosition` yet (a seek the
    /// reader thread had not taken when it stopped).
    private var synchronousSeekPending = false

    // MARK: Reader thread only (the control thread in init, before the thread exists)
    private let file: SeekableAudioFileReader
    private let scratch: UnsafeMutablePointer<Float>
    private var readerGeneration: UInt64 = 0
    private var readerPosition: Int64 = 0
    private var readerSegment: Segment
    private var readerEnded = false

    // MARK: Control thread only
    private var thread: PosixThread?
    private let wake = WakeSemaphore()

    /// Opens `path`, fills the ring from stream position 0 of `segment` (here, on the calling
    /// control thread) and starts the reader thread.
    /// - Parameter capacity: the ring's minimum size in frames.
    init(path: String, segment: Segment, version: UInt64, capacity: Int, counters: Counters) throws(AudioFileError) {
        file = try SeekableAudioFileReader(path: path)
        self.counters = counters
        ring = StreamRing(channelCount: file.info.channels, minimumCapacity: max(capacity, 4 * Self.chunkFrames))
        scratch = .allocate(capacity: Self.chunkFrames * ring.channelCount)
        scratch.initialize(repeating: 0, count: Self.chunkFrames * ring.channelCount)
        requestSlots = .allocate(capacity: 4 * Self.slotCount)
        for i in 0..<(4 * Self.slotCount) { (requestSlots + i).initialize(to: Atomic<Int64>(0)) }
        readerSegment = segment
        headVersion = version
        while fillOneChunk() {}
        do throws(PosixThread.StartError) {
            thread = try PosixThread(name: Self.threadName) { [self] in runReader() }
        } catch {
            throw .ioFailed(path: path, reason: "cannot start the disk reader thread (error \(error.code))")
        }
    }

    /// The name of every disk-reader thread (what `ps -L` and /proc/self/task/N/comm show).
    package static let threadName = "ag-disk-reader"

    deinit {
        stop()
        scratch.deallocate()
        requestSlots.deinitialize(count: 4 * Self.slotCount)
        requestSlots.deallocate()
    }

    /// Stops the reader thread and waits for it to end. Control thread; idempotent.
    func stop() {
        guard let t = thread else { return }
        thread = nil
        stopRequested.store(true, ordering: .releasing)
        wake.post()
        t.join()
    }

    // MARK: Consumer API (real-time safe)

    /// Makes the ring's head stream position `position` of `segment` (as of `version`, which
    /// changes whenever `segment` does) and returns how many frames from there are in the ring
    /// now (0 while a seek is on its way). Frames before `position` are discarded.
    ///
    /// In synchronous mode (offline), first reads the file until `wanted` frames from
    /// `position` are there (or the stream has ended); there is never a seek on the way.
    @inline(__always)
    func acquire(position: Int64, segment: Segment, version: UInt64, wanted: Int = 0) -> Int {
        if isSynchronous { return acquireSynchronously(position: position, segment: segment, version: version, wanted: wanted) }
        if waiting && dataGeneration.load(ordering: .acquiring) == requestedGeneration {
            readIndex = dataStartIndex.load(ordering: .relaxed)
            ring.releaseFrames(upTo: readIndex)
            waiting = false
        }
        if version != headVersion || position < headPosition || position - headPosition > Int64(ring.capacity) {
            requestSeek(position: position, segment: segment, version: version)
            return 0
        }
        if waiting { return 0 }
        var available = ring.writtenIndex - readIndex
        if position > headPosition {
            let skip = Int(min(Int64(available), position - headPosition))
            readIndex += skip
            headPosition += Int64(skip)
            available -= skip
            ring.releaseFrames(upTo: readIndex)
            if headPosition != position { return 0 }
        }
        return available
    }

    /// The ring index of the head: frames `headIndex..<headIndex + n` are the `n` frames
    /// ``acquire(position:segment:version:wanted:)`` returned (read it once per slice and copy
    /// from ``ring``, whose storage is immutable: no per-sample access to this object's state).
    @inline(__always)
    var headIndex: Int { readIndex }

    /// Moves the head `frameCount` frames on (at most what `acquire` returned) and gives them back.
    @inline(__always)
    func consume(_ frameCount: Int) {
        readIndex += frameCount
        headPosition += Int64(frameCount)
        ring.releaseFrames(upTo: readIndex)
    }

    /// ``acquire(position:segment:version:wanted:)`` without a reader thread: a seek is taken at
    /// once, and missing frames are read here.
    private func acquireSynchronously(position: Int64, segment: Segment, version: UInt64, wanted: Int) -> Int {
        var available = ring.writtenIndex - readIndex
        if synchronousSeekPending || version != headVersion || position < headPosition
            || position - headPosition > Int64(available) {
            // Nothing buffered is of use: restart the stream at `position` (the ring is emptied).
            synchronousSeekPending = false
            readerPosition = position
            readerSegment = segment
            readerEnded = false
            readIndex = ring.producerWriteIndex
            ring.releaseFrames(upTo: readIndex)
            headPosition = position
            headVersion = version
            available = 0
        } else if position > headPosition {
            let skip = Int(position - headPosition)
            readIndex += skip
            headPosition = position
            available -= skip
            ring.releaseFrames(upTo: readIndex)
        }
        while available < wanted && fillOneChunk(partial: true) {
            available = ring.writtenIndex - readIndex
        }
        return available
    }

    /// Stops the reader thread for good; from now on ``acquire(position:segment:version:wanted:)``
    /// reads the file itself, so an offline render never waits for another thread. Call on the
    /// thread that renders, while no render runs. Idempotent.
    func enterSynchronousMode() {
        guard !isSynchronous else { return }
        stop()
        if waiting {
            if dataGeneration.load(ordering: .acquiring) == requestedGeneration {
                // The reader took the last request: the ring holds its answer from dataStartIndex.
                readIndex = dataStartIndex.load(ordering: .relaxed)
                ring.releaseFrames(upTo: readIndex)
            } else {
                synchronousSeekPending = true
            }
            waiting = false
        }
        isSynchronous = true
    }

    private func requestSeek(position: Int64, segment: Segment, version: UInt64) {
        requestedGeneration &+= 1
        let slot = requestSlots + Int(requestedGeneration % UInt64(Self.slotCount)) * 4
        slot[0].store(position, ordering: .releasing)
        slot[1].store(segment.start, ordering: .releasing)
        slot[2].store(segment.length, ordering: .releasing)
        slot[3].store(segment.loop ? 1 : 0, ordering: .releasing)
        requestGeneration.store(requestedGeneration, ordering: .releasing)
        waiting = true
        headPosition = position
        headVersion = version
    }

    // MARK: Reader thread

    private func runReader() {
        while !stopRequested.load(ordering: .acquiring) {
            if takeRequest() { continue }
            if fillOneChunk() { continue }
            wake.wait(timeout: Self.idlePollSeconds)
        }
    }

    /// Adopts the consumer's newest seek request, if any. Returns whether there was one.
    private func takeRequest() -> Bool {
        var generation = requestGeneration.load(ordering: .acquiring)
        guard generation != readerGeneration else { return false }
        var position: Int64, start: Int64, length: Int64, loop: Int64
        while true {
            let slot = requestSlots + Int(generation % UInt64(Self.slotCount)) * 4
            position = slot[0].load(ordering: .acquiring)
            start = slot[1].load(ordering: .acquiring)
            length = slot[2].load(ordering: .acquiring)
            loop = slot[3].load(ordering: .acquiring)
            // A slot is rewritten only `slotCount` requests later: if the generation has not
            // moved, the fields belong to it (see the release/acquire pairs above).
            let again = requestGeneration.load(ordering: .acquiring)
            if again == generation { break }
            generation = again
        }
        readerGeneration = generation
        readerPosition = position
        readerSegment = Segment(start: start, length: length, loop: loop != 0)
        readerEnded = false
        dataStartIndex.store(ring.producerWriteIndex, ordering: .relaxed)
        dataGeneration.store(generation, ordering: .releasing)
        return true
    }

    /// Reads one chunk of the stream into the ring if there is room for it (with `partial`: as
    /// much of a chunk as there is room for). Returns whether it did (false: the ring is full or
    /// the stream has ended).
    private func fillOneChunk(partial: Bool = false) -> Bool {
        let segment = readerSegment
        if readerEnded || segment.length <= 0 { return false }
        let remaining = segment.loop ? Int64.max : segment.length - readerPosition
        if remaining <= 0 {
            readerEnded = true
                return false
        }
        let free = ring.freeFrames
        var wanted = Int(min(Int64(Self.chunkFrames), remaining))
        if partial { wanted = min(wanted, free) }
        guard wanted > 0, free >= wanted else { return false }
        let offset = segment.loop ? readerPosition % segment.length : readerPosition
        let count = Int(min(Int64(wanted), segment.length - offset))
        let delay = testOnly_readDelayMicroseconds.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay)) }
        let start = segment.start + offset
        let got: Int
        if ring.channelCount == 1 {
            // Mono: libsndfile reads straight into the ring (no copy through `scratch`); a short
            // read's rest is zeroed by the ring.
            got = ring.writeMono(frameCount: count) { run, frames, at in
                file.read(into: run, atFrame: start + Int64(at), frameCount: frames)
            }
        } else {
            got = file.read(into: scratch, atFrame: start, frameCount: count)
            if got < count {
                let from = max(0, got) * ring.channelCount
                (scratch + from).update(repeating: 0, count: count * ring.channelCount - from)
            }
            ring.write(interleaved: scratch, frameCount: count)
        }
        testOnly_framesRead.add(Int64(count), ordering: .relaxed)
        // A failed or short read (a damaged or truncated file): silence, counted.
        if got < count { counters.readFailures.add(1, ordering: .relaxed) }
        readerPosition += Int64(count)
        return true
    }
}
