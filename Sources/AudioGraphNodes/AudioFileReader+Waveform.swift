// A file's waveform overview (cf. EZAudioFile's getWaveformData) in one streaming pass.

extension AudioFileReader {
    /// Frames read per block by ``waveform(path:pointCount:)``.
    static let waveformBlockFrames = 8192

    /// `pointCount` points per channel summarising the whole file (cf. EZAudioFile's
    /// `getWaveformData`): point i of channel c is the minimum, maximum and RMS of channel c over
    /// frames `⌊i·F/pointCount⌋ ..< ⌊(i+1)·F/pointCount⌋` (F the file's frame count; runs of no
    /// frames, when F < pointCount, give zeros). The file is read once, block by block, so memory
    /// does not grow with its length.
    ///
    /// Thread safety: I/O; a control or worker thread, never the render thread.
    /// - Returns: one array of `pointCount` points per channel.
    /// - Throws: ``AudioFileError/invalidSettings(path:reason:)`` when `pointCount` < 1, and the
    ///   errors of opening and reading the file.
    package static func waveform(path: String, pointCount: Int) throws(AudioFileError) -> [[WaveformPoint]] {
        guard pointCount >= 1 else { throw .invalidSettings(path: path, reason: "a waveform has at least 1 point, asked for \(pointCount)") }
        let file = try SeekableAudioFileReader(path: path)
        let channelCount = file.info.channels
        let total = file.info.frames
        var points = [[WaveformPoint]](repeating: [WaveformPoint](repeating: WaveformPoint(minimum: 0, maximum: 0, rms: 0),
                                                                    count: pointCount), count: channelCount)
        var minimum = [Float](repeating: .infinity, count: channelCount)
        var maximum = [Float](repeating: -.infinity, count: channelCount)
        var squares = [Double](repeating: 0, count: channelCount)
        var block = [Float](repeating: 0, count: waveformBlockFrames * channelCount)
        var point = 0
        var pointEnd = total / Int64(pointCount)   // frames before point 0 ends
        var pointStart: Int64 = 0
        var frame: Int64 = 0

        func close(_ index: Int, frames: Int64) {
            for c in 0..<channelCount {
                if frames > 0 {
                    points[c][index] = WaveformPoint(minimum: minimum[c], maximum: maximum[c],
                                                     rms: Float((squares[c] / Double(frames)).squareRoot()))
                }
                minimum[c] = .infinity
                maximum[c] = -.infinity
                squares[c] = 0
            }
        }
        func advance() {
            // Close every point ending at `frame` (several when runs are empty).
            while point < pointCount && pointEnd <= frame {
                close(point, frames: pointEnd - pointStart)
                point += 1
                pointStart = pointEnd
                pointEnd = total * Int64(point + 1) / Int64(pointCount)
            }
        }

        advance()
        while frame < total {
            let wanted = Int64(min(Int64(waveformBlockFrames), total - frame))
            let got = block.withUnsafeMutableBufferPointer { file.read(into: $0.baseAddress!, atFrame: frame, frameCount: Int(wanted)) }
            if got < 0 { throw .ioFailed(path: path, reason: "read failed at frame \(frame)") }
            if got == 0 { throw .ioFailed(path: path, reason: "the file ends at frame \(frame), before the \(total) frames it declares") }
            var i = 0
            while i < Int(got) {
                // Frames of this block that belong to the current point.
                let run = min(Int(got) - i, Int(pointEnd - frame))
                for c in 0..<channelCount {
                    var lo = minimum[c], hi = maximum[c], sum = squares[c]
                    var k = (i * channelCount) + c
                    for _ in 0..<run {
                        let x = block[k]
                        lo = min(lo, x)
                        hi = max(hi, x)
                        sum += Double(x) * Double(x)
                        k += channelCount
                    }
                    minimum[c] = lo
                    maximum[c] = hi
                    squares[c] = sum
                }
                i += run
                frame += Int64(run)
                advance()
            }
        }
        return points
    }
}
