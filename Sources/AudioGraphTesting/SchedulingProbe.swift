// A real-time thread that measures how late the machine lets it wake up (stalls of the whole machine).
import AudioGraphRealtime
import AudioGraphCore
import Foundation
import Glibc
import Synchronization

/// Measures the machine's ability to run a real-time thread on time while a test runs.
///
/// A `SCHED_FIFO` thread (``priority``: above the engine's render thread, libpulse's and
/// PulseAudio's null-sink thread) sleeps `period` at a time and records how much later than asked
/// it woke up. It must outrank the engine: a probe below the render thread could be held off by
/// the engine itself, and the live tests would then blame the machine (and retry) for the engine's
/// own stall. It sleeps almost all the time, so it takes next to nothing from the threads it outranks. A real-time thread that wakes 10 ms late means the machine itself
/// stalled (on a virtual machine: the hypervisor ran another guest on this CPU), and every audio
/// thread on it was held off as long; no client can avoid an underrun when such a stall is longer
/// than its buffer. Live-performance tests use the probe to tell their own glitches from the
/// machine's: a run during which the probe saw a stall is repeated.
///
/// Without permission for real-time scheduling the thread runs at normal priority
/// (`isRealtime` false) and its lateness includes ordinary scheduling delays.
///
/// Thread safety: `start` and `stop` from one thread; the report is a value.
public final class SchedulingProbe: @unchecked Sendable {
    /// What one probe run saw.
    public struct Report: Sendable, CustomStringConvertible {
        /// How many times the thread woke.
        public var wakeups: Int
        /// The latest wake-up, seconds after the time asked for.
        public var maximumLateness: Double
        /// Wake-ups more than 2 ms, 5 ms and 10 ms late.
        public var lateOver2ms: Int, lateOver5ms: Int, lateOver10ms: Int
        /// True when the thread ran with `SCHED_FIFO`.
        public var isRealtime: Bool
        /// The wake-ups more than 5 ms late (at most the first 64): when (seconds after `start()`)
        /// and how late.
        public var stalls: [(at: Double, lateness: Double)]

        /// The stalls (wake-ups more than 5 ms late) between `from` and `to` seconds after `start()`.
        public func stalls(from: Double, to: Double) -> [(at: Double, lateness: Double)] {
            stalls.filter { $0.at >= from && $0.at <= to }
        }

        /// The reports of probes that ran side by side (on different CPUs) as one: counts added,
        /// the latest lateness, the stalls of all in time order.
        public static func merged(_ reports: [Report]) -> Report {
            Report(wakeups: reports.reduce(0) { $0 + $1.wakeups },
                   maximumLateness: reports.map(\.maximumLateness).max() ?? 0,
                   lateOver2ms: reports.reduce(0) { $0 + $1.lateOver2ms },
                   lateOver5ms: reports.reduce(0) { $0 + $1.lateOver5ms },
                   lateOver10ms: reports.reduce(0) { $0 + $1.lateOver10ms },
                   isRealtime: !reports.isEmpty && reports.allSatisfy(\.isRealtime),
                   stalls: reports.flatMap(\.stalls).sorted { $0.at < $1.at })
        }

        public var description: String {
            String(format: "%@probe: %d wake-ups, latest %.1f ms late (>2 ms: %d, >5 ms: %d, >10 ms: %d)%@",
                   isRealtime ? "real-time " : "time-sharing ", wakeups, maximumLateness * 1000, lateOver2ms, lateOver5ms,
                   lateOver10ms,
                   stalls.isEmpty ? "" : "; stalls at " + stalls.prefix(8).map {
                       String(format: "%.2f s (%.1f ms)", $0.at, $0.lateness * 1000) }.joined(separator: ", "))
        }
    }

    private let periodNanoseconds: Int
    private let running = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let stallRequest = Atomic<Int>(0)
    private let wakeups = Atomic<Int>(0)
    private let worst = Atomic<Int>(0)
    private let over2 = Atomic<Int>(0), over5 = Atomic<Int>(0), over10 = Atomic<Int>(0)
    private let realtime = Atomic<Bool>(false)
    private let grantedPriority = Atomic<Int>(0)
    private let ranOn = Atomic<Int>(-1)
    private let stallLog = ControlLock<[(at: Double, lateness: Double)]>([])
    private var startedAt = 0  // control thread; handed to the probe thread at start
    private var thread: Thread?

