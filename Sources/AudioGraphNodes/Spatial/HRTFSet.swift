// A SOFA HRTF set loaded with libmysofa, resampled to the graph rate, with per-partition spectra.
import AudioGraphRealtime

import AudioGraphCore
import CFFTW
import CMySofa

/// A head-related transfer function set from a SOFA file, ready for partitioned convolution.
///
/// Loading (`init`) opens the file with libmysofa's `mysofa_open`, which normalises the set and
/// resamples it to the graph's rate. For every measured direction it reads the filter libmysofa
/// itself returns for that direction (`mysofa_getfilter_float_nointerp`, left and right impulse
/// responses and their delays, which libmysofa reports in seconds). A delay that the set stores
/// apart from its impulse responses (the interaural time difference of minimum-phase sets) is
/// rounded to whole samples and put in front of the response, so the convolution renders it;
/// sets such as MIT KEMAR keep the delay inside the responses and report 0.
///
/// Lookup is **nearest neighbour**: a direction uses the measurement whose direction makes the
/// smallest angle with it (a brute-force scan of the unit vectors, done on the render thread
/// only when a source's direction changes; 710 directions for MIT KEMAR). There is no
/// interpolation between measurements; the convolver crossfades when the nearest measurement
/// changes, so motion is click-free.
///
/// Coordinates: SOFA uses x forward, y left, z up. This type speaks the listener-relative frame
/// of `ListenerOrientation.listenerRelative`: x right, y up, z behind (-z ahead). So SOFA
/// (x, y, z) = (-z, -x, y) of ours.
///
/// Thread safety: immutable after `init` (made on a control thread; it allocates, reads the
/// file and plans FFTs). All its methods and storage may then be read from any thread, the
/// render thread included, without locks; `nearestMeasurement(to:)` is real-time safe.
package final class HRTFSet: @unchecked Sendable {
    /// Why a set could not be loaded.
    package enum Error: Swift.Error, Equatable, CustomStringConvertible {
        /// The path is no regular file with the HDF5 signature (missing, a directory, a FIFO, a
        /// device, or some other format), so it is not handed to libmysofa, which would block on
        /// a FIFO; `reason` is `FileSystemPath.sofaProblem`'s.
        case notSOFA(path: String, reason: String)
        /// A library the set needs (libmysofa, libfftw3f) cannot be loaded; `reason` is the
        /// loader's (naming the shared object).
        case libraryMissing(library: String, reason: String)
        /// libmysofa could not open or read the file; `code` is its error code
        /// (MYSOFA_INVALID_FORMAT = 10000, MYSOFA_READ_ERROR = 10003, ...).
        case cannotOpen(path: String, code: Int)
        /// The file is not a two-receiver (left/right ear) set.
        case notBinaural(path: String, receivers: Int)
        /// libmysofa opened the file but its arrays do not have the sizes its dimensions give (a
        /// missing `Data.Delay`, too few source positions or responses), which libmysofa itself
        /// does not check before reading them; `reason` names the array.
        case malformed(path: String, reason: String)

        package var description: String {
            switch self {
            case let .notSOFA(path, reason): return "cannot open HRTF set '\(path)': \(reason)"
            case let .libraryMissing(library, reason): return "cannot load \(library): \(reason)"
            case let .cannotOpen(path, code): return "cannot open HRTF set '\(path)' (libmysofa error \(code))"
            case let .notBinaural(path, receivers): return "HRTF set '\(path)' has \(receivers) receivers, not 2"
            case let .malformed(path, reason): return "HRTF set '\(path)' is malformed: \(reason)"
            }
        }
    }

    /// The MIT KEMAR (normal pinna) set that Debian's libmysofa package ships.
    package static let defaultPath = "/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa"

    private struct CacheKey: Hashable {
        var path: String
        var sampleRate: Double
        var blockSize: Int
    }
    private static let cache = ControlLock<[CacheKey: HRTFSet]>([:])

    /// The set for `path` at `sampleRate`, loaded once per process and then shared (loading
    /// resamples every response with libmysofa, about 2.5 s for MIT KEMAR from 44.1 to 48 kHz).
    /// Control threads only: it may read the file while holding a lock.
    package static func shared(path: String = HRTFSet.defaultPath, sampleRate: Double, blockSize: Int = 128) throws(Error) -> HRTFSet {
        let key = CacheKey(path: path, sampleRate: sampleRate, blockSize: blockSize)
        let result: Result<HRTFSet, Error> = cache.withLock { cache in
            if let set = cache[key] { return .success(set) }
            do throws(Error) {
                let set = try HRTFSet(path: path, sampleRate: sampleRate, blockSize: blockSize)
                cache[key] = set
                return .success(set)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The rate the responses were resampled to.
    package let sampleRate: Double
    /// The partition (and internal block) size of the convolution, in frames.
    package let blockSize: Int
    /// How many measured directions the set holds.
    package let measurementCount: Int
    /// The length of every stored response, separate delays included, in frames.
    package let filterLength: Int
    /// The length of the responses as libmysofa returns them (without separate delays).
    package let sofaFilterLength: Int
    /// How many partitions of `blockSize` frames cover `filterLength`.
    package let partitionCount: Int
    /// The FFT size, `2 · blockSize`.
    package let fftSize: Int
    /// Complex bins per spectrum (`blockSize + 1`) and the padded stride between spectra.
    package let binCount: Int
    let spectrumStride: Int

    // MARK: Immutable storage (read by any thread)
    /// Unit directions of the measurements in our listener frame, 3 doubles each.
    private let directions: UnsafeMutablePointer<Double>
    /// Impulse responses, `[measurement][ear][filterLength]`, ear 0 = left.
    private let responses: UnsafeMutablePointer<Float>
    /// Integer delays (frames) that were added in front, `[measurement][ear]`.
    private let delays: UnsafeMutablePointer<Int32>
    /// Interleaved complex partition spectra scaled by 1/fftSize:
    /// `[measurement][ear][partition][spectrumStride complex]`.
    let spectra: UnsafeMutablePointer<Float>

    /// Loads `path` for `sampleRate`, cut into partitions of `blockSize` frames (a power of two).
    /// A path that is no regular HDF5 file is refused before libmysofa sees it (`Error.notSOFA`).
    package init(path: String = HRTFSet.defaultPath, sampleRate: Double, blockSize: Int = 128) throws(Error) {
        precondition(blockSize > 0 && blockSize & (blockSize - 1) == 0, "blockSize must be a power of two")
        for library in [LazyLibrary.mysofa, .fftw] {
            if let reason = library.loadFailure { throw .libraryMissing(library: library.name, reason: reason) }
        }
        if let reason = FileSystemPath.sofaProblem(path) { throw .notSOFA(path: path, reason: reason) }
        if let reason = Self.positionProblem(path: path) { throw .malformed(path: path, reason: reason) }
        var length: Int32 = 0
        var err: Int32 = 0
        guard let easy = mysofa_open(path, Float(sampleRate), &length, &err), err == MYSOFA_OK else {
            throw .cannotOpen(path: path, code: Int(err == 0 ? Int32(MYSOFA_INTERNAL_ERROR) : err))
        }
        defer { mysofa_close(easy) }
        let hrtf = easy.pointee.hrtf!
        guard hrtf.pointee.R == 2 else { throw .notBinaural(path: path, receivers: Int(hrtf.pointee.R)) }
        if let reason = Self.structureProblem(hrtf.pointee, filterLength: Int(length)) {
            throw .malformed(path: path, reason: reason)
        }

        let m = Int(hrtf.pointee.M)
        let sofaLength = Int(length)
        self.sampleRate = sampleRate
        self.blockSize = blockSize
        self.measurementCount = m
        self.sofaFilterLength = sofaLength

        // Read each measured direction's filter the way libmysofa serves it.
        let positions = hrtf.pointee.SourcePosition.values!
        let left = UnsafeMutablePointer<Float>.allocate(capacity: sofaLength * m)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: sofaLength * m)
        defer { left.deallocate(); right.deallocate() }
        let delayFrames = UnsafeMutablePointer<Int32>.allocate(capacity: 2 * m)
        let dirs = UnsafeMutablePointer<Double>.allocate(capacity: 3 * m)
        var maxDelay: Int32 = 0
        for i in 0..<m {
            let (sx, sy, sz) = (positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
            var dl: Float = 0, dr: Float = 0
            mysofa_getfilter_float_nointerp(easy, sx, sy, sz, left + i * sofaLength, right + i * sofaLength, &dl, &dr)
            // Seconds to whole frames; a negative or absurd delay (over 50 ms) is ignored.
            func frames(_ s: Float) -> Int32 {
                let f = (Double(s) * sampleRate).rounded()
                return f.isFinite && f > 0 && f < 0.05 * sampleRate ? Int32(f) : 0
            }
            delayFrames[2 * i] = frames(dl)
            delayFrames[2 * i + 1] = frames(dr)
            maxDelay = max(maxDelay, delayFrames[2 * i], delayFrames[2 * i + 1])
            // SOFA (forward, left, up) -> ours (right, up, back).
            let v = Vector3(-Double(sy), Double(sz), -Double(sx)).normalized
            dirs[3 * i] = v.x; dirs[3 * i + 1] = v.y; dirs[3 * i + 2] = v.z
        }

        let total = sofaLength + Int(maxDelay)
        let partitions = (total + blockSize - 1) / blockSize
        let fft = 2 * blockSize
        let bins = blockSize + 1
        // Pad each spectrum to a multiple of 8 complex values (64 bytes) to keep every spectrum
        // as aligned as fftwf_malloc's memory.
        let stride = (bins + 7) / 8 * 8
        self.filterLength = total
        self.partitionCount = partitions
        self.fftSize = fft
        self.binCount = bins
        self.spectrumStride = stride
        self.directions = dirs
        self.delays = delayFrames

        let resp = UnsafeMutablePointer<Float>.allocate(capacity: 2 * m * total)
        resp.initialize(repeating: 0, count: 2 * m * total)
        for i in 0..<m {
            for ear in 0..<2 {
                let src = (ear == 0 ? left : right) + i * sofaLength
                let dst = resp + (2 * i + ear) * total + Int(delayFrames[2 * i + ear])
                dst.update(from: src, count: sofaLength)
            }
        }
        self.responses = resp

        // Partition spectra, scaled by 1/fft so the inverse transform needs no scaling.
        let spec = FFTWPlanner.allocate(floats: 2 * m * partitions * stride * 2)
        let transform = RealForwardFFT(size: fft)
        let timeBuffer = transform.input, freqBuffer = transform.output
        let scale = 1 / Float(fft)
        for i in 0..<m {
            for ear in 0..<2 {
                let h = resp + (2 * i + ear) * total
                for p in 0..<partitions {
                    timeBuffer.update(repeating: 0, count: fft)
                    let start = p * blockSize
                    let n = min(blockSize, total - start)
                    for k in 0..<n { timeBuffer[k] = h[start + k] * scale }
                    transform.transform()
                    let dst = spec + (((2 * i + ear) * partitions + p) * stride) * 2
                    dst.update(from: freqBuffer, count: 2 * bins)
                }
            }
        }
        self.spectra = spec
    }

    /// Why a set libmysofa opened cannot be read safely, or nil: every array that
    /// `mysofa_getfilter_float_nointerp` reads must be present and as long as the dimensions say
    /// (`mysofa_check` lets a file without `Data.Delay` through, and reading the filter of such a
    /// file dereferences a null pointer in libmysofa 1.3).
    /// The farthest source position a set may have, in metres (measured sets stop at a few metres).
    static let maximumSourceDistance: Float = 100

    /// Why the source positions of the file at `path` would keep `mysofa_open` busy for hours, or
    /// nil. libmysofa's neighbourhood search walks, for every measurement, every radius up to the
    /// farthest measurement in 1 cm steps: a malformed file whose positions are not finite or lie
    /// absurdly far can keep it busy for minutes (found by the SOFA fuzzer). The positions are read first
    /// (`mysofa_load`, no search) and checked; a file libmysofa cannot load or check is left to
    /// `mysofa_open`, which reports it.
    static func positionProblem(path: String) -> String? {
        var err: Int32 = 0
        guard let hrtf = mysofa_load(path, &err) else { return nil }
        defer { mysofa_free(hrtf) }
        guard err == MYSOFA_OK, mysofa_check(hrtf) == MYSOFA_OK else { return nil }
        mysofa_tocartesian(hrtf)
        let count = Int(hrtf.pointee.SourcePosition.elements) / 3
        guard let p = hrtf.pointee.SourcePosition.values else { return nil }
        for i in 0..<count {
            let r = (p[3 * i] * p[3 * i] + p[3 * i + 1] * p[3 * i + 1] + p[3 * i + 2] * p[3 * i + 2]).squareRoot()
            if !r.isFinite { return "source position \(i) is not a finite point" }
            if r > maximumSourceDistance {
                return "source position \(i) is \(r) m away (at most \(Int(maximumSourceDistance)) m)"
            }
        }
        return nil
    }

    static func structureProblem(_ hrtf: MYSOFA_HRTF, filterLength: Int) -> String? {
        let (m, r, n) = (Int(hrtf.M), Int(hrtf.R), Int(hrtf.N))
        if m < 1 { return "it has no measurements" }
        if filterLength < 1 || filterLength > n { return "its filter length, \(filterLength), is not within 1...\(n)" }
        if hrtf.SourcePosition.values == nil || Int(hrtf.SourcePosition.elements) != 3 * m {
            return "SourcePosition has \(hrtf.SourcePosition.elements) values, not 3 for each of \(m) measurements"
        }
        if hrtf.DataIR.values == nil || Int(hrtf.DataIR.elements) != m * r * n {
            return "Data.IR has \(hrtf.DataIR.elements) values, not \(m) x \(r) x \(n)"
        }
        let delays = Int(hrtf.DataDelay.elements)
        if hrtf.DataDelay.values == nil || (delays != r && delays != m * r) {
            return "Data.Delay has \(delays) values, not \(r) or \(m) x \(r)"
        }
        return nil
    }

    deinit {
        directions.deallocate()
        responses.deallocate()
        delays.deallocate()
        FFTWPlanner.free(spectra)
    }

    /// The index of the measurement nearest in angle to `direction` (our listener frame: x right,
    /// y up, z behind; any length; the zero vector counts as straight ahead). Real-time safe.
    @inline(__always)
    package func nearestMeasurement(to direction: Vector3) -> Int {
        var d = direction.normalized
        if d == .zero { d = Vector3(0, 0, -1) }
        var best = 0
        var bestDot = -Double.infinity
        for i in 0..<measurementCount {
            let dot = directions[3 * i] * d.x + directions[3 * i + 1] * d.y + directions[3 * i + 2] * d.z
            if dot > bestDot {
                bestDot = dot
                best = i
            }
        }
        return best
    }

    /// The unit direction of a measurement in our listener frame.
    package func direction(ofMeasurement index: Int) -> Vector3 {
        Vector3(directions[3 * index], directions[3 * index + 1], directions[3 * index + 2])
    }

    /// The stored impulse response of one ear (0 left, 1 right), `filterLength` frames, separate
    /// delay included.
    package func impulseResponse(measurement index: Int, ear: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: responses + (2 * index + ear) * filterLength, count: filterLength)
    }

    /// The separate delay (frames) put in front of one ear's response.
    package func delay(measurement index: Int, ear: Int) -> Int { Int(delays[2 * index + ear]) }

    /// The start of one partition's spectrum (interleaved complex, `binCount` values).
    @inline(__always)
    func spectrum(measurement index: Int, ear: Int, partition: Int) -> UnsafeMutablePointer<Float> {
        spectra + (((2 * index + ear) * partitionCount + partition) * spectrumStride) * 2
    }

    /// Converts a direction in our listener frame (x right, y up, z behind) to SOFA's
    /// (x forward, y left, z up).
    package static func sofaCoordinates(_ v: Vector3) -> Vector3 { Vector3(-v.z, -v.x, v.y) }
}
