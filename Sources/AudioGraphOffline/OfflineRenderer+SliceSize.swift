// The slice size of an offline render when the caller gives none: large (1024 frames for a short render), since the output is bit-identical.
import AudioGraphNodes

extension OfflineRenderer {
    /// The frames per render call an offline render aims for when no slice size is given.
    /// An offline render is bit-identical for every slice size (updates, ramps and automation
    /// are sample-exact), and large slices cut the per-slice overhead (plan hand-off, parameter
    /// ramps, worker wake-ups, file writes): 4096 measured best on the B-cases
    /// (Docs/Performance.md); larger ones gained nothing.
    public static let preferredSliceSize = 4096

    /// The most the output buses' slice buffers of the default slice size may take together:
    /// 64 MiB, or a sixteenth of ``MemoryBudget/limit`` on a smaller machine. A graph with many
    /// nodes gets a smaller slice (never smaller than its file's) instead of being refused.
    public static var sliceBufferBudget: Int64 { min(64 << 20, MemoryBudget.limit / 16) }

    /// The slice size of a short render (fewer than ``shortRenderFrames`` frames) when the caller
    /// gives none. Every slice buffer is touched in full by the first slice, and a page touched
    /// first costs a page fault (zeroed by the kernel): 4096-frame buffers cost a 0.1 s stereo
    /// oscillator render about 40 more faults than 1024-frame ones, 6% of its whole-process CPU
    /// time, while its five slices of 1024 add less than the faults take (Docs/Performance.md
    /// "Start-up"). A long render amortises the faults and keeps ``preferredSliceSize``.
    public static let shortRenderSliceSize = 1024

    /// Renders shorter than this many frames (16 slices of ``preferredSliceSize``: 1.4 s at
    /// 48 kHz) default to ``shortRenderSliceSize``.
    public static let shortRenderFrames: Int64 = 16 * 4096

    /// The slice size of an offline render of `validated` when the caller gives none: the
    /// larger of the file's `maximumFramesPerSlice` and ``preferredSliceSize`` (or
    /// ``shortRenderSliceSize`` when the render is known to last fewer than
    /// ``shortRenderFrames`` frames), halved while the output buses' buffers
    /// (``MemoryBudget/sliceBytes(channels:frames:)`` summed over the initial graph's buses)
    /// would exceed ``sliceBufferBudget``, never below the file's value.
    ///
    /// - Parameter frames: the length of the render (its frames at the graph's rate, roughly: the
    ///   slice size changes only the time it takes, never the output), or nil when not known.
    public static func defaultSliceSize(for validated: ValidatedGraph, frames: Int64? = nil) -> Int {
        let declared = validated.description.maximumFramesPerSlice
        let channels = validated.formats.nodes.values.reduce(0) { sum, node in
            node.outputs.reduce(sum) { $0 + max(1, $1.channels) }
        }
        let isShort = frames.map { $0 < shortRenderFrames } ?? false
        var slice = max(declared, isShort ? shortRenderSliceSize : preferredSliceSize)
        while slice > declared && MemoryBudget.sliceBytes(channels: channels, frames: slice) > sliceBufferBudget {
            slice /= 2
        }
        return max(slice, declared)
    }
}
