// Counting this process's threads, waiting for threads that are still exiting to be gone.
import Foundation

/// This process's threads, from `/proc/self/task`.
///
/// Threads other tests stopped a moment ago may still be exiting; `settle` waits for the count
/// to reach the expected value (or gives up after `timeout`) so thread-leak checks do not flake.
/// Thread safety: stateless; call from any thread.
public enum ProcessThreads {
    /// The number of threads now (-1 when /proc is not readable).
    public static var count: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    /// The number of threads now named `name` (/proc/self/task/N/comm; names are at most 15 bytes).
    public static func count(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .newlines) == name
        }.count
    }

    /// Polls every 5 ms until the number of threads named `name` equals `expected`, for at most
    /// `timeout` seconds; returns the last count seen.
    public static func settle(named name: String, at expected: Int, timeout: Double = 2) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var now = count(named: name)
        while now != expected && Date() < deadline {
            usleep(5_000)
            now = count(named: name)
        }
        return now
    }

    /// Polls every 5 ms until the count equals `expected`, for at most `timeout` seconds; returns
    /// the last count seen.
    public static func settle(at expected: Int, timeout: Double = 2) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var now = count
        while now != expected && Date() < deadline {
            usleep(5_000)
            now = count
        }
        return now
    }
}
