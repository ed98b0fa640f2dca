// A live tap on a node's output bus: render-side copy into a lock-free ring, delivery of exact-size buffers.
import AudioGraphRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A tap on one output bus of a node that hands what the bus renders to a Swift closure on a
/// non-real-time thread, in buffers of exactly ``bufferSize`` frames (cf. AVAudioEngine's
/// `installTap(onBus:bufferSize:format:block:)`, minus its approximate buffer size).
///
/// Install it with ``AudioGraph/installTap(_:onNode:)``; remove it with
/// ``AudioGraph/removeTap(onNode:bus:)``. Both work on an open, initialized or running graph
/// without stopping it: the node's kernel receives its new tap set through the render-plan
/// hand-off.
///
/// **Mechanism.** The ring holds ``bufferCount`` slots of ``bufferSize`` frames each (allocated
/// here, on the control thread). Each time the node's kernel renders (once per slice, or several
/// times per slice on its own timeline behind a rate-converting input) the render thread copies
/// the bus's frames into the slot being filled; when a slot holds ``bufferSize`` frames it is
/// published (a releasing store of the slot count). When a new slot is to be started and every
/// slot is still waiting for delivery, the render thread drops that whole buffer instead: it
/// copies nothing until the next buffer boundary and counts one dropped buffer and its frames.
/// It never waits and never wakes anyone. The consumer (the delivery thread, or the driver of a
/// manual render calling ``deliverPending()``) hands each published slot to the block directly
/// (no copy: the slot *is* the delivered buffer), then gives it back to the producer. When the
/// tap has been removed and the render thread has adopted the plan that removed it, the
/// consumer delivers the last, partial buffer (if any) and the tap is finished.
///
/// Each delivered buffer carries the sample time of its first frame, on the node's own timeline
/// (the kernel's render context: the graph's frames, or the source's frames behind a rate
/// converter), and the host time (CLOCK_MONOTONIC, nanoseconds) read on the render thread when
/// that frame was recorded. The frames of a buffer are the bus's renders in order; a node that is
/// not pulled for a while (disconnected) leaves no frames, so only the first frame's time is exact
/// after such a gap.
///
/// Thread safety: create on a control thread. The render-side `record` runs on the render
/// thread only (real-time safe: no allocation, no lock, no wait, no system call besides the vDSO
/// clock). ``deliverPending()``, ``waitUntilFinished(timeout:)`` and the counters may be called
/// from any non-real-time thread; consumers are serialised by a mutex the render thread never
/// touches, so the block never runs twice at once. The block may install and remove taps
/// (delivery never holds the graph's mutex) but must not deliver its own tap again
/// (``deliverPending()`` or `deliverPendingTaps()` from inside the block would deadlock).
public final class LiveTap: @unchecked Sendable {
    /// What a tap delivers: the frames (a view valid only during the call; `channelCount`
    /// channels of `frameCount` frames, channel `c` at `buffer.channel(c)`), the frame count
    /// (``bufferSize``, or less for the final buffer), the sample time of the first frame on the
    /// node's timeline, and the host time in nanoseconds (CLOCK_MONOTONIC) when it was rendered.
    public typealias Block = @Sendable (_ buffer: ChannelBufferList, _ frameCount: Int, _ sampleTime: Int64,
                                        _ hostTime: UInt64) -> Void

    /// Who calls the block.
    public enum Delivery: Sendable, Equatable {
        /// A delivery thread of this tap (normal priority, started when the tap is installed,
        /// polling the ring every ``pollInterval`` seconds). For live rendering.
        case thread
        /// Whoever drives the render calls ``deliverPending()`` (or
        /// ``AudioGraph/deliverPendingTaps()``) between render calls, on its own thread. With the
        /// default capacity nothing is dropped when it drains after every render call, so the
        /// taps' output equals the render bit for bit. For manual (offline) rendering.
        case manual
    }

