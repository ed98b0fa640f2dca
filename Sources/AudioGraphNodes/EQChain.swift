// Eq nodes in series rendered as one cascade of all their bands: what a render plan runs in their place.
import AudioGraphCore

/// The fused renderer (``FusedKernelChain``) of eq kernels in series, each read only by the
/// next: one slice goes through every band of every eq in one ``Biquad/processSteadyCascade(_:channels:buffers:frameCount:coefficients:state:)``
/// (a wavefront over all the sections), where rendered one by one each eq would run its own
/// short cascade (a one-band eq: a single recurrence the processor cannot overlap with anything).
///
/// Bit-identical to the eqs rendered one after the other, because it only fuses what computes
/// the same: each eq's output is Float, and the cascade rounds to Float between sections, so
/// the sections of consecutive eqs compute what the sections within one eq do. A slice runs as
/// one cascade only when the input is not silent, every band of every eq is settled (no glide,
/// bypass fade or per-sample values: ``Biquad/isSteady``) and every eq but the last has a
/// constant 0 dB global gain. Otherwise each eq filters in turn in the last kernel's buffer, as
/// its own render would (its parameters read once, its bands, its gain, the silence of its
/// input: a silent upstream is read as zeros). Every eq's parameters are read exactly once per
/// slice either way, and each filter's non-finite state is cleared after the slice as each eq
/// does.
///
/// Thread safety: made on a control thread by the last kernel when a plan is compiled (it
/// allocates its scratch then), rendered on the thread that renders the plan, released with
/// the plan on a control thread.
final class EQChain: FusedKernelChain {
    // MARK: Fixed at creation
    /// The eqs, first to last.
    private let members: ContiguousArray<EQKernel>
    /// Every band of every eq, in processing order.
    private let sections: ContiguousArray<Biquad>
    private let channelCount: Int

    // MARK: Render thread only (scratch sized at creation)
    /// Per eq, for the current slice: whether its bands are settled, and its global gain's values.
    private let steady: UnsafeMutablePointer<Bool>
    private let gains: UnsafeMutablePointer<ParameterValues>
    /// The cascade's copies of the sections' coefficients and state.
    private let cascadeCoefficients: UnsafeMutablePointer<Double>
    private let cascadeState: UnsafeMutablePointer<Double>
    private let pointers: ChannelPointers

    /// The chain of `members` (at least two eqs with the same channel count, first to last).
    /// Control thread: allocates.
    init(_ members: [EQKernel]) {
        precondition(members.count >= 2)
        self.members = ContiguousArray(members)
        sections = ContiguousArray(members.flatMap { $0.filters })
        channelCount = members[members.count - 1].channelCount
        steady = .allocate(capacity: members.count)
        steady.initialize(repeating: false, count: members.count)
        gains = .allocate(capacity: members.count)
        gains.initialize(repeating: ParameterValues(constant: 0, values: nil), count: members.count)
        Biquad.simdMetadataReady
        let scratch = Biquad.cascadeScratchCounts(sections: sections.count, channels: channelCount)
        cascadeCoefficients = .allocate(capacity: scratch.coefficients)
        cascadeCoefficients.initialize(repeating: 0, count: scratch.coefficients)
        cascadeState = .allocate(capacity: scratch.state)
        cascadeState.initialize(repeating: 0, count: scratch.state)
        pointers = ChannelPointers(capacity: channelCount)
    }

    deinit {
        steady.deallocate()
        gains.deallocate()
        cascadeCoefficients.deallocate()
        cascadeState.deallocate()
    }

    func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let count = members.count
        let last = members[count - 1]
        let out = last.outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        // Every eq's parameters, read once per slice as its own render reads them.
        var fused = !inputSilent && sections.count > 1
        for m in 0..<count {
            let eq = members[m]
            let settled = eq.readBands(context)
            let gain = eq.globalGainValues(context)
            steady[m] = settled
            gains[m] = gain
            if !settled || (m < count - 1 && !eq.isUnityGain(gain)) { fused = false }
        }
        var silent = false
        if fused {
            pointers.point(at: out)
            Biquad.processSteadyCascade(sections, channels: channelCount, buffers: pointers.outputs, frameCount: n,
                                        coefficients: cascadeCoefficients, state: cascadeState)
            last.applyGlobalGain(out, frameCount: n, gains[count - 1])
            last.fusedCascadeSliceCount &+= 1
        } else {
            // One eq after the other, in place: what each would do with the one before's output.
            silent = inputSilent
            for m in 0..<count {
                let eq = members[m]
                // An eq reads a silent input as zeros (not the -0s a silent buffer may hold).
                if m > 0 && silent { out.clear(frameCount: n) }
                eq.filterBands(out, context, steady: steady[m])
                eq.applyGlobalGain(out, frameCount: n, gains[m])
                silent = silent && ChannelPointers.isAllZero(out, frameCount: n)
            }
        }
        // A NaN or infinity that reached a filter's memory goes no further than this slice.
        for m in 0..<count { members[m].clearNonFiniteState() }
        last.outputIsSilent[0] = silent
    }
}
