// One render call for a chain of kernels in series (an eq after an eq after an eq): what a render plan runs in their place.

/// The renderer of a chain of kernels in series that a ``RenderPlan`` runs in place of rendering
/// them one by one: made by the chain's last kernel (``ChainFusingKernel/makeFusedChain(_:)``)
/// when the plan is compiled, it pulls the first kernel's inputs and leaves in the last kernel's
/// outputs (and `outputIsSilent`) exactly what rendering the kernels one after the other would
/// have left there, bit for bit, with every kernel's state advanced as that would have advanced
/// it. The kernels before the last are not rendered and their outputs not written: the plan
/// fuses only kernels whose output nothing but the next one reads (see
/// `RenderPlan.fusedChains(kernels:inputs:outputEntry:pulledEntries:parameterInputs:)`), and
/// renders the chain unfused for any slice in which one of them has a tap.
///
/// Thread safety: made on a control thread with the plan and released with it there; rendered
/// on the thread that renders the plan (the render thread, or a worker for the task that owns
/// the chain).
package protocol FusedKernelChain: AnyObject {
    /// Renders one slice of the chain into its last kernel's outputs; `inputs` are the first
    /// kernel's. Real-time safe: no allocation, lock, wait or I/O.
    func render(context: RenderContext, inputs: RenderInputs)
}