    /// The output bus tapped.
    public let bus: Int
    /// Channels of each delivered buffer (the bus's channel count; a bus with fewer channels
    /// leaves the rest zero, one with more is cut).
    public let channelCount: Int
    /// The bus's sample rate (checked at installation; sets the polling period).
    public let sampleRate: Double
    /// Frames of every delivered buffer but a final partial one.
    public let bufferSize: Int
    /// Slots of the ring (each ``bufferSize`` frames).
    package let bufferCount: Int
    /// How the block is called.
    public let delivery: Delivery
    /// Seconds between two looks at the ring by the delivery thread: a quarter of a buffer's
    /// duration at `sampleRate`, between 1 ms and 20 ms.
    public let pollInterval: Double

    private let block: Block
    /// Slot `s`, channel `c` starts at `storage + (s * channelCount + c) * bufferSize`.
    private let storage: UnsafeMutablePointer<Float>
    private let slotSampleTimes: UnsafeMutablePointer<Int64>
    private let slotHostTimes: UnsafeMutablePointer<UInt64>

    // MARK: Shared (atomic)
    /// Slots the producer has filled and published since the tap was made (releasing store).
    private let publishedSlots = Atomic<Int>(0)
    /// Slots the consumer has delivered and given back (releasing store).
    private let consumedSlots = Atomic<Int>(0)
    /// Set by whoever runs the plan command that removed the tap (the render thread, or the
    /// control thread when the graph is not running): the producer state below is final.
    private let detachedFlag = Atomic<Bool>(false)
    /// Set once the final buffer has been delivered (or there was none).
    private let finishedFlag = Atomic<Bool>(false)
    /// Set while the tap is installed on a graph (once per tap).
    let installedFlag = Atomic<Bool>(false)
    private let delivered = Atomic<Int>(0)
    private let droppedBuffers = Atomic<Int>(0)
    private let droppedFrames = Atomic<Int>(0)
    private let deliveredFrames = Atomic<Int>(0)

    // MARK: Render thread only (read by the consumer only after `detachedFlag`, acquiring)
    /// Slots the producer has published (the slot being filled is `producerSlot % bufferCount`).
    private var producerSlot = 0
    /// Frames in the slot being filled (0: the next frame starts a new buffer).
    private var producerFill = 0
    /// Whether the current buffer is being dropped.
    private var producerDropping = false

    // MARK: Consumer (guarded by `consumer`; never touched by the render thread)
    private let consumer = ControlLock<Void>(())

    /// - Parameters:
    ///   - bus: the output bus to tap.
    ///   - channelCount: channels of the bus (its format's channel count).
    ///   - sampleRate: the bus's rate (sets the delivery thread's polling period only).
    ///   - bufferSize: frames per delivered buffer; 0 means `maximumFramesPerSlice`.
    ///   - maximumFramesPerSlice: the graph's largest slice.
    ///   - minimumCapacity: frames the ring holds at least. The default,
    ///     ``defaultCapacity(bufferSize:maximumFramesPerSlice:rateRatio:)`` at a ratio of 1, lets a
    ///     manual driver drain once per render call, even for a node rendering several times per
    ///     slice behind a rate converter, and a delivery thread sleep a poll period without loss.
    ///     For a bus faster than the graph pass that function's value at its ratio (as
    ///     ``AudioGraph/installTap(onNode:bus:bufferSize:format:delivery:block:)`` does).
    ///   - delivery: who calls `block`.
    ///   - block: receives every buffer, in order (see ``Block``).
    public init(bus: Int, channelCount: Int, sampleRate: Double, bufferSize: Int, maximumFramesPerSlice: Int,
                minimumCapacity: Int? = nil, delivery: Delivery = .thread, block: @escaping Block) {
        precondition(bus >= 0 && channelCount >= 1 && bufferSize >= 0 && maximumFramesPerSlice >= 1 && sampleRate > 0)
        self.bus = bus
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize == 0 ? maximumFramesPerSlice : bufferSize
        let frames = minimumCapacity ?? Self.defaultCapacity(bufferSize: self.bufferSize,
                                                             maximumFramesPerSlice: maximumFramesPerSlice, rateRatio: 1)
        bufferCount = max(2, (frames + self.bufferSize - 1) / self.bufferSize)
        self.delivery = delivery
        self.block = block
        pollInterval = min(0.02, max(0.001, Double(self.bufferSize) / sampleRate / 4))
        let samples = bufferCount * channelCount * self.bufferSize
        storage = .allocate(capacity: samples)
        storage.initialize(repeating: 0, count: samples)
        slotSampleTimes = .allocate(capacity: bufferCount)
        slotSampleTimes.initialize(repeating: 0, count: bufferCount)
        slotHostTimes = .allocate(capacity: bufferCount)
        slotHostTimes.initialize(repeating: 0, count: bufferCount)
    }

