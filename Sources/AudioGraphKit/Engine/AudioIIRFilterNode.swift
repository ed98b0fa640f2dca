// The engine API's IIR filter (Web Audio's IIRFilterNode surface, a Linux addition) with getFrequencyResponse.
import AudioGraphNodes
import Foundation

/// A general IIR filter (Web Audio's `IIRFilterNode`; a Linux addition): `feedforward` and
/// `feedback` coefficients as the spec takes them (1...20 each, not all feedforward zero, the
/// first feedback not zero), fixed at creation. Over the graph's `iirFilter` node
/// (``IIRFilterNode``): the recurrence in Double, the output as scipy's `lfilter` computes it.
///
/// Thread safety: the engine's; ``getFrequencyResponse(_:magResponse:phaseResponse:)`` from any
/// thread (it reads immutable coefficients).
public final class AudioIIRFilterNode: AudioNode, @unchecked Sendable {
    /// The coefficients.
    public let feedforward: [Double]
    public let feedback: [Double]

    /// A filter; throws ``AudioEngineError`` (with the spec's reason) for coefficients Web Audio
    /// refuses.
    public init(feedforward: [Double], feedback: [Double]) throws(AudioEngineError) {
        let options = IIRFilterNode.Options(feedforward: feedforward, feedback: feedback)
        if let problem = options.problem {
            throw .graph(call: "AudioIIRFilterNode(feedforward:feedback:)", .invalidProperty(node: "iirFilter", name: "feedforward/feedback", reason: problem))
        }
        self.feedforward = feedforward
        self.feedback = feedback
        super.init(kindName: "iirFilter")
    }

    /// Web Audio's `getFrequencyResponse`: for each frequency (Hz) the magnitude (linear) and
    /// phase (radians) of the filter at the rate it runs at (the engine's before it is set up);
    /// NaN outside 0...rate/2. The output arrays are filled up to the shortest length given.
    public func getFrequencyResponse(_ frequencyHz: [Float], magResponse: inout [Float], phaseResponse: inout [Float]) {
        let rate = engine?.withLock { graphNode?.processingRate } ?? nil
        let sampleRate = rate ?? engine?.renderFormat.sampleRate ?? AudioEngine.fallbackFormat.sampleRate
        let r = IIRFilterNode.frequencyResponse(.init(feedforward: feedforward, feedback: feedback),
                                                frequencies: frequencyHz.map(Double.init), sampleRate: sampleRate)
        for i in 0..<min(frequencyHz.count, magResponse.count, phaseResponse.count) {
            magResponse[i] = Float(r.magnitude[i])
            phaseResponse[i] = Float(r.phase[i])
        }
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try IIRFilterNode(id: graphID, options: .init(feedforward: feedforward, feedback: feedback))
        return declaring(outputFormat, on: node)
    }
}
