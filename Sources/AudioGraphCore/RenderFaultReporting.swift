// What a node that contained bad audio (NaN, infinity, a runaway plugin) tells the one who rendered it.

/// A node that contains faults on the render thread — replaces non-finite input with silence,
/// mutes a plugin that keeps producing non-finite or absurd output — and counts them in atomics
/// (style rule: a failing node outputs silence and counts the failure) implements this so that
/// the offline renderer and the command line can say what happened, in one line per node. A
/// conforming ``GraphNode`` also calls ``registerRenderFaultReporter()`` in its initializer: the
/// renderer finds it through ``GraphNode/renderFaultReporter``, not by a cast.
///
/// Thread safety: ``renderFaultSummary`` is read on a control thread, from the atomics the
/// render thread writes; it may run while the graph renders.
public protocol RenderFaultReporting: AnyObject {
    /// One line (no node id: the caller adds it) saying what was contained since the node was
    /// made, or nil when nothing was.
    var renderFaultSummary: String? { get }
}

extension RenderFaultReporting where Self: GraphNode {
    /// Makes ``GraphNode/renderFaultReporter`` this node, so the offline renderer and the command
    /// line ask it for its ``renderFaultSummary``; call it once in the initializer.
    public func registerRenderFaultReporter() {
        renderFaultReporter = self
    }
}
