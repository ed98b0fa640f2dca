// Audio into parameters on the render thread: the modulating outputs rendered, down-mixed to mono and handed to the parameters.

extension RenderPlan {
    /// Renders the sources of entry `e`'s parameter inputs, sums each parameter's inputs
    /// (down-mixed to mono) into its buffer and points the parameter's render state at it for
    /// this slice (nil when every input of it is silent: the parameter then behaves exactly as
    /// without inputs). Render thread; real-time safe.
    @inline(__always)
    func prepareParameterInputs(_ e: Entry, _ context: RenderContext) {
        let k = e.kernel
        let n = context.frameCount
        var i = e.firstParameterInput
        let end = i + e.parameterInputCount
        var audible = false
        while i < end {
            let slot = parameterSlots[i]
            if slot.first { audible = false }
            renderEntry(slot.input.source, context)
            let source = entries[slot.input.source].kernel
            if !source.outputIsSilent[slot.input.bus] {
                Self.addMono(source.outputs[slot.input.bus], into: slot.buffer, frameCount: n, overwrite: !audible)
                audible = true
            }
            // The last slot of a parameter decides what the parameter sees this slice.
            if i + 1 == end || parameterSlots[i + 1].first {
                k.parameterStates[slot.input.parameter].modulation = audible ? UnsafePointer(slot.buffer) : nil
            }
            i += 1
        }
    }

    /// Forgets the buffers after the kernel rendered (the next plan may not have them). Real-time safe.
    @inline(__always)
    func finishParameterInputs(_ e: Entry) {
        var i = e.firstParameterInput
        let end = i + e.parameterInputCount
        while i < end {
            e.kernel.parameterStates[parameterSlots[i].input.parameter].modulation = nil
            i += 1
        }
    }

    /// Web Audio's down-mix to one channel (an AudioParam's input is mono, `speakers`): 1 as is,
    /// 2 `½(L+R)`, 4 `¼(L+R+SL+SR)`, 6 `√½(L+R) + C + ½(SL+SR)`, other counts their first channel
    /// (`discrete`). Written into `y` (`overwrite`) or added to it. Real-time safe.
    @inline(__always)
    static func addMono(_ x: ChannelBufferList, into y: UnsafeMutablePointer<Float>, frameCount n: Int, overwrite: Bool) {
        if overwrite { y.update(repeating: 0, count: n) }
        switch x.channelCount {
        case 2:
            let l = x.channel(0), r = x.channel(1)
            for i in 0..<n { y[i] += 0.5 * (l[i] + r[i]) }
        case 4:
            let l = x.channel(0), r = x.channel(1), sl = x.channel(2), sr = x.channel(3)
            for i in 0..<n { y[i] += 0.25 * (l[i] + r[i] + sl[i] + sr[i]) }
        case 6:
            let s: Float = 0.70710678118654752
            let l = x.channel(0), r = x.channel(1), c = x.channel(2), sl = x.channel(4), sr = x.channel(5)
            for i in 0..<n { y[i] += s * (l[i] + r[i]) + c[i] + 0.5 * (sl[i] + sr[i]) }
        default:
            guard x.channelCount > 0 else { return }
            let m = x.channel(0)
            for i in 0..<n { y[i] += m[i] }
        }
    }
}
