// A helper thread that runs a timePitch node's mono stretchers for channels 1... beside the render thread (offline file renders).
import AudioGraphCore
import AudioGraphRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the mono ``TimePitchStretcher``s of channels 1, 2, … of a `timePitch` node on a thread
/// of its own while the render thread runs channel 0's: the node's offline file renders use one
/// mono R3 stretcher per channel (see ``TimePitchNode``), so a stereo stretch takes two cores.
///
/// The hand-off: the render thread writes each input block (channels 1…) and its ratios into a
/// ring of ``capacity`` slots, advances the atomic count of blocks published and posts the
/// worker's semaphore; the worker (spinning briefly on `sem_trywait`, then sleeping in
/// `sem_wait`) feeds its stretchers the blocks in order. Whoever feeds holds the *baton* (an
/// atomic flag taken by compare-and-swap): in ``waitForAll()`` the render thread takes the baton
/// itself when the worker is not feeding (it has not woken yet, or the machine's other core is
/// busy) and feeds what is left, so the render never waits on a thread that is not running; it
/// waits (spinning, then yielding) only while the worker is in the middle of feeding. Every
/// block is fed exactly once, in order, by one thread at a time; the baton's acquire and release
/// order the stretchers' memory. The output is the same whoever feeds (and when the thread
/// cannot be started: then the render thread feeds every block as it is published).
///
/// The render thread *waits* for the worker: offline only (the node uses it only when it renders
/// a graph file offline, never live).
///
/// Thread safety: created and released on a control thread (release stops and joins the worker,
/// only when no render call is in progress). ``inputSlot(channel:)``, ``publish(rate:cents:prime:)``
/// and ``waitForAll()``: the render thread only. Allocates nothing and takes no lock after init.
final class ChannelStretchWorker: @unchecked Sendable {
    /// Mono stretchers, for channels 1, 2, … in order.
    let stretchers: [TimePitchStretcher]
    /// Blocks the ring holds: the most published and not yet fed.
    let capacity: Int
    let blockSize: Int
    private let shared: Shared
    private var thread: PosixThread?

    // MARK: Render thread only
    /// Blocks published.
    private var published = 0

    /// What the render thread and the worker share.
    private final class Shared: @unchecked Sendable {
        let stretchers: [TimePitchStretcher]
        let capacity: Int
        let blockSize: Int
        /// Channels 1… of each slot's block: slot `i` at frames `i * blockSize` of each channel.
        let blocks: ChannelBufferStorage
        let rates: UnsafeMutablePointer<Double>
        let cents: UnsafeMutablePointer<Double>
        let primes: UnsafeMutablePointer<Bool>
        /// One pointer per stretcher: its channel's block (the baton holder's).
        let tables: UnsafeMutablePointer<UnsafePointer<Float>>
        let work: UnsafeMutablePointer<sem_t>
        let stopRequested = Atomic<Bool>(false)
        /// Blocks published (the render thread writes), blocks fed (the baton holder writes).
        let published = Atomic<Int>(0)
        let fed = Atomic<Int>(0)
        /// Held by the thread feeding the stretchers.
        let baton = Atomic<Bool>(false)
        /// Blocks the worker thread fed (a diagnostic: proves it took part).
        let fedByWorker = Atomic<Int>(0)

        init(stretchers: [TimePitchStretcher], capacity: Int, blockSize: Int) {
            self.stretchers = stretchers
            self.capacity = capacity
            self.blockSize = blockSize
            blocks = ChannelBufferStorage(channelCount: max(1, stretchers.count), capacity: capacity * blockSize)
            rates = .allocate(capacity: capacity)
            rates.initialize(repeating: 1, count: capacity)
            cents = .allocate(capacity: capacity)
            cents.initialize(repeating: 0, count: capacity)
            primes = .allocate(capacity: capacity)
            primes.initialize(repeating: false, count: capacity)
            tables = .allocate(capacity: max(1, stretchers.count))
            for k in 0..<max(1, stretchers.count) { (tables + k).initialize(to: UnsafePointer(blocks.list.channel(k))) }
            work = .allocate(capacity: 1)
            sem_init(work, 0, 0)
        }

        deinit {
            rates.deallocate(); cents.deallocate(); primes.deallocate(); tables.deallocate()
            sem_destroy(work); work.deallocate()
        }