    /// The probe thread's `SCHED_FIFO` priority: 10 above the render threads' (``PosixThread/renderPriority``).
    public static let priority: Int32 = PosixThread.renderPriority + 10

    /// The scheduling policy and priority the probe thread ran with (`SCHED_OTHER` and 0 when it
    /// got no real-time policy); valid after `stop()`.
    public private(set) var threadPriority: Int32 = 0

    /// The CPU the thread is pinned to, or nil (the scheduler's choice).
    public let cpu: Int?

    /// A stopped probe that will wake every `period` seconds (1 ms by default), pinned to `cpu`
    /// when given: a probe sees only the stalls of the CPU it runs on, and a virtual machine's
    /// CPUs stall one at a time (see ``onEveryCPU(period:)``).
    public init(period: Double = 0.001, cpu: Int? = nil) {
        periodNanoseconds = max(100_000, Int(period * 1e9))
        self.cpu = cpu
        niceness = nil
    }

    /// A stopped probe whose thread keeps the normal (time-sharing) policy at nice level
    /// `niceness`, as PulseAudio's main thread runs (`--high-priority`: nice −11; it is never
    /// real-time, and every request and fragment of a client passes through it): it sees how long
    /// the machine's other normal-priority work holds such a thread off, which the real-time
    /// probe cannot see (a thread above every normal one). Not pinned.
    public init(period: Double = 0.001, niceness: Int32) {
        periodNanoseconds = max(100_000, Int(period * 1e9))
        cpu = nil
        self.niceness = niceness
    }

    /// PulseAudio's main thread's nice level with `--high-priority` (its default `nice-level`).
    public static let serverMainThreadNiceness: Int32 = -11

    /// The nice level of a time-sharing probe (nil: a real-time probe).
    public let niceness: Int32?

    /// One probe pinned to each CPU this process may run on.
    public static func onEveryCPU(period: Double = 0.001) -> [SchedulingProbe] {
        let cpus = CPUAffinity.allowed()
        return cpus.isEmpty ? [SchedulingProbe(period: period)] : cpus.map { SchedulingProbe(period: period, cpu: $0) }
    }

    /// The CPU the probe thread last ran on (valid after `stop()`), -1 when unknown.
    public private(set) var lastCPU = -1

    deinit { _ = stop() }

    /// Starts the probe thread (again from zero counts).
    public func start() {
        guard thread == nil else { return }
        wakeups.store(0, ordering: .relaxed)
        grantedPriority.store(0, ordering: .relaxed)
        worst.store(0, ordering: .relaxed)
        over2.store(0, ordering: .relaxed)
        over5.store(0, ordering: .relaxed)
        over10.store(0, ordering: .relaxed)
        stallLog.withLock { $0.removeAll() }
        startedAt = Self.now()
        finished.store(false, ordering: .relaxed)
        running.store(true, ordering: .releasing)
        let origin = startedAt
        let t = Thread { [self] in run(origin: origin) }
        t.name = "ag-probe"
        thread = t
        t.start()
    }

    /// Stops the thread and returns what it saw.
    @discardableResult
    public func stop() -> Report {
        if thread != nil {
            running.store(false, ordering: .releasing)
            while !finished.load(ordering: .acquiring) { usleep(1000) }
            thread = nil
        }
        threadPriority = Int32(grantedPriority.load(ordering: .relaxed))
        lastCPU = ranOn.load(ordering: .relaxed)
        return Report(wakeups: wakeups.load(ordering: .relaxed),
                      maximumLateness: Double(worst.load(ordering: .relaxed)) / 1e9,
                      lateOver2ms: over2.load(ordering: .relaxed), lateOver5ms: over5.load(ordering: .relaxed),
                      lateOver10ms: over10.load(ordering: .relaxed), isRealtime: realtime.load(ordering: .relaxed),
                      stalls: stallLog.withLock { $0 })
    }

