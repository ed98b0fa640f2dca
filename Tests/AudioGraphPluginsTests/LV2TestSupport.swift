// Helpers for the LV2 tests: a graph of nodes ending in a generic output, rendered offline.
import AudioGraphCore
import AudioGraphNodes
import AudioGraphTesting
import Foundation

/// Builds and starts a graph of `nodes` plus a generic output "out", wired by `chain` (ids in
/// order, each feeding the next, ending at "out").
func startedChain(_ nodes: [GraphNode], _ chain: [String], sampleRate: Double = 48000, slice: Int = 256) throws -> AudioGraph {
    try startedGraph(nodes, (chain + ["out"]).joined(separator: " -> "), sampleRate: sampleRate, slice: slice)
}

/// The swh plugins the tests use (Debian's swh-lv2).
enum SWH {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let stereoToMidSide = "http://plugin.org.uk/swh-plugins/matrixStMS"
    static let artificialLatency = "http://plugin.org.uk/swh-plugins/artificialLatency"
}
