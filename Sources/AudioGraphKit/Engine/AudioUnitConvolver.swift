// The engine API's convolution reverb (Web Audio's ConvolverNode; a Linux addition) over the graph's convolver node.
import AudioGraphNodes
import Foundation

/// Convolution with an impulse response from a sound file (a Linux addition, Web Audio's
/// `ConvolverNode`), the graph's `convolver` node: 1, 2 or 4 channels at any rate (converted to
/// the engine's), ``normalize`` as Web Audio defines it, no added latency. The output is mono
/// for a mono input and a mono response, stereo otherwise (Web Audio's channel rules). The file
/// is read when the engine builds its graph (`start()`/`prepare()`), which throws if it cannot
/// be used. Bypass is not supported by this unit (a convolver has no dry path; it is ignored).
///
/// Thread safety: the engine's.
public final class AudioUnitConvolver: AudioUnitEffect, @unchecked Sendable {
    /// The impulse response file.
    public let impulseResponseURL: URL
    /// Whether the response is scaled by Web Audio's normalization (true by default).
    public let normalize: Bool

    /// A convolver with the response in `url`.
    public init(impulseResponseURL url: URL, normalize: Bool = true) {
        impulseResponseURL = url
        self.normalize = normalize
        super.init(kindName: "convolver")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try ConvolverNode(id: graphID, sampleRate: sampleRate,
                                     properties: ConvolverProperties(file: impulseResponseURL.path, normalize: normalize))
        if let rate = outputFormat?.sampleRate { node.declaredFormat = PartialStreamFormat(sampleRate: rate) }
        return node
    }
}
