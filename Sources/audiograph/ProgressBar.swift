// A one-line progress bar on standard error (terminals only).
import Foundation

/// Draws `[#####.....]  42%` on standard error, redrawn in place.
final class ProgressBar {
    private let width = 40
    private var last = -1

    func update(_ fraction: Double) {
        let percent = Int((fraction * 100).rounded(.down))
        guard percent != last else { return }
        last = percent
        let filled = Int(Double(width) * min(1, max(0, fraction)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(String(format: "%3d", percent))%".utf8))
    }

    func finish() {
        guard last >= 0 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
        last = -1
    }
}
