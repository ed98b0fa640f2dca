// Every settable number of the engine API, found in the symbol graph, set to any value running or not: no stop, clamped to the table.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// The engine API's knobs: every public settable `Float`/`Double`/`TimeInterval`/3D value of
/// every public class of AudioGraphKit (read from the module's symbol graph, so a new face's
/// parameter is found without being listed) must have a setter here; each is set to every
/// extreme value on an engine that is not running and on a running one.
extension AudioNodeTests {
    /// One settable number of the engine API: its symbol-graph name (`Type.property`), how to
    /// set and read it, and the table address whose range it must keep (nil: a value that is
    /// not a node parameter, held only to stay finite).
    struct Knob {
        var name: String
        var node: AudioNode?
        var address: String?
        var set: (Float) -> Void
        var get: () -> Float
        /// The protocol members it stands for (a mixing setting of one conforming class).
        var covers: [String] = []
    }

    /// The public settable numbers of AudioGraphKit's classes, by `Type.property`, from the
    /// module's symbol graph (what an application can set).
    static func settableNumbersOfTheEngineAPI() throws -> Set<String> {
        let graphs = try ArchitectureDocTests.publicSymbolGraphs(["AudioGraphKit"])
        let symbols = graphs["AudioGraphKit"] ?? []
        // Classes' own members, and protocols' (the mixing settings every source class gets
        // from `AudioMixing`'s extension, which the symbol graph lists once, under the protocol).
        let classes = Set(symbols.filter { $0.kind == "swift.class" || $0.kind == "swift.protocol" }.compactMap(\.path.last))
        let numberTypes = [": Float", ": Double", ": TimeInterval", ": Audio3DPoint", ": Audio3DAngularOrientation",
                           ": Audio3DVectorOrientation"]
        var names = Set<String>()
        for s in symbols where s.kind == "swift.property" && s.path.count == 2 && classes.contains(s.path[0]) {
            let d = s.declaration
            guard !d.contains("let "), !d.contains("static"), !d.hasSuffix("{ get }"),
                  numberTypes.contains(where: { d.contains($0 + " ") || d.hasSuffix($0) }) else { continue }
            names.insert(s.path.joined(separator: "."))
        }
        return names
    }

    /// The knobs of the mixing settings (`AudioMixing`) of `node`, named as `type`.
    static func mixingKnobs(_ type: String, _ m: any AudioMixing) -> [Knob] {
        let node = m as? AudioNode
        let knobs: [Knob] = [
            Knob(name: "\(type).volume", node: node, address: nil, set: { m.volume = $0 }, get: { m.volume }),
            Knob(name: "\(type).pan", node: node, address: nil, set: { m.pan = $0 }, get: { m.pan }),
            Knob(name: "\(type).position", node: node, address: nil, set: { m.position = AudioMake3DPoint($0, $0, $0) },
                 get: { [m.position.x, m.position.y, m.position.z].max()! }),
            Knob(name: "\(type).obstruction", node: node, address: nil, set: { m.obstruction = $0 }, get: { m.obstruction }),
            Knob(name: "\(type).occlusion", node: node, address: nil, set: { m.occlusion = $0 }, get: { m.occlusion }),
            Knob(name: "\(type).reverbBlend", node: node, address: nil, set: { m.reverbBlend = $0 }, get: { m.reverbBlend }),
            Knob(name: "\(type).rate", node: node, address: nil, set: { m.rate = $0 }, get: { m.rate }),
        ]
        return knobs.map { knob in
            var k = knob
            let property = knob.name.split(separator: ".").last!
            k.covers = ["AudioMixing", "AudioStereoMixing", "Audio3DMixing"].map { "\($0).\(property)" }
            return k
        }
    }

    /// A knob whose property is the node's table parameter of the same name (or `address`).
    static func tableKnob(_ type: String, _ property: String, _ node: AudioNode, address: String? = nil,
                          set: @escaping (Float) -> Void, get: @escaping () -> Float) -> Knob {
        Knob(name: "\(type).\(property)", node: node, address: address ?? property, set: set, get: get)
    }

