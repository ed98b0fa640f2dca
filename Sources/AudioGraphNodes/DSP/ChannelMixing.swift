// Channel up/down-mixing (Web Audio "speakers"/"discrete") and StereoPannerNode equal-power panning.

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Real-time-safe channel up/down-mixing and equal-power stereo panning on non-interleaved
/// `Float` channel buffers.
///
/// Up/down-mixing follows the Web Audio API's "speakers" channel interpretation for 1 (mono),
/// 2 (L R), 4 (L R SL SR) and 6 (L R C LFE SL SR) channels
/// (https://www.w3.org/TR/webaudio/#channel-up-mixing-and-down-mixing) and "discrete"
/// (copy the channels that fit, zero the rest) for any other pair of channel counts.
///
/// Panning is the Web Audio API StereoPannerNode algorithm
/// (https://www.w3.org/TR/webaudio/#stereopanner-algorithm): a mono input at pan `p` gets gains
/// `cos(x*pi/2)`, `sin(x*pi/2)` with `x = (p+1)/2`; a stereo input moves part of one side into
/// the other.
///
/// Every function writes `output = gain * mixed` or, with `accumulate: true`,
/// `output += gain * mixed` (how a mixer sums its inputs).
///
/// Thread safety: stateless; every function is real-time safe (no allocation, no locks, no
/// throwing) and may be called from any thread on buffers that thread owns. Input and output
/// channel buffers must not overlap.
package enum ChannelMixing {

    /// A per-sample control value: one constant, or one value per frame.
    package enum Values {
        /// The same value for every frame.
        case constant(Float)
        /// One value per frame; the pointer must be valid for the frame count of the call.
        case perSample(UnsafePointer<Float>)

        /// The value at frame `i`.
        @inline(__always)
        package subscript(_ i: Int) -> Float {
            switch self {
            case .constant(let v): return v
            case .perSample(let p): return p[i]
            }
        }
    }

    /// 1/sqrt(2), the "speakers" coefficient.
    @usableFromInline static let s: Float = 0.70710678118654752

    /// Whether a channel count has a "speakers" layout (1, 2, 4 or 6).
    @inline(__always)
    package static func hasSpeakersLayout(_ channels: Int) -> Bool {
        channels == 1 || channels == 2 || channels == 4 || channels == 6
    }

    @inline(__always)
    static func store(_ out: UnsafeMutablePointer<Float>, _ i: Int, _ v: Float, _ accumulate: Bool) {
        if accumulate { out[i] += v } else { out[i] = v }
    }

    /// `left (+)= (g * x) * gl`, `right (+)= (g * x) * gr` with constants: branch-free loops over
    /// raw pointers, which the compiler vectorises (four frames per SSE operation; the same
    /// operations per sample as the general loops, so the same results).
    @inline(__always)
    static func scaleToPair(_ x: UnsafePointer<Float>, _ left: UnsafeMutablePointer<Float>,
                            _ right: UnsafeMutablePointer<Float>, count: Int,
                            gain g: Float, left gl: Float, right gr: Float, accumulate: Bool) {
        if accumulate {
            for i in 0..<count {
                let v = g * x[i]
                left[i] += v * gl
                right[i] += v * gr
            }
        } else {
            for i in 0..<count {
                let v = g * x[i]
                left[i] = v * gl
                right[i] = v * gr
            }
        }
    }

    /// Two mono inputs with constant gains and pan gains added into a stereo pair in one pass:
    /// `left = (left + (g0 * x0) * gl0) + (g1 * x1) * gl1`, `right` alike. The same operations in
    /// the same order as two ``panMono(input:left:right:frameCount:pan:gain:accumulate:)`` calls
    /// with constant values and `accumulate: true` (so the same bits), with the output read and
    /// written once instead of twice (how a mixer sums its inputs two at a time). Real-time safe.
    package static func accumulateMonoPair(_ x0: UnsafePointer<Float>, gain g0: Float, left gl0: Float, right gr0: Float,
                                           _ x1: UnsafePointer<Float>, gain g1: Float, left gl1: Float, right gr1: Float,
                                           intoLeft left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                           frameCount: Int) {
        for i in 0..<frameCount {
            let a = g0 * x0[i], b = g1 * x1[i]
            left[i] = (left[i] + a * gl0) + b * gl1
            right[i] = (right[i] + a * gr0) + b * gr1
        }
    }

    /// One mono input with a constant gain and pan gains added into a stereo pair:
    /// `left += (g * x) * gl`, `right += (g * x) * gr` (``panMono(input:left:right:frameCount:pan:gain:accumulate:)``
    /// with constant values and `accumulate: true`, the pan gains given). Real-time safe.
    package static func accumulateMono(_ x: UnsafePointer<Float>, gain g: Float, left gl: Float, right gr: Float,
                                       intoLeft left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                       frameCount: Int) {
        scaleToPair(x, left, right, count: frameCount, gain: g, left: gl, right: gr, accumulate: true)
    }

    /// `y += g * x` with a constant `g` (a loop the compiler vectorises).
    @inline(__always)
    static func addScaled(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, count: Int, gain g: Float) {
        for i in 0..<count { y[i] += g * x[i] }
    }

    /// Up/down-mixes `input.count` channels into `output.count` channels ("speakers" for
    /// 1/2/4/6, "discrete" otherwise), scaled by `gain`.
    ///
    /// - Parameters:
    ///   - input: one pointer per input channel, each valid for `frameCount` samples.
    ///   - output: one pointer per output channel, each valid for `frameCount` samples.
    ///   - gain: scale applied to every output sample (constant or per frame).
    ///   - accumulate: add into `output` instead of overwriting it. Output channels that the mix
    ///     leaves silent are zeroed when overwriting and left untouched when accumulating.
    ///
    /// Real-time safe.
    package static func mix(input: UnsafeBufferPointer<UnsafePointer<Float>>,
                           output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                           frameCount: Int,
                           gain: Values = .constant(1),
                           accumulate: Bool = false) {
        let ic = input.count, oc = output.count
        if frameCount <= 0 || oc == 0 { return }
        if !accumulate {
            for c in 0..<oc { output[c].update(repeating: 0, count: frameCount) }
        }
        if ic == 0 { return }
        if ic == oc || !(hasSpeakersLayout(ic) && hasSpeakersLayout(oc)) {
            // Identity or "discrete": copy what fits (the rest is already zero).
            for c in 0..<min(ic, oc) {
                let x = input[c], y = output[c]
                if case .constant(let g) = gain {
                    addScaled(x, into: y, count: frameCount, gain: g)
                } else {
                    for i in 0..<frameCount { y[i] += gain[i] * x[i] }
                }
            }
            return
        }
        let s = Self.s
        switch (ic, oc) {
        case (1, 2), (1, 4):
            let x = input[0], l = output[0], r = output[1]
            if case .constant(let g) = gain {
                // (g * x) * 1 == g * x exactly.
                scaleToPair(x, l, r, count: frameCount, gain: g, left: 1, right: 1, accumulate: true)
            } else {
                for i in 0..<frameCount { let v = gain[i] * x[i]; l[i] += v; r[i] += v }
            }
        case (1, 6):
            let x = input[0], c = output[2]
            for i in 0..<frameCount { c[i] += gain[i] * x[i] }
        case (2, 1):
            let l = input[0], r = input[1], m = output[0]
            for i in 0..<frameCount { m[i] += gain[i] * (0.5 * (l[i] + r[i])) }
        case (2, 4), (2, 6):
            let l = input[0], r = input[1], ol = output[0], or = output[1]
            for i in 0..<frameCount { let g = gain[i]; ol[i] += g * l[i]; or[i] += g * r[i] }
        case (4, 1):
            let l = input[0], r = input[1], sl = input[2], sr = input[3], m = output[0]
            for i in 0..<frameCount { m[i] += gain[i] * (0.25 * (l[i] + r[i] + sl[i] + sr[i])) }
        case (4, 2):
            let l = input[0], r = input[1], sl = input[2], sr = input[3]
            let ol = output[0], or = output[1]
            for i in 0..<frameCount {
                let g = gain[i]
                ol[i] += g * (0.5 * (l[i] + sl[i]))
                or[i] += g * (0.5 * (r[i] + sr[i]))
            }
        case (4, 6):
            // L R SL SR -> L R C LFE SL SR: C and LFE stay silent.
            let l = input[0], r = input[1], sl = input[2], sr = input[3]
            let ol = output[0], or = output[1], osl = output[4], osr = output[5]
            for i in 0..<frameCount {
                let g = gain[i]
                ol[i] += g * l[i]
                or[i] += g * r[i]
                osl[i] += g * sl[i]
                osr[i] += g * sr[i]
            }
        case (6, 1):
            let l = input[0], r = input[1], c = input[2], sl = input[4], sr = input[5], m = output[0]
            for i in 0..<frameCount {
                m[i] += gain[i] * (s * (l[i] + r[i]) + c[i] + 0.5 * (sl[i] + sr[i]))
            }
        case (6, 2):
            let l = input[0], r = input[1], c = input[2], sl = input[4], sr = input[5]
            let ol = output[0], or = output[1]
            for i in 0..<frameCount {
                let g = gain[i]
                ol[i] += g * (l[i] + s * (c[i] + sl[i]))
                or[i] += g * (r[i] + s * (c[i] + sr[i]))
            }
        case (6, 4):
            let l = input[0], r = input[1], c = input[2], sl = input[4], sr = input[5]
            let ol = output[0], or = output[1], osl = output[2], osr = output[3]
            for i in 0..<frameCount {
                let g = gain[i]
                ol[i] += g * (l[i] + s * c[i])
                or[i] += g * (r[i] + s * c[i])
                osl[i] += g * sl[i]
                osr[i] += g * sr[i]
            }
        default:
            break
        }
    }

    /// The StereoPannerNode gains of a mono input at `pan` (-1...1, clamped):
    /// `(cos(x*pi/2), sin(x*pi/2))` with `x = (pan+1)/2`. Real-time safe.
    @inline(__always)
    package static func monoPanGains(pan: Float) -> (left: Float, right: Float) {
        let p = Double(min(max(pan, -1), 1))
        let x = (p + 1) / 2
        return (Float(cos(x * .pi / 2)), Float(sin(x * .pi / 2)))
    }

    /// The StereoPannerNode gains of a stereo input at `pan` (-1...1, clamped): `x = pan + 1`
    /// when `pan <= 0`, else `x = pan`, gains `(cos(x*pi/2), sin(x*pi/2))`. Real-time safe.
    @inline(__always)
    package static func stereoPanGains(pan: Float) -> (left: Float, right: Float) {
        let p = Double(min(max(pan, -1), 1))
        let x = p <= 0 ? p + 1 : p
        return (Float(cos(x * .pi / 2)), Float(sin(x * .pi / 2)))
    }

    /// Pans a mono input to stereo (StereoPannerNode, mono input):
    /// `left = gain * x * cos(x'*pi/2)`, `right = gain * x * sin(x'*pi/2)`, `x' = (pan+1)/2`.
    ///
    /// `pan` and `gain` are constant or per frame; with `accumulate: true` the result is added
    /// into `left`/`right`. Real-time safe.
    package static func panMono(input: UnsafePointer<Float>,
                               left: UnsafeMutablePointer<Float>,
                               right: UnsafeMutablePointer<Float>,
                               frameCount: Int,
                               pan: Values = .constant(0),
                               gain: Values = .constant(1),
                               accumulate: Bool = false) {
        if case .constant(let p) = pan, case .constant(let g) = gain {
            let (gl, gr) = monoPanGains(pan: p)
            if accumulate {
                scaleToPair(input, left, right, count: frameCount, gain: g, left: gl, right: gr, accumulate: true)
            } else {
                scaleToPair(input, left, right, count: frameCount, gain: g, left: gl, right: gr, accumulate: false)
            }
        } else if case .constant(let p) = pan {
            let (gl, gr) = monoPanGains(pan: p)
            for i in 0..<frameCount {
                let v = gain[i] * input[i]
                store(left, i, v * gl, accumulate)
                store(right, i, v * gr, accumulate)
            }
        } else {
            for i in 0..<frameCount {
                let (gl, gr) = monoPanGains(pan: pan[i])
                let v = gain[i] * input[i]
                store(left, i, v * gl, accumulate)
                store(right, i, v * gr, accumulate)
            }
        }
    }

    /// Pans a stereo input (StereoPannerNode, stereo input): for `pan <= 0`
    /// `outL = L + R*gl`, `outR = R*gr`; for `pan > 0` `outL = L*gl`, `outR = R + L*gr`,
    /// with the gains of ``stereoPanGains(pan:)``, then scaled by `gain`.
    ///
    /// `pan` and `gain` are constant or per frame; with `accumulate: true` the result is added
    /// into `outLeft`/`outRight`. Real-time safe.
    package static func panStereo(left inL: UnsafePointer<Float>,
                                 right inR: UnsafePointer<Float>,
                                 outLeft: UnsafeMutablePointer<Float>,
                                 outRight: UnsafeMutablePointer<Float>,
                                 frameCount: Int,
                                 pan: Values = .constant(0),
                                 gain: Values = .constant(1),
                                 accumulate: Bool = false) {
        if case .constant(let p) = pan, case .constant(let g) = gain {
            let (gl, gr) = stereoPanGains(pan: p)
            if accumulate {
                stereoConstant(inL, inR, outLeft, outRight, count: frameCount, gain: g, gl: gl, gr: gr,
                               leftward: p <= 0, accumulate: true)
            } else {
                stereoConstant(inL, inR, outLeft, outRight, count: frameCount, gain: g, gl: gl, gr: gr,
                               leftward: p <= 0, accumulate: false)
            }
            return
        }
        var constantGains: (Float, Float, Bool) = (0, 0, false)
        var isConstant = false
        if case .constant(let p) = pan {
            let g = stereoPanGains(pan: p)
            constantGains = (g.left, g.right, p <= 0)
            isConstant = true
        }
        for i in 0..<frameCount {
            let gl: Float, gr: Float, leftward: Bool
            if isConstant {
                (gl, gr, leftward) = constantGains
            } else {
                let p = pan[i]
                (gl, gr) = stereoPanGains(pan: p)
                leftward = p <= 0
            }
            let l = inL[i], r = inR[i], g = gain[i]
            let ol: Float, or: Float
            if leftward {
                ol = l + r * gl
                or = r * gr
            } else {
                ol = l * gl
                or = r + l * gr
            }
            store(outLeft, i, g * ol, accumulate)
            store(outRight, i, g * or, accumulate)
        }
    }

    /// ``panStereo(left:right:outLeft:outRight:frameCount:pan:gain:accumulate:)`` with a constant
    /// pan and gain: one branch-free loop per case, which the compiler vectorises (the same
    /// operations per sample).
    @inline(__always)
    static func stereoConstant(_ inL: UnsafePointer<Float>, _ inR: UnsafePointer<Float>,
                               _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, count: Int,
                               gain g: Float, gl: Float, gr: Float, leftward: Bool, accumulate: Bool) {
        switch (leftward, accumulate) {
        case (true, true):
            for i in 0..<count { let l = inL[i], r = inR[i]; outL[i] += g * (l + r * gl); outR[i] += g * (r * gr) }
        case (true, false):
            for i in 0..<count { let l = inL[i], r = inR[i]; outL[i] = g * (l + r * gl); outR[i] = g * (r * gr) }
        case (false, true):
            for i in 0..<count { let l = inL[i], r = inR[i]; outL[i] += g * (l * gl); outR[i] += g * (r + l * gr) }
        case (false, false):
            for i in 0..<count { let l = inL[i], r = inR[i]; outL[i] = g * (l * gl); outR[i] = g * (r + l * gr) }
        }
    }
}
