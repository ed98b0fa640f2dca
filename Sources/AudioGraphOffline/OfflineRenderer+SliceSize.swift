// The slice size of an offline render when the caller gives none: large, since the output is bit-identical.
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

    /// The slice size of an offline render of `validated` when the caller gives none: the
    /// larger of the file's `maximumFramesPerSlice` and ``preferredSliceSize``, halved while
    /// the output buses' buffers (``MemoryBudget/sliceBytes(channels:frames:)`` summed over the
    /// initial graph's buses) would exceed ``sliceBufferBudget``, never below the file's value.
    public static func defaultSliceSize(for validated: ValidatedGraph) -> Int {
        let declared = validated.description.maximumFramesPerSlice
        let channels = validated.formats.nodes.values.reduce(0) { sum, node in
            node.outputs.reduce(sum) { $0 + max(1, $1.channels) }
        }
        var slice = max(declared, preferredSliceSize)
        while slice > declared && MemoryBudget.sliceBytes(channels: channels, frames: slice) > sliceBufferBudget {
            slice /= 2
        }
        return max(slice, declared)
    }
}