    /// The ring size (frames) that holds four buffers or sixteen slices' worth of the bus's
    /// frames, whichever is more, plus one buffer — `rateRatio` is the bus's rate over the
    /// graph's (how many of its frames a graph frame costs, behind a rate converter), plus one
    /// converter block (4096 frames) when it is not 1.
    package static func defaultCapacity(bufferSize: Int, maximumFramesPerSlice: Int, rateRatio: Double) -> Int {
        let size = bufferSize == 0 ? maximumFramesPerSlice : bufferSize
        let slices = Int((16 * Double(maximumFramesPerSlice) * max(1, rateRatio)).rounded(.up))
        return max(4 * size, slices) + size + (rateRatio == 1 ? 0 : 4096)
    }

    deinit {
        storage.deallocate()
        slotSampleTimes.deallocate()
        slotHostTimes.deallocate()
    }

    // MARK: Counters (any thread)

    /// Buffers handed to the block so far (the final partial one included).
    public var deliveredBufferCount: Int { delivered.load(ordering: .relaxed) }
    /// Frames handed to the block so far.
    public var deliveredFrameCount: Int { deliveredFrames.load(ordering: .relaxed) }
    /// Buffers the render thread dropped because every slot was still waiting for delivery (a
    /// slow block, or a manual driver that did not drain).
    public var droppedBufferCount: Int { droppedBuffers.load(ordering: .relaxed) }
    /// Frames of the dropped buffers.
    public var droppedFrameCount: Int { droppedFrames.load(ordering: .relaxed) }
    /// Whether the tap was removed, the render thread has let go of it and its last buffer was
    /// delivered. Nothing more will reach the block.
    public var isFinished: Bool { finishedFlag.load(ordering: .acquiring) }
    /// Whether the render thread has let go of the tap (removed, plan adopted).
    package var isDetached: Bool { detachedFlag.load(ordering: .acquiring) }

    // MARK: Render side

    /// Copies `frameCount` frames of `buffer` rendered at `sampleTime` (the node's timeline).
    /// Render thread only. Real-time safe. Called by the graph for installed taps, and by a node
    /// that owns a tap it never installs (the recorder).
    @inline(__always)
    package func record(_ buffer: ChannelBufferList, frameCount: Int, sampleTime: Int64) {
        var done = 0
        let size = bufferSize
        while done < frameCount {
            if producerFill == 0 {
                let slot = producerSlot
                producerDropping = slot - consumedSlots.load(ordering: .acquiring) >= bufferCount
                if producerDropping {
                    droppedBuffers.wrappingAdd(1, ordering: .relaxed)
                } else {
                    let s = slot % bufferCount
                    slotSampleTimes[s] = sampleTime + Int64(done)
                    slotHostTimes[s] = Self.hostTimeNow()
                }
            }
            let n = min(size - producerFill, frameCount - done)
            if producerDropping {
                droppedFrames.wrappingAdd(n, ordering: .relaxed)
            } else {
                let slotBase = storage + (producerSlot % bufferCount) * channelCount * size + producerFill
                let common = min(channelCount, buffer.channelCount)
                var c = 0
                while c < common {
                    (slotBase + c * size).update(from: buffer.channel(c) + done, count: n)
                    c += 1
                }
                while c < channelCount {
                    (slotBase + c * size).update(repeating: 0, count: n)
                    c += 1
                }
            }
            producerFill += n
            done += n
            if producerFill == size {
                // A dropped buffer gives its slot to the next one.
                producerFill = 0
                if !producerDropping {
                    producerSlot += 1
                    publishedSlots.store(producerSlot, ordering: .releasing)
                }
            }
        }
    }

