// The counts of what an LV2 node kept from and out of its plugin (non-finite input, runaway output).
import AudioGraphCore
import Synchronization

/// What ``LV2Kernel`` contained, handed from the render thread to control threads: input
/// samples that were NaN or infinite (the plugin got silence instead — swh's bodeShifterCV
/// crashed the process on one NaN), pieces of plugin output that were non-finite or beyond
/// ±``LV2Node/outputLimit`` (silenced), and whether the plugin was muted for good after
/// ``muteAfterBadPieces`` such pieces in a row.
///
/// Thread safety: any thread; lock-free (relaxed: counters with nothing published through them).
final class LV2RenderFaults: Sendable {
    /// Output beyond this magnitude is taken as a plugin gone wrong (an unstable filter), not
    /// audio (``LV2Node/outputLimit``'s default).
    static let defaultOutputLimit: Float = 1000
    /// Consecutive bad output pieces after which the plugin stops running.
    static let muteAfterBadPieces = 8

    private let nonFiniteInput = Atomic<Int>(0)
    private let badOutputPieces = Atomic<Int>(0)
    private let muted = Atomic<Bool>(false)

    var nonFiniteInputSamples: Int { nonFiniteInput.load(ordering: .relaxed) }
    var badOutputPieceCount: Int { badOutputPieces.load(ordering: .relaxed) }
    var isMuted: Bool { muted.load(ordering: .relaxed) }

    /// Render thread: real-time safe.
    func countNonFiniteInput(_ n: Int) { if n > 0 { nonFiniteInput.wrappingAdd(n, ordering: .relaxed) } }
    func countBadOutputPiece() { badOutputPieces.wrappingAdd(1, ordering: .relaxed) }
    func mute() { muted.store(true, ordering: .relaxed) }

    /// One line, or nil when nothing was contained.
    func summary(uri: String, limit: Float) -> String? {
        let input = nonFiniteInputSamples, bad = badOutputPieceCount
        guard input > 0 || bad > 0 else { return nil }
        var parts: [String] = []
        if input > 0 { parts.append("\(input) non-finite input sample\(input == 1 ? "" : "s") replaced by silence") }
        if bad > 0 {
            parts.append("\(bad) block\(bad == 1 ? "" : "s") of non-finite or out-of-range output (beyond ±\(ParameterInfo.format(Double(limit)))) silenced")
        }
        if isMuted { parts.append("muted after \(Self.muteAfterBadPieces) bad blocks in a row") }
        return "plugin \(uri): " + parts.joined(separator: "; ")
    }
}
