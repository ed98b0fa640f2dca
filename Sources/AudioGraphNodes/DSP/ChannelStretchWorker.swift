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
/// ring of ``capacity`` slots and posts the `work` semaphore once per block; the worker takes the
/// blocks in order (spinning briefly on `sem_trywait`, then sleeping in `sem_wait`), feeds its
/// stretchers, and posts `done` once per block. Before reading the stretchers' output the render
/// thread waits for every block it published (``waitForAll()``). POSIX semaphores order memory:
/// the worker sees the block written before its post, the render thread sees the stretchers'
/// output written before the worker's. The output is the same as feeding the stretchers on the
/// render thread (which is what happens when the thread cannot be started).
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
    /// Blocks the ring holds: more than the render thread publishes between two waits.
    let capacity: Int
    let blockSize: Int
    private let shared: Shared
    private var thread: PosixThread?

    // MARK: Render thread only
    /// Blocks published, and blocks published but not yet waited for.
    private var published = 0
    private var outstanding = 0

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
        /// One pointer per stretcher: its channel's block (the worker's).
        let tables: UnsafeMutablePointer<UnsafePointer<Float>>
        let work: UnsafeMutablePointer<sem_t>
        let done: UnsafeMutablePointer<sem_t>
        let stopRequested = Atomic<Bool>(false)
        /// Blocks the worker took (the worker's).
        var consumed = 0

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
            done = .allocate(capacity: 1)
            sem_init(done, 0, 0)
        }

        deinit {
            rates.deallocate(); cents.deallocate(); primes.deallocate(); tables.deallocate()
            sem_destroy(work); work.deallocate()
            sem_destroy(done); done.deallocate()
        }

        /// Feeds the stretchers the next slot's block (worker, or the render thread without one).
        @inline(__always)
        func consume() {
            let slot = consumed % capacity
            for k in 0..<stretchers.count {
                let s = stretchers[k]
                if primes[slot] { s.prime(rate: rates[slot], cents: cents[slot]) }
                s.setRatios(rate: rates[slot], cents: cents[slot])
                tables[k] = UnsafePointer(blocks.list.channel(k) + slot * blockSize)
                s.process(tables + k, frameCount: blockSize)
            }
            consumed += 1
        }
    }

    /// Iterations of the spin before a thread sleeps on its semaphore: about the time one block
    /// takes (a few hundred microseconds), as the two sides hand over once per block and waking
    /// a sleeping thread costs tens of microseconds.
    private static let spinIterations = 50_000

    /// A worker for `stretchers` (channels 1… in order) fed blocks of `blockSize` frames, at most
    /// `capacity` between two waits; starts its thread (control thread: allocates). Without a
    /// thread (it could not be started) the blocks are fed on the render thread as published.
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

    /// Whether the ring is full: ``waitForAll()`` before the next ``publish(rate:cents:prime:)``.
    @inline(__always)
    var isFull: Bool { outstanding >= capacity }

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
        if thread == nil {
            shared.consume()
            return
        }
        outstanding += 1
        sem_post(shared.work)
    }

    /// Returns when the stretchers have taken every block published. Render thread (waits: offline only).
    @inline(__always)
    func waitForAll() {
        while outstanding > 0 {
            var spins = 0
            while sem_trywait(shared.done) != 0 {
                spins += 1
                if spins >= Self.spinIterations {
                    while sem_wait(shared.done) != 0 {}
                    break
                }
            }
            outstanding -= 1
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
            s.consume()
            sem_post(s.done)
        }
        RenderThreadMark.markCurrentThread(false)
    }
}