    /// Marks the producer side final (the plan that removed the tap has been adopted). Called by
    /// whoever runs plan commands (or, for a tap a node owns and never installs, by the control
    /// thread once the render thread no longer renders that node). Real-time safe.
    package func markDetached() {
        detachedFlag.store(true, ordering: .releasing)
    }

    /// The current host time in nanoseconds (CLOCK_MONOTONIC). Real-time safe (vDSO).
    @inline(__always)
    static func hostTimeNow() -> UInt64 { UInt64(MonotonicClock.nanoseconds()) }

    // MARK: Consumer side

    /// Delivers every complete buffer waiting in the ring, in order, on the calling thread; once
    /// the tap is removed and the render thread has let go of it, also the final partial buffer
    /// (and the tap is finished). Returns the number of buffers delivered.
    ///
    /// For ``Delivery/manual`` taps the thread driving the render calls it between render calls
    /// (after each one, to lose nothing); it may also be called for a ``Delivery/thread`` tap
    /// (delivery is serialised either way). Never call it on the render thread: the block runs
    /// here. Blocks only on another consumer delivering at the same time.
    @discardableResult
    public func deliverPending() -> Int {
        consumer.withLock { _ in
            if finishedFlag.load(ordering: .relaxed) { return 0 }
            // Read `detached` first: if set, everything the producer ever wrote is visible.
            let detached = detachedFlag.load(ordering: .acquiring)
            var count = 0
            var next = consumedSlots.load(ordering: .relaxed)
            let end = publishedSlots.load(ordering: .acquiring)
            while next < end {
                let s = next % bufferCount
                deliver(slot: s, frames: bufferSize)
                next += 1
                consumedSlots.store(next, ordering: .releasing)
                count += 1
            }
            if detached {
                if producerFill > 0 && !producerDropping {
                    deliver(slot: producerSlot % bufferCount, frames: producerFill)
                    count += 1
                }
                finishedFlag.store(true, ordering: .releasing)
            }
            return count
        }
    }

    private func deliver(slot s: Int, frames: Int) {
        let view = ChannelBufferList(channelCount: channelCount, capacity: bufferSize,
                                     base: storage + s * channelCount * bufferSize)
        block(view, frames, slotSampleTimes[s], slotHostTimes[s])
        delivered.wrappingAdd(1, ordering: .relaxed)
        deliveredFrames.wrappingAdd(frames, ordering: .relaxed)
    }

    /// Waits (polling every millisecond) until the tap is finished: removed, let go of by the
    /// render thread, and its last buffer delivered. Returns whether it finished within `timeout`
    /// seconds. Control thread; never the render thread, and for a ``Delivery/manual`` tap only
    /// when another thread renders and delivers.
    @discardableResult
    public func waitUntilFinished(timeout: Double) -> Bool {
        let deadline = Self.hostTimeNow() + UInt64(max(0, timeout) * 1e9)
        while !isFinished {
            if Self.hostTimeNow() >= deadline { return false }
            var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&ts, nil)
        }
        return true
    }

    /// Starts the delivery thread (``Delivery/thread`` taps, at installation, or by the node that
    /// owns the tap). Control thread.
    package func startDelivery() throws(AudioGraphError) {
        guard delivery == .thread else { return }
        try TapDeliveryThread.start(for: self)
    }
}