    /// Apple's (and Web Audio's) documented ranges of the values that are not table parameters.
    static let documentedRanges: [String: ClosedRange<Float>] = [
        "volume": 0...4, "pan": -1...1, "position": -1e6...1e6, "obstruction": -100...0, "occlusion": -100...0,
        "reverbBlend": 0...1, "rate": 0.5...2, "outputVolume": 0...4, "listenerAngularOrientation": -180...180,
        "AudioPlayer.pan": -1...1, "AudioPlayer.rate": 0.5...2, "AudioSequencer.rate": 0...Float.greatestFiniteMagnitude,
        "AudioAnalyserNode.smoothingTimeConstant": 0...1, "AudioEnvironmentReverbParameters.level": -40...40,
    ]

    func testEverySettableNumberOfTheEngineAPIIsCoveredAndTakesAnyValue() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let engine = try makeManualEngine(maximum: 1024)
        let source = makeSineSource(frequency: 440, amplitude: 0.25)
        let mono = makeSineSource(frequency: 660, channels: 1, amplitude: 0.25)
        let player = AudioPlayerNode()
        let eq = AudioUnitEQ(numberOfBands: 2)
        let delay = AudioUnitDelay(), reverb = AudioUnitReverb(), varispeed = AudioUnitVarispeed()
        let timePitch = AudioUnitTimePitch(), distortion = AudioUnitDistortion()
        let compressor = AudioUnitDynamicsCompressor(), processor = AudioUnitDynamicsProcessor(), limiter = AudioUnitPeakLimiter()
        let gain = AudioGainNode(), panner = AudioStereoPannerNode(), constant = AudioConstantSourceNode()
        let sampler = AudioUnitSampler(), shaper = AudioUnitWaveShaper(), analyser = AudioAnalyserNode()
        let mixer = AudioMixerNode(), environment = AudioEnvironmentNode()
        let matrix = AudioUnitMatrixMixer(), bufferSource = AudioBufferSourceNode()
        let chain: [AudioNode] = [source, eq, delay, reverb, varispeed, timePitch, distortion, compressor, processor, limiter,
                                  gain, panner, shaper, matrix, analyser, mixer]
        for n in chain + [mono, player, constant, sampler, environment, bufferSource] { engine.attach(n) }
        for (a, b) in zip(chain, chain.dropFirst()) { engine.connect(a, to: b, format: nil) }
        engine.connect(mixer, to: engine.mainMixerNode, format: nil)
        engine.connect(player, to: engine.mainMixerNode, format: nil)
        engine.connect(constant, to: engine.mainMixerNode, format: nil)
        engine.connect(sampler, to: engine.mainMixerNode, format: nil)
        engine.connect(bufferSource, to: engine.mainMixerNode, format: nil)
        engine.connect(mono, to: environment, format: nil)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        environment.reverbParameters.enable = true
        eq.bands.forEach { $0.bypass = false }

        // A graph file's node through AudioEngine(contentsOf:) (a DescribedNode), the app-level
        // player and the sequencer: their numbers too.
        let graphFile = dir.appendingPathComponent("osc.json")
        try #"{ "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "mix", "type": "mixer" }, { "id": "out", "type": "genericOutput" } ], "connections": [ { "from": "osc", "to": "mix" }, { "from": "mix", "to": "out" } ] }"#
            .write(to: graphFile, atomically: true, encoding: .utf8)
        let fileEngine = try AudioEngine(contentsOf: graphFile)
        let described = try XCTUnwrap(fileEngine.node(named: "osc") as? DescribedNode)
        let wav = dir.appendingPathComponent("tone.wav").path
        try TestFiles.writeSoundFile(wav, [[Float](repeating: 0.1, count: 4800)], sampleRate: 48000)
        let audioPlayer = try AudioPlayer(contentsOf: URL(fileURLWithPath: wav))
        let sequencer = AudioSequencer(audioEngine: engine)

