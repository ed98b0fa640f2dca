// Reading play's commands from standard input in bounded lines into a bounded queue.
import AudioGraphRealtime
import AudioGraphCommandLine
import AudioGraphKit
import Foundation
import Synchronization

/// Reads standard input on its own thread and hands complete lines to the control loop.
///
/// Memory stays bounded whatever arrives: a line longer than ``maximumLineLength`` bytes is
/// dropped (reported once by the control loop), and at most ``maximumQueuedLines`` lines wait;
/// when the queue is full the reader stops reading until the loop takes lines (standard input
/// then backs up in the pipe). `play < /dev/zero` therefore costs no memory.
///
/// Thread safety: the reader thread appends, the control thread takes; both under one `ControlLock`.
final class CommandLineReader: Sendable {
    /// The longest command line accepted, bytes.
    static let maximumLineLength = 4096
    /// The most lines waiting for the control loop.
    static let maximumQueuedLines = 256

    private struct State {
        var lines: [String] = []
        var droppedLongLines = 0
    }
    private let state = ControlLock(State())
    /// Posted when lines arrive (wakes the control loop early).
    let arrived = DispatchSemaphore(value: 0)
    /// Posted when the control loop took lines (wakes a reader waiting on a full queue).
    private let taken = DispatchSemaphore(value: 0)

    /// Starts the reader thread on file descriptor `fd`.
    func start(fd: Int32 = 0) {
        let thread = Thread { [self] in self.run(fd: fd) }
        thread.start()
    }

    /// The next waiting line, if any.
    func next() -> String? {
        let line = state.withLock { s -> String? in s.lines.isEmpty ? nil : s.lines.removeFirst() }
        if line != nil { taken.signal() }
        return line
    }

    /// How many over-long lines were dropped since the last call.
    func takeDroppedCount() -> Int {
        state.withLock { s in defer { s.droppedLongLines = 0 }; return s.droppedLongLines }
    }

    private func run(fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var line: [UInt8] = []
        line.reserveCapacity(Self.maximumLineLength)
        var tooLong = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            for byte in buffer[0..<n] {
                if byte == 0x0A {
                    if tooLong {
                        state.withLock { $0.droppedLongLines += 1 }
                        arrived.signal()
                    } else {
                        enqueue(String(decoding: line, as: UTF8.self))
                    }
                    line.removeAll(keepingCapacity: true)
                    tooLong = false
                } else if !tooLong {
                    if line.count < Self.maximumLineLength { line.append(byte) } else {
                        tooLong = true
                        line.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if !line.isEmpty && !tooLong { enqueue(String(decoding: line, as: UTF8.self)) }
        if tooLong { state.withLock { $0.droppedLongLines += 1 } }
        arrived.signal()
    }

    private func enqueue(_ line: String) {
        while true {
            let added = state.withLock { s -> Bool in
                guard s.lines.count < Self.maximumQueuedLines else { return false }
                s.lines.append(line)
                return true
            }
            if added { break }
            _ = taken.wait(timeout: .now() + .milliseconds(50))
        }
        arrived.signal()
    }
}
