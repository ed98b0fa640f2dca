// How many processors this process may use, asked without Foundation (the command line's start-up).
#if canImport(Glibc)
import Glibc
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

    /// The CPUs of the affinity mask (`Cpus_allowed_list` of /proc/self/status, as
    /// `sched_getaffinity` gives it: "0-3,6"), or nil when it cannot be read.
    static var affinityCount: Int? {
        guard let status = text("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            return cpuListCount(line.dropFirst("Cpus_allowed_list:".count))
        }
        return nil
    }

    /// The CPUs a kernel CPU list names ("0-3,6" is 5), or nil when it is not one.
    static func cpuListCount(_ list: Substring) -> Int? {
        var n = 0
        for range in list.split(separator: ",") {
            let bounds = range.split(separator: "-").map { Int($0.filter { $0 != " " && $0 != "\t" }) }
            switch bounds.count {
            case 1: guard bounds[0] != nil else { return nil }; n += 1
            case 2: guard let a = bounds[0], let b = bounds[1], b >= a else { return nil }; n += b - a + 1
            default: return nil
            }
        }
        return n > 0 ? n : nil
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
                for file in ["/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max", "/sys/fs/cgroup/cpu.max"] {
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

    /// A small text file's contents, or nil.
    private static func text(_ path: String) -> String? {
        guard let bytes = try? FileSystemPath.contentsOfRegularFile(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
