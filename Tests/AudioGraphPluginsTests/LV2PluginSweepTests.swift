// Every LV2 plugin installed on the machine, at extreme controls, fed NaN and infinity: nothing crashes or leaks out.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphPlugins

/// The sweep of issue 22: each hostable plugin of the shared catalogue (Debian's swh-lv2 here:
/// 107 plugins) renders a tone with NaN and infinite samples at its default controls, with every
/// control at its minimum, and with every control at its maximum. Whatever the plugin does, the
/// node's output stays finite and within ±``LV2RenderFaults/defaultOutputLimit``, and the
/// non-finite input is counted (the plugin never sees it). Quick by default (0.05 s per
/// render); `AG_PLUGIN_SWEEP=full` renders 1 s with a second, louder tone and at 44.1 kHz too.
final class LV2PluginSweepTests: XCTestCase {
    static let poisonedFrames: Set<Int64> = [64, 65, 66, 700, 1500]

    static func signal(_ channel: Int, _ n: Int64, amplitude: Double) -> Float {
        if poisonedFrames.contains(n) { return n % 2 == 0 ? .nan : (channel == 0 ? .infinity : -.infinity) }
        return Float(amplitude * sin(2 * Double.pi * (220 + 110 * Double(channel)) * Double(n) / 48000))
    }

    func testEveryInstalledPluginContainsNonFiniteAndRunawayAudio() throws {
        let full = ProcessInfo.processInfo.environment["AG_PLUGIN_SWEEP"] == "full"
        let frames = full ? 48000 : 2400
        let plugins = try LV2World.shared().plugins
        var renders = 0, hosted = 0, muted: [String] = [], refused = 0
        let started = Date()
        for info in plugins {
            guard (try? LV2Node(id: "fx", plugin: info)) != nil else { refused += 1; continue }
            hosted += 1
            let settings: [(String, (LV2PortInfo) -> Double?)] = [("default", { _ in nil }), ("minimum", { $0.minimum }), ("maximum", { $0.maximum })]
            for (settingName, value) in settings {
                for (rate, amplitude) in full ? [(48000.0, 0.5), (44100.0, 0.99)] : [(48000.0, 0.5)] {
                    let node = try LV2Node(id: "fx", plugin: info)
                    for port in info.controlInputs {
                        guard let v = value(port), let p = node.parameter(port.symbol) else { continue }
                        try p.setValue(min(max(v, p.info.minValue), p.info.maxValue))
                    }
                    let inputs = info.audioInputs.count
                    let graph: AudioGraph
                    if inputs == 0 {
                        graph = try startedChain([node], ["fx"], sampleRate: rate)
                    } else {
                        let channels = info.runsPerChannel ? 1 : inputs
                        let src = formulaSource("src", channels: channels) { c, n in Self.signal(c, n, amplitude: amplitude) }
                        graph = try startedChain([src, node], ["src", "fx"], sampleRate: rate)
                    }
                    let out = renderFrames(graph, frames: frames, channels: node.outputFormats[0].channelCount)
                    renders += 1
                    for (c, channel) in out.enumerated() {
                        if let bad = channel.firstIndex(where: { !$0.isFinite || abs($0) > LV2RenderFaults.defaultOutputLimit }) {
                            XCTFail("\(info.uri) (\(settingName), \(rate) Hz): channel \(c) frame \(bad) is \(channel[bad])")
                            break
                        }
                    }
                    if inputs > 0 {
                        XCTAssertEqual(node.renderFaults.nonFiniteInputSamples, Self.poisonedFrames.filter { $0 < frames }.count * inputs,
                                       "\(info.uri) (\(settingName))")
                    }
                    if node.renderFaults.isMuted { muted.append("\(info.uri.split(separator: "/").last!) (\(settingName))") }
                    graph.stop()
                    graph.uninitialize()
                }
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print("LV2 sweep: \(plugins.count) plugins, \(hosted) hosted, \(refused) not hostable, \(renders) renders in "
              + String(format: "%.1f", seconds) + " s; muted for runaway output: \(muted.count): \(muted.joined(separator: ", "))")
        XCTAssertGreaterThan(hosted, 0, "swh-lv2 is installed (Makefile DEB_PACKAGES)")
    }
}