        /// Takes the baton when free and feeds every block published; false when another
        /// thread holds it.
        @inline(__always)
        func feedIfFree(byWorker: Bool) -> Bool {
            guard baton.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return false }
            var n = fed.load(ordering: .relaxed)
            while n < published.load(ordering: .acquiring) {
                let slot = n % capacity
                for k in 0..<stretchers.count {
                    let s = stretchers[k]
                    if primes[slot] { s.prime(rate: rates[slot], cents: cents[slot]) }
                    s.setRatios(rate: rates[slot], cents: cents[slot])
                    tables[k] = UnsafePointer(blocks.list.channel(k) + slot * blockSize)
                    s.process(tables + k, frameCount: blockSize)
                }
                n += 1
                fed.store(n, ordering: .releasing)
                if byWorker { fedByWorker.wrappingAdd(1, ordering: .relaxed) }
            }
            baton.store(false, ordering: .releasing)
            return true
        }
    }

    /// Iterations of `sem_trywait` before the worker sleeps on its semaphore (a few
    /// microseconds: the render thread never waits for a sleeping worker, it feeds the rest
    /// itself, so a short spin only saves the wake-up's system call when blocks come quickly).
    private static let spinIterations = 2000

    /// A worker for `stretchers` (channels 1… in order) fed blocks of `blockSize` frames, at most
    /// `capacity` published and not yet fed; starts its thread (control thread: allocates).
    init(stretchers: [TimePitchStretcher], blockSize: Int, capacity: Int) {
        self.stretchers = stretchers
        self.capacity = capacity
        self.blockSize = blockSize
        shared = Shared(stretchers: stretchers, capacity: capacity, blockSize: blockSize)
        let s = shared
        thread = try? PosixThread(name: "ag-timepitch") { ChannelStretchWorker.workerLoop(s) }
    }

    deinit {
        shared.stopRequested.store(true, ordering: .releasing)
        sem_post(shared.work)
        thread?.join()
    }

    /// Whether a thread of its own feeds the stretchers (false: the render thread does).
    var hasThread: Bool { thread != nil }

    /// Blocks the worker thread fed so far (the rest the render thread fed). Any thread.
    var blocksFedByWorker: Int { shared.fedByWorker.load(ordering: .relaxed) }

    /// Whether the ring is full: ``waitForAll()`` before the next ``publish(rate:cents:prime:)``.
    @inline(__always)
    var isFull: Bool { published - shared.fed.load(ordering: .acquiring) >= capacity }

    /// Where the next block's channel `1 + index` goes (``blockSize`` frames). Render thread.
    @inline(__always)
    func inputSlot(channel index: Int) -> UnsafeMutablePointer<Float> {
        shared.blocks.list.channel(index) + (published % capacity) * blockSize
    }

    /// Hands the block written through ``inputSlot(channel:)`` to the stretchers at these
    /// ratios (`prime`: start them over first). Render thread; not when ``isFull``.
    @inline(__always)
    func publish(rate: Double, cents: Double, prime: Bool) {
        let slot = published % capacity
        shared.rates[slot] = rate
        shared.cents[slot] = cents
        shared.primes[slot] = prime
        published += 1
        shared.published.store(published, ordering: .releasing)
        if thread == nil {
            _ = shared.feedIfFree(byWorker: false)
            return
        }
        sem_post(shared.work)
    }

    /// Returns when the stretchers have taken every block published, feeding them itself when
    /// the worker is not. Render thread (may wait while the worker feeds: offline only).
    @inline(__always)
    func waitForAll() {
        var spins = 0
        while shared.fed.load(ordering: .acquiring) < published {
            if shared.feedIfFree(byWorker: false) { continue }
            spins += 1
            if spins >= 1000 {
                sched_yield()
                spins = 0
            }
        }
    }

    private static func workerLoop(_ s: Shared) {
        RenderThreadMark.markCurrentThread(true)
        while true {
            var spins = 0
            while sem_trywait(s.work) != 0 {
                spins += 1
                if spins >= spinIterations {
                    while sem_wait(s.work) != 0 {}
                    break
                }
            }
            if s.stopRequested.load(ordering: .acquiring) { break }
            _ = s.feedIfFree(byWorker: true)
        }
        RenderThreadMark.markCurrentThread(false)
    }
}
