// XCTest-free signal assertions: each returns nil on success or a Failure that says what, where and by how much.
import Foundation

/// Assertions on rendered signals that do not depend on XCTest, so any test framework (or a
/// command-line check) can use them. Each returns `nil` when the check holds and a `Failure`
/// whose message names the signal, the frame and the numbers otherwise:
///
/// ```swift
/// if let failure = SignalCheck.close(rendered, expected, tolerance: 1e-4, "left channel") {
///     XCTFail(failure.message)
/// }
/// XCTAssertNil(SignalCheck.tones(output, sampleRate: 48000, expected: [1000: 0.5], toleranceDB: 0.05))
/// ```
///
/// Thread safety: stateless; every function may be called from any thread concurrently.
public enum SignalCheck {
    /// A failed check; `message` is one line naming the signal and the numbers.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What failed, where and by how much.
        public let message: String
        /// Wraps a message.
        public init(_ message: String) { self.message = message }
        /// The message.
        public var description: String { message }
    }

    /// Every |actual[i] − expected[i]| ≤ tolerance, and equal lengths. The failure names the
    /// largest error and the first sample beyond the tolerance (frame `i + frameOffset`).
    public static func close<A: Collection, E: Collection>(_ actual: A, _ expected: E, tolerance: Double,
                                                           _ what: String = "signal", frameOffset: Int = 0) -> Failure?
    where A.Element: BinaryFloatingPoint, E.Element: BinaryFloatingPoint {
        let a = actual.map { Double($0) }
        let e = expected.map { Double($0) }
        guard a.count == e.count else {
            return Failure("\(what): \(a.count) samples, expected \(e.count)")
        }
        var worst = 0, worstError = 0.0, firstBad: Int?
        for i in 0..<a.count {
            let error = (a[i] - e[i]).magnitude
            if error.isNaN || error > tolerance, firstBad == nil { firstBad = i }
            if error.isNaN { worst = i; worstError = .nan; break }
            if error > worstError { worst = i; worstError = error }
        }
        guard let first = firstBad else { return nil }
        return Failure("\(what): max |error| \(format(worstError)) > \(format(tolerance)) at frame \(worst + frameOffset) "
            + "(got \(format(a[worst])), expected \(format(e[worst]))); first bad sample at frame \(first + frameOffset) "
            + "(got \(format(a[first])), expected \(format(e[first])))")
    }

    /// Every sample equal to the value (bit-exact comparison of the `Double` values).
    public static func identical<A: Collection, E: Collection>(_ actual: A, _ expected: E,
                                                               _ what: String = "signal") -> Failure?
    where A.Element: BinaryFloatingPoint, E.Element: BinaryFloatingPoint {
        close(actual, expected, tolerance: 0, what)
    }

    /// Peak |x| ≤ threshold (0: digital silence).
    public static func silent<S: Collection>(_ samples: S, threshold: Double = 0, _ what: String = "signal") -> Failure?
    where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        guard let index = x.firstIndex(where: { !($0.magnitude <= threshold) }) else { return nil }
        return Failure("\(what): not silent: |sample| \(format(x[index].magnitude)) > \(format(threshold)) at frame \(index) "
            + "(peak \(format(SignalMeasurement.peak(x))))")
    }

    /// A level (any linear measure: RMS, peak, amplitude) within ±toleranceDB of `expected`.
    public static func level(_ measured: Double, expected: Double, toleranceDB: Double,
                             _ what: String = "level") -> Failure? {
        let error = SignalMeasurement.dBFS(measured) - SignalMeasurement.dBFS(expected)
        if error.magnitude <= toleranceDB { return nil }
        if measured == 0 && expected == 0 { return nil }
        return Failure("\(what): \(format(measured)), expected \(format(expected)) "
            + "(\(signed(error)) dB, limit ±\(format(toleranceDB)) dB)")
    }

    /// The tones `expected` (frequency Hz → amplitude) fitted by `ToneFit` (with DC and any
    /// `extraFrequencies`), each amplitude within ±toleranceDB, and THD+N at most
    /// `thdPlusNoiseMaxDB` when given: agcheck's `check_tones`.
    public static func tones<S: Collection>(_ samples: S, sampleRate: Double, expected: [Double: Double],
                                            toleranceDB: Double, extraFrequencies: [Double] = [],
                                            thdPlusNoiseMaxDB: Double? = nil, _ what: String = "signal") -> Failure?
    where S.Element: BinaryFloatingPoint {
        let frequencies = expected.keys.sorted() + extraFrequencies
        let fit = ToneFit(samples, sampleRate: sampleRate, frequencies: frequencies)
        for tone in fit.tones {
            guard let amplitude = expected[tone.frequency] else { continue }
            if let failure = level(tone.amplitude, expected: amplitude, toleranceDB: toleranceDB,
                                   "\(what): tone \(format(tone.frequency)) Hz amplitude") {
                return failure
            }
        }
        if let limit = thdPlusNoiseMaxDB, !(fit.thdPlusNoiseDB <= limit) {
            return Failure("\(what): THD+N \(String(format: "%.1f", fit.thdPlusNoiseDB)) dB, limit \(format(limit)) dB")
        }
        return nil
    }

    /// The dominant frequency (`SignalMeasurement.estimateFrequency`) within ±toleranceHz.
    public static func frequency<S: Collection>(_ samples: S, sampleRate: Double, expected: Double,
                                                toleranceHz: Double, _ what: String = "signal") -> Failure?
    where S.Element: BinaryFloatingPoint {
        guard let measured = SignalMeasurement.estimateFrequency(samples, sampleRate: sampleRate) else {
            return Failure("\(what): no frequency found (fewer than two zero crossings)")
        }
        if (measured - expected).magnitude <= toleranceHz { return nil }
        return Failure("\(what): frequency \(format(measured)) Hz, expected \(format(expected)) ± \(format(toleranceHz)) Hz")
    }

    private static func format(_ value: Double) -> String { String(format: "%.6g", value) }
    private static func signed(_ value: Double) -> String { String(format: "%+.3f", value) }
}
