// A lock-free single-producer single-consumer ring of size-prefixed byte messages (worker requests and responses).
import Synchronization

/// A ring of whole messages (a 4-byte length, then the bytes) between one writer thread and one
/// reader thread.
///
/// Thread safety: `write` from one thread, `read` from one other thread; both lock-free,
/// allocation-free and wait-free (real-time safe). The writer publishes with a releasing store
/// of `tail`, the reader frees room with a releasing store of `head`.
final class LV2MessageRing: @unchecked Sendable {
    private let bytes: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    // MARK: Shared (atomic): monotonically increasing byte counts
    private let head = Atomic<Int>(0)  // read so far (reader)
    private let tail = Atomic<Int>(0)  // written so far (writer)

    init(capacity: Int) {
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
        bytes.initialize(repeating: 0, count: capacity)
    }

    deinit { bytes.deallocate() }

    /// Appends one message of `size` bytes from `data`; false (nothing written) when it does not fit.
    func write(size: Int, _ data: UnsafeRawPointer?) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        guard size >= 0, 4 + size <= capacity - (t - h) else { return false }
        var header = UInt32(size)
        withUnsafeBytes(of: &header) { copyIn($0.baseAddress!, count: 4, at: t) }
        if size > 0, let data { copyIn(data, count: size, at: t + 4) }
        tail.store(t + 4 + size, ordering: .releasing)
        return true
    }

    /// Takes the oldest message into `destination` (room for `capacity` bytes) and returns its
    /// size; nil when the ring is empty. A message larger than `capacity` is dropped (size 0).
    func read(into destination: UnsafeMutableRawPointer, capacity room: Int) -> Int? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        guard t - h >= 4 else { return nil }
        var header: UInt32 = 0
        withUnsafeMutableBytes(of: &header) { copyOut($0.baseAddress!, count: 4, at: h) }
        let size = Int(header)
        let fits = size <= room
        if fits { copyOut(destination, count: size, at: h + 4) }
        head.store(h + 4 + size, ordering: .releasing)
        return fits ? size : 0
    }

    /// Copies `count` bytes into the ring at byte `position` (mod capacity): at most two copies,
    /// split where the ring wraps.
    private func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
        let start = position % capacity
        let first = min(count, capacity - start)
        UnsafeMutableRawPointer(bytes + start).copyMemory(from: source, byteCount: first)
        if count > first { UnsafeMutableRawPointer(bytes).copyMemory(from: source + first, byteCount: count - first) }
    }

    /// Copies `count` bytes out of the ring from byte `position` (mod capacity), as `copyIn`.
    private func copyOut(_ destination: UnsafeMutableRawPointer, count: Int, at position: Int) {
        let start = position % capacity
        let first = min(count, capacity - start)
        destination.copyMemory(from: bytes + start, byteCount: first)
        if count > first { (destination + first).copyMemory(from: bytes, byteCount: count - first) }
    }
}
