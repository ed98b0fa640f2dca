// The stock nodes' parameter tables: the one place each node's parameter ranges and defaults are set.
import AudioGraphCore

extension ParameterTable {
    /// ``OscillatorNode``'s parameters.
    package static let oscillator = ParameterTable([
        .init(.global, "frequency", .hertz, .value(0), .nyquist, .value(440)),
        .init(.global, "amplitude", .linearGain, 0, 1, 1),
        // Web Audio's detune (cents): 1200·log2(FLT_MAX) ≈ 153600 either way.
        .init(.global, "detune", .generic, -153600, 153600, 0),
    ])

    /// ``PlayerNode``'s parameters.
    package static let player = ParameterTable([.init(.global, "volume", .linearGain, 0, 1, 1)])

    /// ``MixerNode``'s parameters.
    package static let mixer = ParameterTable([
        .init(.global, "volume", .linearGain, 0, 4, 1),
        .init(.perInput, "volume", .linearGain, 0, 4, 1),
        .init(.perInput, "pan", .pan, -1, 1, 0),
        .init(.perInput, "enable", .boolean, 0, 1, 1),
    ])

    /// ``EnvironmentNode``'s parameters.
    package static let environment = ParameterTable([
        .init(.listener, "x", .meters, -1e6, 1e6, 0),
        .init(.listener, "y", .meters, -1e6, 1e6, 0),
        .init(.listener, "z", .meters, -1e6, 1e6, 0),
        .init(.listener, "yaw", .degrees, -180, 180, 0),
        .init(.listener, "pitch", .degrees, -180, 180, 0),
        .init(.listener, "roll", .degrees, -180, 180, 0),
        .init(.listener, "forwardX", .generic, -1e6, 1e6, 0),
        .init(.listener, "forwardY", .generic, -1e6, 1e6, 0),
        .init(.listener, "forwardZ", .generic, -1e6, 1e6, -1),
        .init(.listener, "upX", .generic, -1e6, 1e6, 0),
        .init(.listener, "upY", .generic, -1e6, 1e6, 1),
        .init(.listener, "upZ", .generic, -1e6, 1e6, 0),
        .init(.perInput, "x", .meters, -1e6, 1e6, 0),
        .init(.perInput, "y", .meters, -1e6, 1e6, 0),
        .init(.perInput, "z", .meters, -1e6, 1e6, 0),
        .init(.perInput, "gain", .linearGain, 0, 4, 1),
        .init(.perInput, "occlusion", .decibels, -100, 0, 0),
        .init(.perInput, "obstruction", .decibels, -100, 0, 0),
        .init(.perInput, "reverbBlend", .generic, 0, 1, 0),
        .init(.perInput, "orientationX", .generic, -1e6, 1e6, 1),
        .init(.perInput, "orientationY", .generic, -1e6, 1e6, 0),
        .init(.perInput, "orientationZ", .generic, -1e6, 1e6, 0),
        .init(.perInput, "coneInnerAngle", .degrees, 0, 360, 360),
        .init(.perInput, "coneOuterAngle", .degrees, 0, 360, 360),
        .init(.perInput, "coneOuterGain", .linearGain, 0, 1, 0),
        .init(.perInput, "mode", .generic, 0, 6, 0),
        // AVAudio3DMixing's rate (applied with the `variableRate` property).
        .init(.perInput, "rate", .generic, 0.5, 2, 1),
    ])

    /// ``EQNode``'s parameters.
    package static let eq = ParameterTable([
        .init(.global, "globalGain", .decibels, -96, 24, 0),
        .init(.perBand, "frequency", .hertz, .value(10), .nyquist, .nyquistCapped(1000), smooths: true),
        .init(.perBand, "gain", .decibels, -96, 24, 0, smooths: true),
        .init(.perBand, "q", .generic, 0.05, 100, 0.70710678, smooths: true),
        .init(.perBand, "bypass", .boolean, 0, 1, 0),
    ])

    /// ``DelayNode``'s parameters.
    package static let delay = ParameterTable([
        .init(.global, "delayTime", .seconds, 0, 2, 1, smooths: true),
        .init(.global, "feedback", .percent, -100, 100, 50),
        .init(.global, "lowPassCutoff", .hertz, .value(10), .nyquist, .nyquistCapped(15000), smooths: true),
        .init(.global, "wetDryMix", .percent, 0, 100, 100),
    ])

    /// ``TimePitchNode``'s parameters: `rate` (playback rate, 1/32...32), `pitch` (cents),
    /// `overlap` (analysis windows, read when the node is set up), `bypass` (0/1, per slice).
    package static let timePitch = ParameterTable([
        .init(.global, "rate", .generic, 1.0 / 32, 32, 1),
        .init(.global, "pitch", .generic, -2400, 2400, 0),
        .init(.global, "overlap", .generic, 3, 32, 8),
        .init(.global, "bypass", .boolean, 0, 1, 0),
    ])

    /// ``ReverbNode``'s parameters.
    package static let reverb = ParameterTable([
        .init(.global, "wetDryMix", .percent, 0, 100, 50),
        .init(.global, "bypass", .boolean, 0, 1, 0),
    ])

    /// ``VarispeedNode``'s parameters.
    package static let varispeed = ParameterTable([
        .init(.global, "rate", .generic, 0.25, 4, 1),
        .init(.global, "bypass", .boolean, 0, 1, 0),
    ])
}

extension ParameterTable {
    /// ``DistortionNode``'s parameters: AUDistortion's 16, with its ranges and defaults
    /// (AudioUnitParameters.h; `decimation`'s default, which the header leaves out, is 50 %).
    package static let distortion = ParameterTable([
        .init(.global, "delay", .generic, 0.1, 500, 0.1),
        .init(.global, "decay", .generic, 0.1, 50, 1),
        .init(.global, "delayMix", .percent, 0, 100, 50),
        .init(.global, "decimation", .percent, 0, 100, 50),
        .init(.global, "rounding", .percent, 0, 100, 0),
        .init(.global, "decimationMix", .percent, 0, 100, 50),
        .init(.global, "linearTerm", .linearGain, 0, 1, 1),
        .init(.global, "squaredTerm", .linearGain, 0, 20, 0),
        .init(.global, "cubicTerm", .linearGain, 0, 20, 0),
        .init(.global, "polynomialMix", .percent, 0, 100, 50),
        .init(.global, "ringModFreq1", .hertz, 0.5, 8000, 100),
        .init(.global, "ringModFreq2", .hertz, 0.5, 8000, 100),
        .init(.global, "ringModBalance", .percent, 0, 100, 50),
        .init(.global, "ringModMix", .percent, 0, 100, 0),
        .init(.global, "softClipGain", .decibels, -80, 20, -6),
        .init(.global, "finalMix", .percent, 0, 100, 50),
    ])
}
