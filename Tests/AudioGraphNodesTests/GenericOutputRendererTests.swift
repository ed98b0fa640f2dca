// Tests of GenericOutputRenderer: the client format's rate and channel count, not the graph's.
import AudioGraphNodes
import AudioGraphTesting
import XCTest

final class GenericOutputRendererTests: XCTestCase {
    private func makeGraph(client: PartialStreamFormat) throws -> AudioGraph {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        try graph.addNode(OscillatorNode(id: "osc", sampleRate: 48000,
                                         properties: OscillatorProperties(waveform: .sine, channels: 1)))
        try graph.node("osc")!.setParameter("frequency", 1000)
        try graph.node("osc")!.setParameter("amplitude", 0.5)
        try graph.addNode(GenericOutputNode(id: "out", clientFormat: client))
        try graph.connect("osc", to: "out")
        try graph.initialize()
        try graph.start()
        return graph
    }

    private func render(_ renderer: GenericOutputRenderer, frames: Int) -> [[Float]] {
        let channels = renderer.clientFormat.channelCount
        let storage = ChannelBufferStorage(channelCount: channels, capacity: frames)
        var pointers = (0..<channels).map { storage.list.channel($0) }
        pointers.withUnsafeMutableBufferPointer { _ = renderer.render(frameCount: frames, into: UnsafeBufferPointer($0)) }
        return (0..<channels).map { Array(UnsafeBufferPointer(start: storage.list.channel($0), count: frames)) }
    }

    func testClientChannelsAreMixedUpExactly() throws {
        let graph = try makeGraph(client: PartialStreamFormat(channelCount: 2))
        let renderer = try GenericOutputRenderer(graph: graph)
        XCTAssertEqual(renderer.clientFormat, StreamFormat(sampleRate: 48000, channelCount: 2))
        let out = render(renderer, frames: 1000)
        // Mono to stereo ("speakers"): the same samples on both sides, the oscillator's formula.
        for n in 0..<1000 {
            XCTAssertEqual(out[0][n], Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000)), accuracy: 1e-6)
            XCTAssertEqual(out[1][n], out[0][n])
        }
    }

    func testClientRateIsConvertedWhereGraphRenderIsNot() throws {
        let graph = try makeGraph(client: PartialStreamFormat(sampleRate: 44100, channelCount: 2))
        let renderer = try GenericOutputRenderer(graph: graph)
        XCTAssertEqual(renderer.clientFormat.sampleRate, 44100)
        let out = render(renderer, frames: 44100)
        // One second at 44.1 kHz: a 1000 Hz tone of amplitude 0.5 (past the converter's start).
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: out[0][4410...], sampleRate: 44100))
        XCTAssertEqual(fit.tones[0].frequency, 1000, accuracy: 0.01)
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 1e-3)
        XCTAssertLessThan(fit.thdPlusNoiseDB, -90)
        XCTAssertEqual(out[1], out[0])
        // 44100 client frames took one second of the graph's 48 kHz timeline (plus the converter's look-ahead).
        XCTAssertGreaterThanOrEqual(graph.renderSampleTime, 48000)
        XCTAssertLessThan(graph.renderSampleTime, 48000 + 8192)
    }

    func testAGraphWhoseOutputIsNotGenericIsRefused() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        XCTAssertThrowsError(try GenericOutputRenderer(graph: graph))
    }
}
