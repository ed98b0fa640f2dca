// The render thread's view of one parameter: current value, linear ramp, automation.

/// Per-sample values of one parameter for one slice: a constant or a buffer of `frameCount` values.
package struct ParameterValues {
    /// The value when ``values`` is nil.
    package let constant: Float
    /// Per-frame values, or nil when the value is constant over the slice.
    package let values: UnsafeMutablePointer<Float>?

    /// Values a kernel derives from its parameters (a detuned frequency): `constant`, or
    /// `values` per frame when not nil. Real-time safe.
    public init(constant: Float, values: UnsafeMutablePointer<Float>?) {
        self.constant = constant
        self.values = values
    }

    /// The value at frame `i` of the slice. Real-time safe.
    @inline(__always)
    package subscript(i: Int) -> Float {
        // Not `values.map { … }`: the closure's generic metadata is instantiated (a lock and an
        // allocation) on first use in debug builds.
        if let values { return values[i] }
        return constant
    }

    /// Whether the value is the same for every frame of the slice.
    @inline(__always)
    package var isConstant: Bool { values == nil }
}

/// Render-thread state of a parameter: it follows the control side's published value, ramps
/// linearly per sample and evaluates automation. Owned by a ``NodeKernel``.
///
/// Thread safety: render thread only (after the kernel is set up).
package struct ParameterRenderState {
    // MARK: Render thread only
    private var lastSequence: UInt64 = 0
    /// The value at the next frame to render.
    package private(set) var current: Double
    private var rampStart: Double
    private var target: Double
    private var rampLength: Int = 0
    private var rampPosition: Int = 0
    private let scratch: UnsafeMutablePointer<Float>
    /// This slice's sum of the audio connected to the parameter (mono), or nil: set by the
    /// render plan around the kernel's render call (``ParameterConnection``).
    var modulation: UnsafePointer<Float>?

    init(initialValue: Double, scratch: UnsafeMutablePointer<Float>) {
        current = initialValue
        rampStart = initialValue
        target = initialValue
        self.scratch = scratch
    }

    /// Starts a linear ramp from the current value to `value` over `frames` frames (0: a step).
    /// As Web Audio's linear ramp: frame `i` of the ramp has `start + (value - start) * i / frames`,
    /// and `value` from frame `frames` on.
    package mutating func ramp(to value: Double, frames: Int) {
        target = value
        rampStart = current
        rampLength = max(0, frames)
        rampPosition = 0
        if rampLength == 0 { current = value }
    }

    /// Whether a ramp is in progress.
    package var isRamping: Bool { rampPosition < rampLength }

    /// Reads a newly published value of `parameter`, if any. Real-time safe.
    @inline(__always)
    mutating func poll(_ parameter: AudioParameter) {
        if let p = parameter.poll(after: lastSequence) {
            lastSequence = p.sequence
            ramp(to: p.value, frames: p.rampFrames)
        }
    }

    /// The values for a slice, advancing the ramp by `context.frameCount` frames; with audio
    /// connected, Web Audio's computed value: the intrinsic value (set value, ramp or automation)
    /// plus the input, per sample, clamped to the parameter's range. ``current`` stays the
    /// intrinsic value. Real-time safe.
    @inline(__always)
    mutating func values(_ parameter: AudioParameter, _ context: RenderContext) -> ParameterValues {
        let intrinsic = intrinsicValues(parameter, context)
        guard let m = modulation else { return intrinsic }
        let n = context.frameCount
        let low = Float(parameter.info.minValue), high = Float(parameter.info.maxValue)
        if let v = intrinsic.values {   // v is `scratch`
            for i in 0..<n { v[i] = min(max(v[i] + m[i], low), high) }
        } else {
            let c = intrinsic.constant
            for i in 0..<n { scratch[i] = min(max(c + m[i], low), high) }
        }
        return ParameterValues(constant: intrinsic.constant, values: scratch)
    }

    /// The parameter's own values for a slice (set value, ramp, automation). Real-time safe.
    @inline(__always)
    private mutating func intrinsicValues(_ parameter: AudioParameter, _ context: RenderContext) -> ParameterValues {
        let n = context.frameCount
        if let automation = parameter.automation {
            automation.fill(scratch, startFrame: context.sampleTime, count: n, sampleRate: context.sampleRate)
            if n > 0 { current = Double(scratch[n - 1]) }
            return ParameterValues(constant: Float(current), values: scratch)
        }
        if rampPosition >= rampLength { return ParameterValues(constant: Float(current), values: nil) }
        let delta = target - rampStart
        let length = Double(rampLength)
        // The ramp's frames, then the target's: no per-frame test of where the ramp ends.
        let ramped = min(n, rampLength - rampPosition)
        for i in 0..<ramped {
            current = rampStart + delta * (Double(rampPosition + i) / length)
            scratch[i] = Float(current)
        }
        rampPosition += ramped
        if ramped < n {
            current = target
            scratch.advanced(by: ramped).update(repeating: Float(target), count: n - ramped)
        }
        current = rampPosition >= rampLength ? target : rampStart + delta * (Double(rampPosition) / length)  // the next frame's value
        return ParameterValues(constant: Float(current), values: scratch)
    }
}