        var knobs: [Knob] = []
        for (type, m) in [("AudioSourceNode", source as any AudioMixing), ("AudioPlayerNode", player), ("AudioMixerNode", mixer),
                          ("AudioEnvironmentNode", environment), ("DescribedNode", described),
                          ("AudioInputNode", engine.inputNode),
                          ("AudioMixingDestination", try XCTUnwrap(player.destination(forMixer: engine.mainMixerNode,
                              bus: engine.outputConnectionPoints(for: player, outputBus: 0).first!.bus)))] {
            knobs += Self.mixingKnobs(type, m)
        }
        let e = environment
        knobs += [
            Self.tableKnob("AudioUnitEQ", "globalGain", eq, set: { eq.globalGain = $0 }, get: { eq.globalGain }),
            Self.tableKnob("AudioUnitDelay", "delayTime", delay, set: { delay.delayTime = TimeInterval($0) }, get: { Float(delay.delayTime) }),
            Self.tableKnob("AudioUnitDelay", "feedback", delay, set: { delay.feedback = $0 }, get: { delay.feedback }),
            Self.tableKnob("AudioUnitDelay", "lowPassCutoff", delay, set: { delay.lowPassCutoff = $0 }, get: { delay.lowPassCutoff }),
            Self.tableKnob("AudioUnitDelay", "wetDryMix", delay, set: { delay.wetDryMix = $0 }, get: { delay.wetDryMix }),
            Self.tableKnob("AudioUnitReverb", "wetDryMix", reverb, set: { reverb.wetDryMix = $0 }, get: { reverb.wetDryMix }),
            Self.tableKnob("AudioUnitVarispeed", "rate", varispeed, set: { varispeed.rate = $0 }, get: { varispeed.rate }),
            Self.tableKnob("AudioUnitTimePitch", "rate", timePitch, set: { timePitch.rate = $0 }, get: { timePitch.rate }),
            Self.tableKnob("AudioUnitTimePitch", "pitch", timePitch, set: { timePitch.pitch = $0 }, get: { timePitch.pitch }),
            Self.tableKnob("AudioUnitTimePitch", "overlap", timePitch, set: { timePitch.overlap = $0 }, get: { timePitch.overlap }),
            Self.tableKnob("AudioUnitDistortion", "preGain", distortion, set: { distortion.preGain = $0 }, get: { distortion.preGain }),
            Self.tableKnob("AudioUnitDistortion", "wetDryMix", distortion, address: "finalMix",
                           set: { distortion.wetDryMix = $0 }, get: { distortion.wetDryMix }),
            Self.tableKnob("AudioUnitDynamicsCompressor", "threshold", compressor, set: { compressor.threshold = $0 }, get: { compressor.threshold }),
            Self.tableKnob("AudioUnitDynamicsCompressor", "knee", compressor, set: { compressor.knee = $0 }, get: { compressor.knee }),
            Self.tableKnob("AudioUnitDynamicsCompressor", "ratio", compressor, set: { compressor.ratio = $0 }, get: { compressor.ratio }),
            Self.tableKnob("AudioUnitDynamicsCompressor", "attack", compressor, set: { compressor.attack = $0 }, get: { compressor.attack }),
            Self.tableKnob("AudioUnitDynamicsCompressor", "release", compressor, set: { compressor.release = $0 }, get: { compressor.release }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "threshold", processor, set: { processor.threshold = $0 }, get: { processor.threshold }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "headRoom", processor, set: { processor.headRoom = $0 }, get: { processor.headRoom }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "expansionRatio", processor,
                           set: { processor.expansionRatio = $0 }, get: { processor.expansionRatio }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "expansionThreshold", processor,
                           set: { processor.expansionThreshold = $0 }, get: { processor.expansionThreshold }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "attackTime", processor, set: { processor.attackTime = $0 }, get: { processor.attackTime }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "releaseTime", processor, set: { processor.releaseTime = $0 }, get: { processor.releaseTime }),
            Self.tableKnob("AudioUnitDynamicsProcessor", "overallGain", processor, set: { processor.overallGain = $0 }, get: { processor.overallGain }),
            Self.tableKnob("AudioUnitPeakLimiter", "attackTime", limiter, set: { limiter.attackTime = $0 }, get: { limiter.attackTime }),
            Self.tableKnob("AudioUnitPeakLimiter", "decayTime", limiter, set: { limiter.decayTime = $0 }, get: { limiter.decayTime }),
            Self.tableKnob("AudioUnitPeakLimiter", "preGain", limiter, set: { limiter.preGain = $0 }, get: { limiter.preGain }),
            Self.tableKnob("AudioUnitPeakLimiter", "ceiling", limiter, set: { limiter.ceiling = $0 }, get: { limiter.ceiling }),
            Self.tableKnob("AudioGainNode", "gain", gain, set: { gain.gain = $0 }, get: { gain.gain }),
            Self.tableKnob("AudioStereoPannerNode", "pan", panner, set: { panner.pan = $0 }, get: { panner.pan }),
            Self.tableKnob("AudioConstantSourceNode", "offset", constant, set: { constant.offset = $0 }, get: { constant.offset }),
            Self.tableKnob("AudioUnitSampler", "masterGain", sampler, address: "gain", set: { sampler.masterGain = $0 }, get: { sampler.masterGain }),
            Self.tableKnob("AudioUnitSampler", "stereoPan", sampler, address: "pan", set: { sampler.stereoPan = $0 }, get: { sampler.stereoPan }),
            Self.tableKnob("AudioUnitSampler", "globalTuning", sampler, address: "tuning",
                           set: { sampler.globalTuning = $0 }, get: { sampler.globalTuning }),
            Self.tableKnob("AudioUnitMatrixMixer", "masterVolume", matrix, address: "volume",
                           set: { matrix.masterVolume = $0 }, get: { matrix.masterVolume }),
            Self.tableKnob("AudioBufferSourceNode", "playbackRate", bufferSource,
                           set: { bufferSource.playbackRate = $0 }, get: { bufferSource.playbackRate }),
            Self.tableKnob("AudioBufferSourceNode", "detune", bufferSource, set: { bufferSource.detune = $0 }, get: { bufferSource.detune }),
            Knob(name: "AudioBufferSourceNode.loopStart", node: bufferSource, address: nil,
                 set: { bufferSource.loopStart = TimeInterval($0) }, get: { Float(bufferSource.loopStart) }),
            Knob(name: "AudioBufferSourceNode.loopEnd", node: bufferSource, address: nil,
                 set: { bufferSource.loopEnd = TimeInterval($0) }, get: { Float(bufferSource.loopEnd) }),
            Knob(name: "AudioMixerNode.outputVolume", node: mixer, address: nil, set: { mixer.outputVolume = $0; engine.mainMixerNode.outputVolume = $0 },
                 get: { max(mixer.outputVolume, engine.mainMixerNode.outputVolume) }),
            Knob(name: "AudioEnvironmentNode.outputVolume", node: e, address: nil, set: { e.outputVolume = $0 }, get: { e.outputVolume }),
            Knob(name: "AudioEnvironmentNode.listenerPosition", node: e, address: nil,
                 set: { e.listenerPosition = AudioMake3DPoint($0, $0, $0) }, get: { e.listenerPosition.x }),
            Knob(name: "AudioEnvironmentNode.listenerAngularOrientation", node: e, address: nil,
                 set: { e.listenerAngularOrientation = AudioMake3DAngularOrientation($0, $0, $0) },
                 get: { [e.listenerAngularOrientation.yaw, e.listenerAngularOrientation.pitch, e.listenerAngularOrientation.roll].max()! }),
            Knob(name: "AudioEnvironmentNode.listenerVectorOrientation", node: e, address: nil,
                 set: { e.listenerVectorOrientation = AudioMake3DVectorOrientation(AudioMake3DPoint($0, 0, -1), AudioMake3DPoint(0, $0, 0)) },
                 get: { e.listenerVectorOrientation.forward.z }),
            Knob(name: "AudioEnvironmentDistanceAttenuationParameters.referenceDistance", node: e, address: nil,
                 set: { e.distanceAttenuationParameters.referenceDistance = $0 }, get: { e.distanceAttenuationParameters.referenceDistance }),
            Knob(name: "AudioEnvironmentDistanceAttenuationParameters.maximumDistance", node: e, address: nil,
                 set: { e.distanceAttenuationParameters.maximumDistance = $0 }, get: { e.distanceAttenuationParameters.maximumDistance }),
            Knob(name: "AudioEnvironmentDistanceAttenuationParameters.rolloffFactor", node: e, address: nil,
                 set: { e.distanceAttenuationParameters.rolloffFactor = $0 }, get: { e.distanceAttenuationParameters.rolloffFactor }),
            Knob(name: "AudioEnvironmentReverbParameters.level", node: e, address: nil,
                 set: { e.reverbParameters.level = $0 }, get: { e.reverbParameters.level }),
            Knob(name: "AudioAnalyserNode.smoothingTimeConstant", node: analyser, address: nil,
                 set: { analyser.smoothingTimeConstant = Double($0) }, get: { Float(analyser.smoothingTimeConstant) }),
            Knob(name: "AudioAnalyserNode.minDecibels", node: analyser, address: nil,
                 set: { analyser.minDecibels = Double($0) }, get: { Float(analyser.minDecibels) }),
            Knob(name: "AudioAnalyserNode.maxDecibels", node: analyser, address: nil,
                 set: { analyser.maxDecibels = Double($0) }, get: { Float(analyser.maxDecibels) }),
            Knob(name: "AudioIONode.preferredLatency", node: nil, address: nil,
                 set: { engine.outputNode.preferredLatency = TimeInterval($0) }, get: { Float(engine.outputNode.preferredLatency) }),
            Knob(name: "AudioIONode.requestedLatency", node: nil, address: nil,
                 set: { engine.outputNode.requestedLatency = Double($0) }, get: { Float(engine.outputNode.requestedLatency) }),
            Knob(name: "AudioPlayer.currentTime", node: nil, address: nil,
                 set: { audioPlayer.currentTime = TimeInterval($0) }, get: { Float(audioPlayer.currentTime) }),
            Knob(name: "AudioPlayer.volume", node: nil, address: nil, set: { audioPlayer.volume = $0 }, get: { audioPlayer.volume }),
            Knob(name: "AudioPlayer.pan", node: nil, address: nil, set: { audioPlayer.pan = $0 }, get: { audioPlayer.pan }),
            Knob(name: "AudioPlayer.rate", node: nil, address: nil, set: { audioPlayer.rate = $0 }, get: { audioPlayer.rate }),
            Knob(name: "AudioSequencer.currentPositionInSeconds", node: nil, address: nil,
                 set: { sequencer.currentPositionInSeconds = TimeInterval($0) }, get: { Float(sequencer.currentPositionInSeconds) }),
            Knob(name: "AudioSequencer.currentPositionInBeats", node: nil, address: nil,
                 set: { sequencer.currentPositionInBeats = TimeInterval($0) }, get: { Float(sequencer.currentPositionInBeats) }),
            Knob(name: "AudioSequencer.rate", node: nil, address: nil, set: { sequencer.rate = $0 }, get: { sequencer.rate }),
        ]
        for (index, band) in eq.bands.enumerated() {
            knobs.append(Self.tableKnob("AudioUnitEQFilterParameters", "frequency", eq, address: "band.\(index).frequency",
                                        set: { band.frequency = $0 }, get: { band.frequency }))
            knobs.append(Self.tableKnob("AudioUnitEQFilterParameters", "gain", eq, address: "band.\(index).gain",
                                        set: { band.gain = $0 }, get: { band.gain }))
            knobs.append(Knob(name: "AudioUnitEQFilterParameters.bandwidth", node: eq, address: nil,
                              set: { band.bandwidth = $0 }, get: { band.bandwidth }))
        }
        let filter = e.reverbParameters.filterParameters
        knobs += [
            Knob(name: "AudioUnitEQFilterParameters.frequency", node: e, address: nil, set: { filter.frequency = $0 }, get: { filter.frequency }),
            Knob(name: "AudioUnitEQFilterParameters.gain", node: e, address: nil, set: { filter.gain = $0 }, get: { filter.gain }),
            Knob(name: "AudioUnitEQFilterParameters.bandwidth", node: e, address: nil, set: { filter.bandwidth = $0 }, get: { filter.bandwidth }),
        ]

