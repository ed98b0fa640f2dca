// A one-line progress bar on standard error (terminals only).
import AudioGraphOffline

/// Draws `[#####.....]  42%` on standard error, redrawn in place.
package final class ProgressBar {
    package init() {}

    private let width = 40
    private var last = -1

    package func update(_ fraction: Double) {
        let percent = Int((fraction * 100).rounded(.down))
        guard percent != last else { return }
        last = percent
        let filled = Int(Double(width) * min(1, max(0, fraction)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        Diagnostics.writeToStandardError("\r[\(bar)] \(PrintfFormat.string("%3d", percent))%")
    }

    package func finish() {
        guard last >= 0 else { return }
        Diagnostics.writeToStandardError("\n")
        last = -1
    }
}
