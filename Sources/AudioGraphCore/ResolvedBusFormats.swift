// Every node's bus formats after the engine's format propagation (AudioGraph's resolve step).

/// The formats ``AudioGraph``'s resolve step (and ``AudioGraph/initialize()``) works out: per
/// node id, what reaches each input bus and what each output bus produces. Package access: apps
/// see formats as the engine API's `AudioFormat`; the graph-file validator and `inspect` read
/// these.
///
/// Thread safety: a value type; safe to share between threads.
package struct ResolvedBusFormats: Sendable, Hashable {
    /// Per node: per input bus, the format arriving there after any input adapter (nil: not connected).
    package var inputs: [String: [StreamFormat?]] = [:]
    /// Per node: per output bus, the format the node produces (empty for output nodes).
    package var outputs: [String: [StreamFormat]] = [:]

    /// No formats yet.
    package init() {}
}
