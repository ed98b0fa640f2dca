// A kernel that can render a chain of kernels in series as one (see FusedKernelChain).

/// A kernel that can take over the rendering of the kernels in series before it (cf. the eq:
/// a chain of eq nodes filters as one cascade of all their sections). The render plan asks it
/// about its only input's source; the plan itself checks the topology (that source's output
/// feeds only this kernel, no rate converter between them, no parameter inputs).
///
/// A conforming kernel sets ``NodeKernel/chainFusing`` to itself in its initializer: plans find
/// fusing kernels through it, not by a cast.
///
/// Thread safety: both calls are made on a control thread while a plan is compiled.
package protocol ChainFusingKernel: NodeKernel {
    /// Whether this kernel can follow `upstream` (the source of its only input, through output
    /// bus 0) in one fused chain: typically the same kind of kernel, with the same output format.
    func canFuse(after upstream: NodeKernel) -> Bool

    /// The renderer of `chain` (the kernels in series, this kernel last; each pair accepted by
    /// ``canFuse(after:)``), or nil to render them one by one. May allocate.
    func makeFusedChain(_ chain: [NodeKernel]) -> FusedKernelChain?
}
