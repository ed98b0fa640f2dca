// AudioConverter against sox/libsoxr, the sample-format formulas, and its own one-shot output when streamed in odd pieces.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioConverterTests: XCTestCase {

    // MARK: Helpers

    /// A buffer of `format` holding `channels` (one array per channel, values in the format's own
    /// scale: floats for float formats, integers for integer ones).
    private func buffer(_ format: AudioFormat, _ channels: [[Double]]) throws -> AudioPCMBuffer {
        let frames = channels[0].count
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(frames)))
        b.frameLength = AudioFrameCount(frames)
        let list = UnsafeMutableAudioBufferListPointer(b.mutableAudioBufferList)
        let n = channels.count
        for c in 0..<n {
            let buf = list[format.isInterleaved ? 0 : c]
            let step = format.isInterleaved ? n : 1
            let off = format.isInterleaved ? c : 0
            for f in 0..<frames {
                let v = channels[c][f]
                switch format.commonFormat {
                case .pcmFormatFloat32: buf.mData!.assumingMemoryBound(to: Float.self)[f * step + off] = Float(v)
                case .pcmFormatFloat64: buf.mData!.assumingMemoryBound(to: Double.self)[f * step + off] = v
                case .pcmFormatInt16: buf.mData!.assumingMemoryBound(to: Int16.self)[f * step + off] = Int16(v)
                case .pcmFormatInt32: buf.mData!.assumingMemoryBound(to: Int32.self)[f * step + off] = Int32(v)
                default: XCTFail("format")
                }
            }
        }
        return b
    }

    /// The valid frames of `b`, one array per channel, in the format's own scale.
    private func samples(_ b: AudioPCMBuffer) -> [[Double]] {
        let format = b.format
        let n = Int(format.channelCount)
        let list = UnsafeMutableAudioBufferListPointer(b.mutableAudioBufferList)
        return (0..<n).map { c in
            let buf = list[format.isInterleaved ? 0 : c]
            let step = format.isInterleaved ? n : 1
            let off = format.isInterleaved ? c : 0
            return (0..<Int(b.frameLength)).map { f -> Double in
                switch format.commonFormat {
                case .pcmFormatFloat32: return Double(buf.mData!.assumingMemoryBound(to: Float.self)[f * step + off])
                case .pcmFormatFloat64: return buf.mData!.assumingMemoryBound(to: Double.self)[f * step + off]
                case .pcmFormatInt16: return Double(buf.mData!.assumingMemoryBound(to: Int16.self)[f * step + off])
                case .pcmFormatInt32: return Double(buf.mData!.assumingMemoryBound(to: Int32.self)[f * step + off])
                default: return .nan
                }
            }
        }
    }

    /// Runs a tool; throws (failing the test) when it does not exit 0.
    private func run(_ arguments: [String]) throws {
        try ReferenceScript.runTool(arguments)
    }

    /// A deterministic test signal: two tones and noise per channel, peak about 0.8.
    private func signal(frames: Int, rate: Double, channels: Int, seed: UInt64 = 7, noise: Double = 0.1) -> [[Double]] {
        var random = SeededRandom(seed: seed)
        return (0..<channels).map { c in
            let f1 = 440.0 * Double(c + 1), f2 = 3_100.0 + 700 * Double(c)
            return (0..<frames).map { i in
                let t = Double(i) / rate
                return 0.4 * sin(2 * .pi * f1 * t) + 0.3 * sin(2 * .pi * f2 * t) + noise * Double.random(in: -1...1, using: &random)
            }
        }
    }

    /// Streams `input` (one array per channel, in `converter.inputFormat`'s scale) through the
    /// converter in input pieces of `inputPieces` sizes (cycled) and output buffers of
    /// `outputPieces` capacities (cycled), ending the stream after the input; returns the output
    /// and the statuses seen.
    private func stream(_ converter: AudioConverter, _ input: [[Double]], inputPieces: [Int], outputPieces: [Int],
                        runDryEvery: Int = 0) throws -> (output: [[Double]], statuses: [AudioConverterOutputStatus]) {
        let total = input[0].count
        var position = 0
        var pieceIndex = 0
        var calls = 0
        var output = [[Double]](repeating: [], count: Int(converter.outputFormat.channelCount))
        var statuses: [AudioConverterOutputStatus] = []
        var outIndex = 0
        while true {
            let capacity = outputPieces[outIndex % outputPieces.count]
            outIndex += 1
            let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: converter.outputFormat, frameCapacity: AudioFrameCount(capacity)))
            var error: NSError?
            let status = converter.convert(to: out, error: &error) { _, outStatus in
                calls += 1
                if runDryEvery > 0 && calls % runDryEvery == 0 {
                    outStatus.pointee = .noDataNow
                    return nil
                }
                guard position < total else {
                    outStatus.pointee = .endOfStream
                    return nil
                }
                let n = min(inputPieces[pieceIndex % inputPieces.count], total - position)
                pieceIndex += 1
                let piece = try? self.buffer(converter.inputFormat, input.map { Array($0[position..<(position + n)]) })
                position += n
                outStatus.pointee = .haveData
                return piece
            }
            XCTAssertNil(error)
            statuses.append(status)
            let got = samples(out)
            for c in output.indices { output[c] += got[c] }
            if status == .endOfStream || status == .error || statuses.count > 100_000 { break }
        }
        return (output, statuses)
    }

    private func rmsDifferenceDB(_ a: [Double], _ b: [Double], reference: [Double]) -> Double {
        let n = min(a.count, b.count)
        var e = 0.0, s = 0.0
        for i in 0..<n { e += (a[i] - b[i]) * (a[i] - b[i]); s += reference[i] * reference[i] }
        return 10 * log10(e / s)
    }

    // MARK: convert(to:from:)

    /// Float32 to Int16 as sox converts (scale 32768, round, clip); checked sample for sample
    /// against `sox -D` (no dither) on the same samples, including values that clip.
    func testFloatToInt16MatchesSox() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let rate = 48_000.0
        var ch = signal(frames: 4_800, rate: rate, channels: 2)
        ch[0] += [1.0, -1.0, 1.5, -1.5, 0.5, -0.5, 0.999_99]
        ch[1] += [0.25, -0.25, 0, 1e-6, -1e-6, 0.75, -1.0]
        let inFormat = AudioFormat(standardFormatWithSampleRate: rate, channels: 2)!
        let outFormat = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: rate, channels: 2, interleaved: true)!
        let converter = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        let input = try buffer(inFormat, ch)
        let output = try XCTUnwrap(AudioPCMBuffer(pcmFormat: outFormat, frameCapacity: input.frameLength))
        try converter.convert(to: output, from: input)
        XCTAssertEqual(output.frameLength, input.frameLength)
        let ours = samples(output)

        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, ch.map { $0.map(Float.init) }, sampleRate: rate)
        try run(["sox", "-D", dir.appendingPathComponent("in.wav").path, "-b", "16", "-e", "signed-integer",
                 dir.appendingPathComponent("sox.wav").path])
        let sox = try WAVFile(contentsOf: dir.appendingPathComponent("sox.wav"))
        XCTAssertEqual(sox.sampleType, .int16)
        var mismatches = 0, ties = 0
        for c in 0..<2 {
            for i in 0..<ours[c].count where ours[c][i] != (sox.samples[c][i] * 32768).rounded() {
                // sox rounds exact ties up; the converter rounds them to even (as lrint does).
                let scaled = Double(Float(ch[c][i])) * 32768
                if scaled - scaled.rounded(.down) == 0.5 && ours[c][i] == scaled.rounded(.toNearestOrEven) {
                    ties += 1
                } else {
                    mismatches += 1
                }
            }
        }
        XCTAssertEqual(mismatches, 0, "samples that differ from sox's Int16 conversion (other than ties)")
        print("Float32 -> Int16: \(ours[0].count * 2) samples, \(ties) exact ties rounded to even, \(mismatches) other differences from sox")
        // Clipping and exact values, by the formula.
        let n = 4_800
        XCTAssertEqual(ours[0][n..<(n + 7)].map { $0 }, [32767, -32768, 32767, -32768, 16384, -16384, 32767])
        XCTAssertEqual(ours[1][n..<(n + 7)].map { $0 }, [8192, -8192, 0, 0, 0, 24576, -32768])
    }

    /// Int16 and Int32 to floats by 2^15 and 2^31; Int32 -> Float64 -> Int32 and interleaving
    /// round trips are exact.
    func testIntegerScalingAndExactRoundTrips() throws {
        let rate = 44_100.0
        let i16 = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: rate, channels: 2, interleaved: true)!
        let f32 = AudioFormat(standardFormatWithSampleRate: rate, channels: 2)!
        let values16: [Double] = [-32768, -1, 0, 1, 16384, 32767]
        let b16 = try buffer(i16, [values16, values16.reversed()])
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f32, frameCapacity: 6))
        try XCTUnwrap(AudioConverter(from: i16, to: f32)).convert(to: out, from: b16)
        XCTAssertEqual(samples(out)[0], values16.map { $0 / 32768 })
        XCTAssertEqual(samples(out)[1], values16.reversed().map { $0 / 32768 })

        let i32 = AudioFormat(commonFormat: .pcmFormatInt32, sampleRate: rate, channels: 3, interleaved: false)!
        let f64 = AudioFormat(commonFormat: .pcmFormatFloat64, sampleRate: rate, channels: 3, interleaved: true)!
        var random = SeededRandom(seed: 3)
        let values32 = (0..<3).map { _ in (0..<1000).map { _ in Double(Int32(truncatingIfNeeded: random.next())) } }
        let b32 = try buffer(i32, values32)
        let mid = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f64, frameCapacity: 1000))
        try XCTUnwrap(AudioConverter(from: i32, to: f64)).convert(to: mid, from: b32)
        XCTAssertEqual(samples(mid)[2], values32[2].map { $0 / 2_147_483_648 })
        let back = try XCTUnwrap(AudioPCMBuffer(pcmFormat: i32, frameCapacity: 1000))
        try XCTUnwrap(AudioConverter(from: f64, to: i32)).convert(to: back, from: mid)
        XCTAssertEqual(samples(back), values32)
    }

    /// The channel map: the default takes the first channels and copies mono everywhere; a set
    /// map routes (-1 silence); downmix mixes stereo to mono as (L + R) / 2.
    func testChannelMapAndDownmix() throws {
        let rate = 48_000.0
        let stereo = AudioFormat(standardFormatWithSampleRate: rate, channels: 2)!
        let mono = AudioFormat(standardFormatWithSampleRate: rate, channels: 1)!
        let l: [Double] = [0.5, -0.25, 0.125], r: [Double] = [0.25, 0.25, -0.5]
        let input = try buffer(stereo, [l, r])

        let toMono = try XCTUnwrap(AudioConverter(from: stereo, to: mono))
        XCTAssertEqual(toMono.channelMap.map(\.intValue), [0])
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: mono, frameCapacity: 3))
        try toMono.convert(to: out, from: input)
        XCTAssertEqual(samples(out)[0], l)
        toMono.downmix = true
        try toMono.convert(to: out, from: input)
        XCTAssertEqual(samples(out)[0], zip(l, r).map { ($0 + $1) / 2 })
        toMono.downmix = false
        toMono.channelMap = [1]
        try toMono.convert(to: out, from: input)
        XCTAssertEqual(samples(out)[0], r)

        let toStereo = try XCTUnwrap(AudioConverter(from: mono, to: stereo))
        XCTAssertEqual(toStereo.channelMap.map(\.intValue), [0, 0])
        let out2 = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo, frameCapacity: 3))
        try toStereo.convert(to: out2, from: try buffer(mono, [l]))
        XCTAssertEqual(samples(out2), [l, l])

        let swap = try XCTUnwrap(AudioConverter(from: stereo, to: stereo))
        swap.channelMap = [1, -1]
        try swap.convert(to: out2, from: input)
        XCTAssertEqual(samples(out2), [r, [0, 0, 0]])
    }

    /// convert(to:from:) refuses a rate change, a short output and a wrong buffer format with
    /// kAudio_ParamError (-50), as Apple's does.
    func testConvertToFromRefusesRateChangeAndShortOutput() throws {
        let a = AudioFormat(standardFormatWithSampleRate: 44_100, channels: 1)!
        let b = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 1)!
        let input = try buffer(a, [[0.1, 0.2, 0.3, 0.4]])
        let converter = try XCTUnwrap(AudioConverter(from: a, to: b))
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: b, frameCapacity: 100))
        XCTAssertThrowsError(try converter.convert(to: out, from: input)) { error in
            XCTAssertEqual((error as NSError).code, -50)
            XCTAssertEqual((error as NSError).domain, NSOSStatusErrorDomain)
            XCTAssertTrue(error.localizedDescription.contains("sample rate"), error.localizedDescription)
        }
        let same = try XCTUnwrap(AudioConverter(from: a, to: a))
        let short = try XCTUnwrap(AudioPCMBuffer(pcmFormat: a, frameCapacity: 3))
        XCTAssertThrowsError(try same.convert(to: short, from: input)) { XCTAssertEqual(($0 as NSError).code, -50) }
        XCTAssertThrowsError(try same.convert(to: out, from: input)) { XCTAssertEqual(($0 as NSError).code, -50) }
        XCTAssertNil(AudioConverter(from: a, to: AudioFormat(standardFormatWithSampleRate: 44_100 * 300, channels: 1)!))
    }

    // MARK: Sample-rate conversion

    /// The microphone-to-speech case written as Apple's sample code writes it (a tap's 48 kHz
    /// Float32 stereo buffers, a converter to 16 kHz Int16 mono, an input block that hands over
    /// one buffer and then reports `.noDataNow`, output capacity = frames × ratio), compared with
    /// `sox remix 1 rate -h 16000` (libsoxr's HQ converter in sox) on the same input.
    func testMicrophoneToSpeechMatchesSox() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let inputFormat = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 2)!
        let outputFormat = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16_000, channels: 1, interleaved: true))
        let seconds = 2
        let all = signal(frames: 48_000 * seconds, rate: 48_000, channels: 2)
        let converter = try XCTUnwrap(AudioConverter(from: inputFormat, to: outputFormat))
        var converted: [Double] = []
        var statuses: [AudioConverterOutputStatus] = []
        // As a tap delivers: 4800-frame buffers.
        for start in stride(from: 0, to: all[0].count, by: 4_800) {
            let buffer = try self.buffer(inputFormat, all.map { Array($0[start..<(start + 4_800)]) })
            // --- Apple's sample code, mechanically ported ---
            let capacity = AudioFrameCount(outputFormat.sampleRate) * buffer.frameLength / AudioFrameCount(buffer.format.sampleRate)
            let convertedBuffer = AudioPCMBuffer(pcmFormat: outputFormat, frameCapacity: capacity)!
            var error: NSError?
            var newBufferAvailable = true
            let inputCallback: AudioConverterInputBlock = { _, outStatus in
                if newBufferAvailable {
                    outStatus.pointee = .haveData
                    newBufferAvailable = false
                    return buffer
                } else {
                    outStatus.pointee = .noDataNow
                    return nil
                }
            }
            let status = converter.convert(to: convertedBuffer, error: &error, withInputFrom: inputCallback)
            // ---
            XCTAssertNil(error)
            statuses.append(status)
            converted += samples(convertedBuffer)[0]
        }
        XCTAssertFalse(statuses.contains(.error))
        XCTAssertTrue(statuses.allSatisfy { $0 == .haveData || $0 == .inputRanDry }, "\(statuses)")
        // The stream's end drains what the converter still holds.
        while true {
            let out = AudioPCMBuffer(pcmFormat: outputFormat, frameCapacity: 1_000)!
            var error: NSError?
            let status = converter.convert(to: out, error: &error) { _, s in s.pointee = .endOfStream; return nil }
            converted += samples(out)[0]
            if status == .endOfStream { break }
        }
        XCTAssertEqual(converted.count, 16_000 * seconds)

        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, all.map { $0.map(Float.init) }, sampleRate: 48_000)
        try run(["sox", "-D", dir.appendingPathComponent("in.wav").path, "-e", "floating-point", "-b", "32",
                 dir.appendingPathComponent("sox.wav").path, "remix", "1", "rate", "-h", "16000"])
        let sox = try WAVFile(contentsOf: dir.appendingPathComponent("sox.wav")).samples[0].map { $0 * 32768 }
        XCTAssertEqual(sox.count, converted.count)
        // Same converter family, independently driven: within a couple of Int16 steps everywhere
        // (the Int16 rounding of a float reference), -80 dB or better overall.
        let diffs = zip(converted, sox).map { abs($0 - $1) }
        XCTAssertLessThanOrEqual(diffs.max() ?? .infinity, 3, "largest difference from sox in Int16 steps")
        let db = rmsDifferenceDB(converted, sox, reference: sox)
        XCTAssertLessThan(db, -80, "difference from sox")
        print("mic-to-speech vs sox rate -h: max \(diffs.max()!) LSB, rms \(db) dB")
    }

    /// `.max` against `sox rate -v` (libsoxr VHQ) on 44.1 kHz -> 48 kHz stereo float.
    func testMaxQualityMatchesSoxVeryHighQuality() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let inFormat = AudioFormat(standardFormatWithSampleRate: 44_100, channels: 2)!
        let outFormat = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 2)!
        // Tones well inside both converters' passbands (sox's and libsoxr's band edges differ).
        let input = signal(frames: 44_100, rate: 44_100, channels: 2, seed: 11, noise: 0)
        let converter = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        converter.sampleRateConverterQuality = AudioQuality.max.rawValue
        let ours = try stream(converter, input, inputPieces: [4_410], outputPieces: [4_800]).output
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, input.map { $0.map(Float.init) }, sampleRate: 44_100)
        try run(["sox", "-D", dir.appendingPathComponent("in.wav").path, "-e", "floating-point", "-b", "32",
                 dir.appendingPathComponent("sox.wav").path, "rate", "-v", "48000"])
        let sox = try WAVFile(contentsOf: dir.appendingPathComponent("sox.wav")).samples
        for c in 0..<2 {
            XCTAssertEqual(ours[c].count, sox[c].count)
            let db = rmsDifferenceDB(ours[c], sox[c], reference: sox[c])
            XCTAssertLessThan(db, -100, "channel \(c) differs from sox rate -v")
            print("max quality vs sox rate -v, channel \(c): \(db) dB")
        }
    }

    /// Each quality's converter, measured on a 997 Hz sine (44.1 -> 48 kHz) against the exact
    /// sine at 48 kHz: the libsoxr qualities are the cleanest, libsamplerate's linear the
    /// roughest, each within its library's documented figure.
    func testQualitiesMapToTheirConverters() throws {
        let inFormat = AudioFormat(standardFormatWithSampleRate: 44_100, channels: 1)!
        let outFormat = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 1)!
        let input = [(0..<44_100).map { 0.5 * sin(2 * .pi * 997 * Double($0) / 44_100) }]
        var figures: [AudioQuality: Double] = [:]
        for quality in AudioQuality.allCases {
            let converter = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
            converter.sampleRateConverterQuality = quality.rawValue
            let out = try stream(converter, input, inputPieces: [1_000], outputPieces: [2_000]).output[0]
            // Away from the ends (where the sine starts and stops abruptly).
            let middle = 4_000..<44_000
            // libsamplerate's linear converter interpolates from the previous input frame: its
            // output lags by one input frame (documented on AudioConverter).
            let lag = quality == .min ? 1.0 / 44_100 : 0
            let reference = middle.map { 0.5 * sin(2 * .pi * 997 * (Double($0) / 48_000 - lag)) }
            figures[quality] = rmsDifferenceDB(Array(out[middle]), reference, reference: reference)
        }
        print("sine error by quality (dB): \(AudioQuality.allCases.map { "\($0): \(figures[$0]!)" })")
        XCTAssertLessThan(figures[.max]!, -130)      // SOXR_VHQ: 28-bit
        XCTAssertLessThan(figures[.high]!, -110)     // SOXR_HQ: 20-bit
        XCTAssertLessThan(figures[.medium]!, -90)    // SRC_SINC_MEDIUM_QUALITY: 97 dB SNR
        XCTAssertLessThan(figures[.low]!, -80)       // SRC_SINC_FASTEST: 97 dB SNR, narrower band
        XCTAssertLessThan(figures[.min]!, -40)       // SRC_LINEAR
        XCTAssertGreaterThan(figures[.min]!, figures[.low]! + 20)
        XCTAssertLessThan(figures[.max]!, figures[.high]!)
    }

    /// Streaming in odd input pieces and odd output capacities, with the input running dry now
    /// and then, gives exactly the one-shot output, for every quality and for Int16 output with
    /// dither.
    func testStreamingInOddPiecesEqualsOneShot() throws {
        let inFormat = AudioFormat(standardFormatWithSampleRate: 44_100, channels: 2)!
        let outFormats = [AudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: 48_000, channels: 2, interleaved: true)!,
                          AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16_000, channels: 1, interleaved: true)!]
        let input = signal(frames: 30_011, rate: 44_100, channels: 2, seed: 5)
        for outFormat in outFormats {
            for quality in AudioQuality.allCases {
                func make() throws -> AudioConverter {
                    let c = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
                    c.sampleRateConverterQuality = quality.rawValue
                    c.dither = outFormat.commonFormat == .pcmFormatInt16
                    return c
                }
                let oneShot = try stream(try make(), input, inputPieces: [30_011], outputPieces: [100_000])
                let odd = try stream(try make(), input, inputPieces: [7, 313, 1, 1_021, 4_099, 2], outputPieces: [11, 997, 3, 2_053],
                                     runDryEvery: 5)
                let differing = zip(odd.output.joined(), oneShot.output.joined()).filter { $0 != $1 }.count
                XCTAssertTrue(odd.output == oneShot.output,
                              "\(outFormat) \(quality): \(differing) samples differ, lengths \(odd.output[0].count) / \(oneShot.output[0].count)")
                XCTAssertTrue(odd.statuses.contains(.inputRanDry))
                XCTAssertEqual(odd.statuses.last, .endOfStream)
                let expected = Double(30_011) * outFormat.sampleRate / 44_100
                XCTAssertEqual(Double(oneShot.output[0].count), expected, accuracy: 2, "\(outFormat) \(quality)")
            }
        }
    }

    /// After the stream ends, convert keeps reporting .endOfStream; reset() starts a new stream
    /// that gives the first stream's output again.
    func testEndOfStreamAndReset() throws {
        let inFormat = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 1)!
        let outFormat = AudioFormat(standardFormatWithSampleRate: 22_050, channels: 1)!
        let input = signal(frames: 9_000, rate: 48_000, channels: 1)
        let converter = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        let first = try stream(converter, input, inputPieces: [512], outputPieces: [700])
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: outFormat, frameCapacity: 10))
        var calls = 0
        XCTAssertEqual(converter.convert(to: out, error: nil) { _, s in calls += 1; s.pointee = .haveData; return nil }, .endOfStream)
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(out.frameLength, 0)
        converter.reset()
        let second = try stream(converter, input, inputPieces: [9_000], outputPieces: [50_000])
        XCTAssertEqual(second.output, first.output)
        // A buffer in another format is an error with kAudio_ParamError.
        let wrong = try XCTUnwrap(AudioPCMBuffer(pcmFormat: inFormat, frameCapacity: 10))
        var error: NSError?
        XCTAssertEqual(converter.convert(to: wrong, error: &error) { _, s in s.pointee = .endOfStream; return nil }, .error)
        XCTAssertEqual(error?.code, -50)
    }

    /// Priming: `.none` delays the output by primeInfo.leadingFrames input frames of silence;
    /// `.pre` drops the output of that many leading input frames; `.normal` is time-aligned (a
    /// click at input frame 4800 peaks at output frame 1600 for 48 -> 16 kHz).
    func testPrimeMethods() throws {
        let inFormat = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 1)!
        let outFormat = AudioFormat(standardFormatWithSampleRate: 16_000, channels: 1)!
        var click = [Double](repeating: 0, count: 24_000)
        click[4_800] = 1
        let normal = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        let leading = normal.primeInfo.leadingFrames
        XCTAssertGreaterThan(leading, 0)
        XCTAssertEqual(normal.primeInfo.trailingFrames, leading)
        XCTAssertEqual(try XCTUnwrap(AudioConverter(from: inFormat, to: inFormat)).primeInfo, AudioConverterPrimeInfo())
        let aligned = try stream(normal, [click], inputPieces: [1_000], outputPieces: [1_000]).output[0]
        XCTAssertEqual(aligned.indices.max { abs(aligned[$0]) < abs(aligned[$1]) }, 1_600)

        let shift = Int((Double(leading) / 3).rounded())
        let none = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        none.primeMethod = .none
        let delayed = try stream(none, [click], inputPieces: [1_000], outputPieces: [1_000]).output[0]
        XCTAssertEqual(delayed, [Double](repeating: 0, count: shift) + aligned)

        let pre = try XCTUnwrap(AudioConverter(from: inFormat, to: outFormat))
        pre.primeMethod = .pre
        pre.primeInfo = AudioConverterPrimeInfo(leadingFrames: 2_400, trailingFrames: 0)
        let advanced = try stream(pre, [click], inputPieces: [1_000], outputPieces: [1_000]).output[0]
        XCTAssertEqual(advanced, Array(aligned[800...]))
    }

    /// Dither: a constant a quarter of an Int16 step rounds to 0 without dither; with TPDF dither
    /// the output takes -1, 0 and 1 and averages the input (to within the noise of 48 000 samples).
    func testDitherAveragesBelowOneStep() throws {
        let f = AudioFormat(standardFormatWithSampleRate: 48_000, channels: 1)!
        let i16 = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48_000, channels: 1, interleaved: true)!
        let input = try buffer(f, [[Double](repeating: 0.25 / 32_768, count: 48_000)])
        let out = try XCTUnwrap(AudioPCMBuffer(pcmFormat: i16, frameCapacity: 48_000))
        let converter = try XCTUnwrap(AudioConverter(from: f, to: i16))
        try converter.convert(to: out, from: input)
        XCTAssertEqual(Set(samples(out)[0]), [0])
        converter.dither = true
        try converter.convert(to: out, from: input)
        let values = samples(out)[0]
        XCTAssertEqual(Set(values), [-1, 0, 1])
        let mean = values.reduce(0, +) / Double(values.count)
        // TPDF of ±1 LSB has variance 1/6: the mean of 48 000 samples is within 4σ = 0.0075.
        XCTAssertEqual(mean, 0.25, accuracy: 0.0075)
    }
}
