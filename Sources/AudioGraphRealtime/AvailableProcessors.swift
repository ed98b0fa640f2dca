// How many processors this process may use, asked without Foundation (the command line's start-up).
#if canImport(Glibc)
import Glibc
import CGlibcShim
#elseif canImport(Darwin)
import Darwin
#endif

/// The number of processors the process may run on, as Foundation's
/// `ProcessInfo.activeProcessorCount` and SwiftNIO's `System.coreCount` count them on Linux: a
/// cgroup CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), rounded up,
/// when one is set, capped by the CPUs of the scheduler affinity mask (`taskset`, cpusets), or
/// the online CPUs when the mask cannot be read. At least 1.
///
/// Asked with a few system calls and small `/sys` reads, without Foundation's `ProcessInfo`
/// (whose first use costs the command line about 0.1 ms of its start-up).
///
/// Thread safety: stateless; any control thread.
package enum AvailableProcessors {
    /// The count (see the type's description), read anew on each call.
    package static var count: Int {
        let cpus = affinityCount ?? onlineCount
        guard let quota = cgroupQuota else { return cpus }
        return max(1, min(cpus, quota))
    }

    /// The CPUs of the scheduler affinity mask (`sched_getaffinity`, as `nproc` counts them), or
    /// nil when it cannot be read.
    static var affinityCount: Int? {
        #if os(Linux)
        let n = Int(ag_affinity_cpu_count())
        return n > 0 ? n : nil
        #else
        return nil
        #endif
    }

    /// The online CPUs (`sysconf`), at least 1.
    static var onlineCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The CPU quota of the process's cgroup in whole CPUs (rounded up), or nil when none is set.
    static var cgroupQuota: Int? {
        #if os(Linux)
        // cgroup v2: "0::/path" in /proc/self/cgroup; the quota file is the group's cpu.max
        // ("max 100000" when unlimited, "150000 100000" for 1.5 CPUs). Inside a container the
        // group is the root of its namespace.
        if let groups = text("/proc/self/cgroup") {
            for line in groups.split(separator: "\n") where line.hasPrefix("0::") {
                let path = String(line.dropFirst(3))
                let own = "/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max"
                for file in own == "/sys/fs/cgroup/cpu.max" ? [own] : [own, "/sys/fs/cgroup/cpu.max"] {
                    if let max = text(file) {
                        let fields = max.split(whereSeparator: { $0 == " " || $0 == "\n" })
                        guard fields.count >= 2, let quota = Int(fields[0]), let period = Int(fields[1]) else { return nil }
                        return cpus(quota: quota, period: period)
                    }
                }
            }
        }
        // cgroup v1.
        if let q = text("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), let p = text("/sys/fs/cgroup/cpu/cpu.cfs_period_us"),
           let quota = Int(q.filter { $0 != "\n" }), let period = Int(p.filter { $0 != "\n" }) {
            return cpus(quota: quota, period: period)
        }
        #endif
        return nil
    }

    /// Whole CPUs of `quota` µs per `period` µs, rounded up; nil for no quota (−1 or 0).
    static func cpus(quota: Int, period: Int) -> Int? {
        guard quota > 0, period > 0 else { return nil }
        return (quota + period - 1) / period
    }

    /// A small /proc or /sys file's text (read to its end: such files report no size), or nil.
    private static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                     UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while bytes.count < 1 << 16 {
            let got = withUnsafeMutableBytes(of: &chunk) { buffer -> Int in
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n > 0 { bytes.append(contentsOf: buffer.prefix(n)) }
                return n
            }
            if got > 0 { continue }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { return nil }
            break
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
