// The worker extension: a plugin's run schedules work that a non-real-time thread does.
import AudioGraphRealtime
import CLilv
import Glibc
import Synchronization

/// One instance's `worker:schedule` feature and the thread that does its work.
///
/// `schedule_work` (called by the plugin inside `run`, on the render thread) copies the request
/// into a lock-free single-producer ring and makes no system call; the worker thread looks at the
/// ring every ``idlePollSeconds`` (as `CompletionNotifier` does), calls the plugin's `work` with each request, and `work`'s responses go into a second ring. After each
/// run the render thread calls ``deliverResponses()``, which hands every response to the plugin's
/// `work_response` and then calls `end_run`, as the worker spec asks. Rings hold
/// ``capacity`` bytes each; a request or response that does not fit is refused with
/// `LV2_WORKER_ERR_NO_SPACE` (the plugin is told, nothing blocks).
///
/// Thread safety: made and started on a control thread (``attach(instance:)`` after
/// instantiate); `schedule_work` and ``deliverResponses()`` on the render thread only
/// (real-time safe: ring copies only, no system call); `work` on the worker thread only; ``stop()``
/// (or deinit) on a control thread joins the worker.
final class LV2Worker: @unchecked Sendable {
    /// Bytes of each ring.
    static let capacity = 1 << 16
    /// How long the worker sleeps between looks at the request ring (the render thread makes no
    /// system call, so it does not wake the worker): work starts at most this late.
    static let idlePollSeconds = 0.001

    // MARK: Fixed at creation (handed to the plugin)
    /// The `worker:schedule` feature data.
    let scheduleFeature: UnsafeMutablePointer<LV2_Worker_Schedule>
    private let requests = LV2MessageRing(capacity: LV2Worker.capacity)
    private let responses = LV2MessageRing(capacity: LV2Worker.capacity)
    /// Posted only by ``stop()`` (ends the worker's idle wait early).
    private let wake: UnsafeMutablePointer<sem_t>

    // MARK: Set once by attach, before the first run
    private var interface: UnsafePointer<LV2_Worker_Interface>?
    private var handle: LV2_Handle?
    private var thread: PosixThread?

    // MARK: Worker thread only
    private let workScratch: UnsafeMutableRawPointer
    // MARK: Render thread only
    private let responseScratch: UnsafeMutableRawPointer

    // MARK: Shared (atomic)
    private let stopping = Atomic<Bool>(false)

    init() {
        scheduleFeature = .allocate(capacity: 1)
        wake = .allocate(capacity: 1)
        sem_init(wake, 0, 0)
        workScratch = .allocate(byteCount: LV2Worker.capacity, alignment: 8)
        responseScratch = .allocate(byteCount: LV2Worker.capacity, alignment: 8)
        scheduleFeature.initialize(to: LV2_Worker_Schedule(
            handle: Unmanaged.passUnretained(self).toOpaque(),
            schedule_work: { handle, size, data in
                let worker = Unmanaged<LV2Worker>.fromOpaque(handle!).takeUnretainedValue()
                return worker.requests.write(size: Int(size), data) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
            }))
    }

    deinit {
        stop()
        sem_destroy(wake)
        wake.deallocate()
        scheduleFeature.deallocate()
        workScratch.deallocate()
        responseScratch.deallocate()
    }

    /// What ``attach(interface:handle:)`` found.
    enum AttachResult: Equatable {
        case attached
        /// The plugin has no worker interface (it would never get its work done).
        case noInterface
        /// `pthread_create` failed with this error number.
        case threadNotCreated(Int32)
    }

    /// Reads the plugin's worker interface and starts the worker thread. Control thread, once,
    /// after instantiate. Anything but `.attached`: the caller refuses the plugin.
    func attach(interface: UnsafeRawPointer?, handle: LV2_Handle?) -> AttachResult {
        guard let interface else { return .noInterface }
        self.interface = interface.assumingMemoryBound(to: LV2_Worker_Interface.self)
        self.handle = handle
        // The thread holds the worker unowned: the worker's deinit stops and joins it.
        do throws(PosixThread.StartError) {
            thread = try PosixThread(name: "ag-lv2-worker") { [unowned(unsafe) self] in self.workLoop() }
        } catch {
            return .threadNotCreated(error.code)
        }
        return .attached
    }

    /// Stops and joins the worker thread (pending requests are dropped). Control thread.
    func stop() {
        guard let t = thread else { return }
        stopping.store(true, ordering: .releasing)
        sem_post(wake)
        t.join()
        thread = nil
    }

    /// Hands every response to the plugin's `work_response`, then calls `end_run`. Render
    /// thread, after each run; real-time safe.
    func deliverResponses() {
        guard let interface, let handle else { return }
        while let size = responses.read(into: responseScratch, capacity: LV2Worker.capacity) {
            _ = interface.pointee.work_response?(handle, UInt32(size), responseScratch)
        }
        _ = interface.pointee.end_run?(handle)
    }

    private func workLoop() {
        guard let interface, let handle else { return }
        let respondHandle = Unmanaged.passUnretained(self).toOpaque()
        while true {
            if stopping.load(ordering: .acquiring) { return }
            while let size = requests.read(into: workScratch, capacity: LV2Worker.capacity) {
                _ = interface.pointee.work?(handle, { respondHandle, size, data in
                    let worker = Unmanaged<LV2Worker>.fromOpaque(respondHandle!).takeUnretainedValue()
                    return worker.responses.write(size: Int(size), data) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
                }, respondHandle, UInt32(size), workScratch)
            }
            // Idle wait: up to idlePollSeconds, or until stop() posts.
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_nsec += Int(Self.idlePollSeconds * 1e9)
            if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
            _ = sem_timedwait(wake, &deadline)
        }
    }
}
