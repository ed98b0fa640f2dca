// The reference scripts that two test targets (the node's and its engine-API face's) share, as typed calls.
import Foundation

extension ReferenceScript {
    /// numpy's Web Audio AnalyserNode frequency data (scripts/reference/analyser_reference.py):
    /// the `blocks` of N frames analysed in order with smoothing `tau`; the N/2 dB values after the
    /// last block. The blocks are written as files in `directory`.
    /// - Throws: ``ReferenceScriptError``, or a file that cannot be written.
    public static func analyser(tau: Double, blocks: [[Float]], in directory: URL) throws -> [Double] {
        var arguments = ["\(tau)"]
        for (i, block) in blocks.enumerated() {
            let path = directory.appendingPathComponent("block\(i).f32")
            try block.withUnsafeBytes { Data($0) }.write(to: path)
            arguments.append(path.path)
        }
        return try run("analyser_reference.py", arguments: arguments).lines.map { Double($0)! }
    }

    /// numpy's Web Audio AudioBufferSourceNode playhead (scripts/reference/buffer_source_reference.py):
    /// `frames` samples of the mono buffer `x` played at `rate` buffer frames per output frame from
    /// `offset`, looping in `loopStart..<loopEnd` (buffer frames; 0: the buffer's end) when `loop`.
    /// The buffer is written as a file in `directory`.
    /// - Throws: ``ReferenceScriptError``, or a file that cannot be written.
    public static func bufferSource(_ x: [Float], rate: Double, loop: Bool, loopStart: Double, loopEnd: Double,
                                    offset: Double, frames: Int, in directory: URL) throws -> [Double] {
        let path = directory.appendingPathComponent("buffer.f32")
        try x.withUnsafeBytes { Data($0) }.write(to: path)
        return try run("buffer_source_reference.py", arguments: [
            path.path, "\(rate)", loop ? "1" : "0", "\(loopStart)", "\(loopEnd)", "\(offset)", "\(frames)"]).doubles
    }
}