        // Every settable number an application sees has a knob here: a new face's parameter
        // fails this until it is added (and so tested below).
        let api = try Self.settableNumbersOfTheEngineAPI()
        XCTAssertGreaterThan(api.count, 60, "the symbol graph was read: \(api.sorted())")
        XCTAssertEqual(api.subtracting(knobs.flatMap { [$0.name] + $0.covers }).sorted(), [], "settable numbers without a knob in this test")
        XCTAssertEqual(Set(knobs.filter(\.covers.isEmpty).map(\.name)).subtracting(api).sorted(), [], "knobs that are not public settable numbers")

        /// The value a knob reports after being set to `v` must be finite (for a finite `v`: an
        /// infinity before `start()` may stand for "up to Nyquist", which is not known yet) and, for a table
        /// parameter, inside the table's range (Nyquist once the rate is known); for the others
        /// inside the documented range where one is written above.
        func check(_ knob: Knob, after v: Float, running: Bool) {
            let x = knob.get()
            XCTAssertTrue(x.isFinite || !v.isFinite, "\(knob.name) = \(x) after setting \(v) (running: \(running))")
            if let node = knob.node, let address = knob.address, let a = ParameterAddress(address),
               let info = node.parameterTable.parameterInfo(for: a, sampleRate: running ? 48000 : .infinity, inputBusCount: .max, bandCount: .max) {
                XCTAssertTrue(x >= Float(info.minValue) && x <= Float(info.maxValue),
                              "\(knob.name) = \(x) after setting \(v) (running: \(running)): outside the table's \(info.minValue)...\(info.maxValue)")
            } else if let range = Self.documentedRanges[knob.name] ?? Self.documentedRanges[String(knob.name.split(separator: ".").last!)] {
                XCTAssertTrue(range.contains(x), "\(knob.name) = \(x) after setting \(v) (running: \(running)): outside \(range)")
            }
        }

        for v in Self.extremes {
            for knob in knobs { knob.set(v); check(knob, after: v, running: false) }
        }
        for knob in knobs { knob.set(1) }
        try engine.start()
        try fileEngine.enableManualRenderingMode(.offline, format: engine.manualRenderingFormat, maximumFrameCount: 1024)
        try fileEngine.start()
        _ = try render(engine, frames: 1024, piece: 1024)
        for v in Self.extremes {
            for knob in knobs { knob.set(v); check(knob, after: v, running: true) }
            _ = try render(engine, frames: 1024, piece: 1024)
            _ = try render(fileEngine, frames: 1024, piece: 1024)
        }
        XCTAssertEqual(engine.editFaultCount, 0, "\(String(describing: engine.lastEditFault))")
        XCTAssertEqual(fileEngine.editFaultCount, 0, "\(String(describing: fileEngine.lastEditFault))")
        engine.stop()
        fileEngine.stop()
    }
}
