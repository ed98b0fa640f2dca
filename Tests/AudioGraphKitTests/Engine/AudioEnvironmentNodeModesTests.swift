// AudioEnvironmentNode's per-source rendering: equal-power and HRTF sources in one environment, the .auto algorithm's sourceMode and outputType.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioEnvironmentNodeModesTests: XCTestCase {
    struct Source {
        var frequency: Double
        var channels: AudioChannelCount = 1
        var position: Audio3DPoint
        var algorithm: Audio3DMixingRenderingAlgorithm
        var sourceMode: Audio3DMixingSourceMode = .spatializeIfMono
    }

    /// `sources` through one environment into the main mixer of a manual engine, `frames` frames.
    func renderSources(_ sources: [Source], outputType: AudioEnvironmentOutputType = .auto, frames: Int = 9600) throws -> [[Float]] {
        let engine = try makeManualEngine()
        let environment = AudioEnvironmentNode()
        environment.outputType = outputType
        engine.attach(environment)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        for (bus, s) in sources.enumerated() {
            let node = makeSineSource(frequency: s.frequency, channels: s.channels, amplitude: 0.4)
            engine.attach(node)
            engine.connect(node, to: environment, fromBus: 0, toBus: bus, format: nil)
            node.position = s.position
            node.renderingAlgorithm = s.algorithm
            node.sourceMode = s.sourceMode
        }
        try engine.start()
        return try render(engine, frames: frames)
    }

    func worst(_ a: [[Float]], _ b: [[Float]]) -> Float {
        var w: Float = 0
        for c in 0..<2 { for f in a[c].indices { w = max(w, abs(a[c][f] - b[c][f])) } }
        return w
    }

    /// One environment, a source on equal-power panning and one on HRTF: the output is the sum
    /// of what each makes alone (each alone is a plain equal-power or HRTF environment).
    func testEqualPowerAndHRTFSourcesShareOneEnvironment() throws {
        let a = Source(frequency: 300, position: Audio3DPoint(x: -2, y: 0, z: 0), algorithm: .equalPowerPanning)
        let b = Source(frequency: 700, position: Audio3DPoint(x: 1, y: 0, z: -1), algorithm: .HRTF)
        let both = try renderSources([a, b])
        let onlyA = try renderSources([a]), onlyB = try renderSources([b])
        let sum = (0..<2).map { c in zip(onlyA[c], onlyB[c]).map { $0 + $1 } }
        print("AudioEnvironmentNode: equal-power + HRTF in one node vs alone: worst difference \(worst(both, sum))")
        XCTAssertLessThan(worst(both, sum), 1e-6)
        // And they differ: the HRTF source is not panned by equal power.
        let bAsEqualPower = try renderSources([Source(frequency: 700, position: b.position, algorithm: .equalPowerPanning)])
        XCTAssertGreaterThan(worst(onlyB, bAsEqualPower), 0.01)
    }

    /// `.auto`: a stereo source on spatializeIfMono (or bypass, ambienceBed) passes to the output
    /// unchanged; a mono point source is binaural for headphones (`.auto` output type) and
    /// equal power for speakers; `.stereoPassThrough` is not spatialized.
    func testAutoFollowsSourceModeAndOutputType() throws {
        let far = Audio3DPoint(x: 5, y: 0, z: 3)
        let stereoSine = (0..<9600).map { sineSample(Int64($0), frequency: 440, rate: 48000, amplitude: 0.4) }
        for mode in [Audio3DMixingSourceMode.spatializeIfMono, .bypass, .ambienceBed] {
            let out = try renderSources([Source(frequency: 440, channels: 2, position: far, algorithm: .auto, sourceMode: mode)])
            XCTAssertEqual(out[0], stereoSine, "\(mode)")
            XCTAssertEqual(out[1], stereoSine, "\(mode)")
        }
        let passThrough = try renderSources([Source(frequency: 440, channels: 2, position: far, algorithm: .stereoPassThrough)])
        XCTAssertEqual(passThrough[0], stereoSine)

        let point = Source(frequency: 500, position: far, algorithm: .auto, sourceMode: .pointSource)
        let headphones = try renderSources([point], outputType: .headphones)
        XCTAssertEqual(worst(headphones, try renderSources([Source(frequency: 500, position: far, algorithm: .HRTF)])), 0)
        XCTAssertEqual(worst(try renderSources([point], outputType: .auto), headphones), 0)
        let speakers = try renderSources([point], outputType: .builtInSpeakers)
        XCTAssertEqual(worst(speakers, try renderSources([Source(frequency: 500, position: far, algorithm: .equalPowerPanning)])), 0)
        XCTAssertGreaterThan(worst(speakers, headphones), 0.01)
        // A stereo point source is down-mixed: the same as the mono one.
        var stereoPoint = point
        stereoPoint.channels = 2
        XCTAssertEqual(worst(try renderSources([stereoPoint], outputType: .externalSpeakers), speakers), 0)
    }

    /// Changing the output type while running re-renders the `.auto` sources (the environment
    /// loads the HRTF set when it needs it).
    func testOutputTypeChangesWhileRunning() throws {
        let engine = try makeManualEngine()
        let environment = AudioEnvironmentNode()
        environment.outputType = .externalSpeakers
        engine.attach(environment)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        let node = makeSineSource(frequency: 500, channels: 1, amplitude: 0.4)
        engine.attach(node)
        engine.connect(node, to: environment, format: nil)
        node.position = Audio3DPoint(x: 5, y: 0, z: 3)
        node.renderingAlgorithm = .auto
        node.sourceMode = .pointSource
        try engine.start()
        let before = try render(engine, frames: 4800)
        environment.outputType = .headphones
        _ = try render(engine, frames: 4800)
        let after = try render(engine, frames: 4800)
        XCTAssertEqual(environment.applicableRenderingAlgorithms.count, 7)
        // Equal power scales one signal into both channels (left = k·right exactly); HRTF filters
        // each ear differently (no k fits).
        func misfit(_ out: [[Float]]) -> Float {
            let l = out[0].map { Double($0) }, r = out[1].map { Double($0) }
            let k = zip(l, r).map { $0 * $1 }.reduce(0, +) / r.map { $0 * $0 }.reduce(0, +)
            return Float(zip(l, r).map { abs($0 - k * $1) }.max()!)
        }
        print("AudioEnvironmentNode: left = k·right misfit, speakers \(misfit(before)), headphones \(misfit(after))")
        XCTAssertLessThan(misfit(before), 1e-6)
        XCTAssertGreaterThan(misfit(after), 0.005)
    }
}
