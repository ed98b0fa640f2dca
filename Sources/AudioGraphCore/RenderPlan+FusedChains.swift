// Chains of kernels in series that a render plan renders as one (FusedKernelChain): which ones, and when a slice must render them one by one.

extension RenderPlan {
    /// The chains of entries to fuse, each first to last (two entries or more): entry `j` follows
    /// entry `i` when `j` has exactly one input bus, connected to `i`'s output bus 0 without a
    /// rate-converting adapter; `i` has one output bus, that input is its only consumer (no other
    /// input, no parameter input reads it), it is neither the output entry nor pulled every
    /// slice; neither has parameter inputs; and `j`'s kernel accepts `i`'s
    /// (``ChainFusingKernel/canFuse(after:)``). Taps are checked per slice (see
    /// ``fusedChainIsIntact(_:_:)``). Control thread.
    static func fusedChains(kernels: [NodeKernel], inputs: [[(source: Int, bus: Int, adapter: InputAdapter?)]],
                            outputEntry: Int, pulledEntries: [Int], parameterInputs: [[ParameterInput]]) -> [[Int]] {
        let n = kernels.count
        var consumers = Array(repeating: 0, count: n)
        for list in inputs { for input in list where input.source >= 0 && input.source < n { consumers[input.source] += 1 } }
        for list in parameterInputs { for input in list where input.source >= 0 && input.source < n { consumers[input.source] += 1 } }
        let pulled = Set(pulledEntries)
        func hasParameterInputs(_ e: Int) -> Bool { e < parameterInputs.count && !parameterInputs[e].isEmpty }
        // follows[j] = i: entry j can take over entry i's rendering.
        var follows = Array(repeating: -1, count: n)
        var followed = Array(repeating: false, count: n)
        for j in 0..<n {
            guard inputs[j].count == 1, let fusing = kernels[j].chainFusing else { continue }
            let input = inputs[j][0]
            let i = input.source
            guard i >= 0, i < n, i != j, input.bus == 0, input.adapter == nil, kernels[i].outputs.count == 1,
                  consumers[i] == 1, i != outputEntry, !pulled.contains(i),
                  !hasParameterInputs(i), !hasParameterInputs(j), fusing.canFuse(after: kernels[i]) else { continue }
            follows[j] = i
            followed[i] = true
        }
        var chains: [[Int]] = []
        for tail in 0..<n where follows[tail] >= 0 && !followed[tail] {
            var chain = [tail]
            var e = follows[tail]
            // A cycle cannot reach here (a plan's graph is acyclic), but never loop forever.
            while e >= 0 && chain.count <= n {
                chain.append(e)
                e = follows[e]
            }
            chains.append(chain.reversed())
        }
        return chains
    }

    /// Whether entry `e`'s fused chain may render fused this slice: no kernel before its last has
    /// a tap (offline or live) or was rendered this slice already. Render thread; real-time safe.
    @inline(__always)
    func fusedChainIsIntact(_ e: Entry, _ context: RenderContext) -> Bool {
        var i = e.firstChainMember
        let end = i &+ e.chainMemberCount &- 1
        while i < end {
            let k = entries[chainMembers[i]].kernel
            if !k.taps.isEmpty || k.liveTapSet != nil { return false }
            if k.lastRenderedSampleTime == context.sampleTime && k.lastRenderedFrameCount == context.frameCount { return false }
            i &+= 1
        }
        return true
    }
}