    /// Tests of the probe only: the thread busy-waits `seconds` once before its next sleep, so
    /// that wake-up is late by `seconds` less the part of the period the busy stretch overlapped.
    public func testOnly_stall(seconds: Double) {
        stallRequest.store(Int(seconds * 1e9), ordering: .releasing)
    }

    private static func now() -> Int { Int(MonotonicClock.nanoseconds()) }

    private func run(origin: Int) {
        if let cpu { CPUAffinity.pinCallingThread(to: cpu) }
        PosixThread.nameCurrentThread("ag-probe")  // (Foundation's Thread.name does not reach the OS)
        if let niceness {
            // (On Linux, who 0 is the calling thread: nice levels are per thread.)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        } else {
            var param = sched_param()
            param.sched_priority = Self.priority
            realtime.store(pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0, ordering: .relaxed)
        }
        var policy: Int32 = 0
        var got = sched_param()
        if pthread_getschedparam(pthread_self(), &policy, &got) == 0 { grantedPriority.store(Int(got.sched_priority), ordering: .relaxed) }
        var due = Self.now() + periodNanoseconds
        while running.load(ordering: .acquiring) {
            let stall = stallRequest.exchange(0, ordering: .acquiring)
            if stall > 0 {
                let until = Self.now() + stall
                while Self.now() < until {}
            }
            var request = timespec(tv_sec: due / 1_000_000_000, tv_nsec: due % 1_000_000_000)
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
            let woke = Self.now()
            let late = max(0, woke - due)
            wakeups.wrappingAdd(1, ordering: .relaxed)
            if late > worst.load(ordering: .relaxed) { worst.store(late, ordering: .relaxed) }
            if late > 2_000_000 { over2.wrappingAdd(1, ordering: .relaxed) }
            if late > 5_000_000 {
                over5.wrappingAdd(1, ordering: .relaxed)
                let at = Double(woke - origin) / 1e9
                stallLog.withLock { if $0.count < 64 { $0.append((at: at, lateness: Double(late) / 1e9)) } }
            }
            if late > 10_000_000 { over10.wrappingAdd(1, ordering: .relaxed) }
            // The next wake-up is a period after this one (a stall is counted once, not as a backlog).
            due = woke + periodNanoseconds
        }
        ranOn.store(CPUAffinity.current(), ordering: .relaxed)
        finished.store(true, ordering: .releasing)
    }
}

/// The CPU-affinity calls, GNU extensions the Glibc module does not import (looked up by name).
enum CPUAffinity {
    private typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    private typealias GetCPU = @convention(c) () -> Int32

    /// The CPUs this thread may run on.
    static func allowed() -> [Int] {
        guard let symbol = dlsym(nil, "sched_getaffinity") else { return [] }
        var set = cpu_set_t()
        let ok = withUnsafeMutableBytes(of: &set) { unsafeBitCast(symbol, to: Affinity.self)(0, $0.count, $0.baseAddress!) == 0 }
        guard ok else { return [] }
        return withUnsafeBytes(of: &set) { bytes in (0..<(bytes.count * 8)).filter { bytes[$0 / 8] & (1 << ($0 % 8)) != 0 } }
    }

    /// Pins the calling thread to `cpu` (ignored when not allowed).
    static func pinCallingThread(to cpu: Int) {
        guard let symbol = dlsym(nil, "sched_setaffinity") else { return }
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { bytes in
            guard cpu >= 0, cpu < bytes.count * 8 else { return }
            bytes[cpu / 8] |= UInt8(1 << (cpu % 8))
            _ = unsafeBitCast(symbol, to: Affinity.self)(0, bytes.count, bytes.baseAddress!)
        }
    }

    /// The CPU the calling thread runs on, -1 when unknown.
    static func current() -> Int {
        guard let symbol = dlsym(nil, "sched_getcpu") else { return -1 }
        return Int(unsafeBitCast(symbol, to: GetCPU.self)())
    }
}
