// AVAudioTime without the prefix: a moment as a host time, a sample time at a rate, or both.
import AudioGraphRealtime
import Foundation

/// A moment in time, as `AVAudioTime`: a host time, a sample time at a sample rate, or both.
///
/// Host time on Linux is CLOCK_MONOTONIC in nanoseconds (where Apple uses
/// `mach_absolute_time()` ticks), so ``hostTime(forSeconds:)`` multiplies by 10⁹ and
/// ``currentHostTime`` reads the monotonic clock.
///
/// Thread safety: immutable; share it between threads freely. The initializers and accessors
/// allocate (it is a class): make one off the render thread.
public final class AudioTime: Sendable, CustomStringConvertible {
    /// The sample time, in frames at ``sampleRate`` (0 when not valid).
    public let sampleTime: AudioFramePosition
    /// The rate ``sampleTime`` counts at (0 for a host-time-only moment).
    public let sampleRate: Double
    /// The host time: CLOCK_MONOTONIC nanoseconds (0 when not valid).
    public let hostTime: UInt64
    /// Whether ``sampleTime`` holds a value.
    public let isSampleTimeValid: Bool
    /// Whether ``hostTime`` holds a value.
    public let isHostTimeValid: Bool

    private init(sampleTime: AudioFramePosition, sampleRate: Double, hostTime: UInt64,
                 sampleValid: Bool, hostValid: Bool) {
        self.sampleTime = sampleValid ? sampleTime : 0
        self.sampleRate = sampleRate
        self.hostTime = hostValid ? hostTime : 0
        isSampleTimeValid = sampleValid
        isHostTimeValid = hostValid
    }

    /// A sample time at `sampleRate`; the host time is not valid.
    public convenience init(sampleTime: AudioFramePosition, atRate sampleRate: Double) {
        self.init(sampleTime: sampleTime, sampleRate: sampleRate, hostTime: 0, sampleValid: true, hostValid: false)
    }

    /// A host time (CLOCK_MONOTONIC nanoseconds); the sample time is not valid.
    public convenience init(hostTime: UInt64) {
        self.init(sampleTime: 0, sampleRate: 0, hostTime: hostTime, sampleValid: false, hostValid: true)
    }

    /// A moment given both ways: the host time and the sample time at `sampleRate`.
    public convenience init(hostTime: UInt64, sampleTime: AudioFramePosition, atRate sampleRate: Double) {
        self.init(sampleTime: sampleTime, sampleRate: sampleRate, hostTime: hostTime, sampleValid: true, hostValid: true)
    }

    /// The moment a timestamp holds: its sample time (truncated to whole frames) and host time,
    /// each where its `mFlags` bit says it is valid.
    public convenience init(audioTimeStamp ts: UnsafePointer<AudioTimeStamp>, sampleRate: Double) {
        let stamp = ts.pointee
        let sampleValid = stamp.mFlags.contains(.sampleTimeValid)
        self.init(sampleTime: sampleValid ? AudioFramePosition(stamp.mSampleTime) : 0, sampleRate: sampleRate,
                  hostTime: stamp.mHostTime, sampleValid: sampleValid,
                  hostValid: stamp.mFlags.contains(.hostTimeValid))
    }

    /// This moment as a timestamp: the valid fields set and flagged.
    public var audioTimeStamp: AudioTimeStamp {
        var flags: AudioTimeStampFlags = []
        if isSampleTimeValid { flags.insert(.sampleTimeValid) }
        if isHostTimeValid { flags.insert(.hostTimeValid) }
        return AudioTimeStamp(mSampleTime: Double(sampleTime), mHostTime: hostTime, mRateScalar: 0, mWordClockTime: 0,
                              mFlags: flags)
    }

    /// This moment with the representation it lacks filled in from `anchorTime`, as
    /// `AVAudioTime.extrapolateTime(fromAnchor:)`.
    ///
    /// The anchor must have both times valid and this moment at least one; otherwise nil. The
    /// anchor's sample time is first converted to this moment's rate (the anchor's rate when this
    /// one has none). A missing host time is `anchor.hostTime + (sampleTime - anchorSample) /
    /// rate` seconds; a missing sample time is `anchorSample + (hostTime - anchor.hostTime) ×
    /// rate` frames, rounded to the nearest frame. A moment that has both is returned as a copy.
    public func extrapolateTime(fromAnchor anchorTime: AudioTime) -> AudioTime? {
        guard anchorTime.isSampleTimeValid, anchorTime.isHostTimeValid, anchorTime.sampleRate > 0,
              isSampleTimeValid || isHostTimeValid else { return nil }
        let rate = sampleRate > 0 ? sampleRate : anchorTime.sampleRate
        let anchorSample = Double(anchorTime.sampleTime) * rate / anchorTime.sampleRate
        if isSampleTimeValid && isHostTimeValid {
            return AudioTime(hostTime: hostTime, sampleTime: sampleTime, atRate: rate)
        }
        if isSampleTimeValid {
            let seconds = (Double(sampleTime) - anchorSample) / rate
            let host = Self.offset(anchorTime.hostTime, bySeconds: seconds)
            return AudioTime(hostTime: host, sampleTime: sampleTime, atRate: rate)
        }
        let seconds = hostTime >= anchorTime.hostTime
            ? Self.seconds(forHostTime: hostTime - anchorTime.hostTime)
            : -Self.seconds(forHostTime: anchorTime.hostTime - hostTime)
        let sample = AudioFramePosition((anchorSample + seconds * rate).rounded())
        return AudioTime(hostTime: hostTime, sampleTime: sample, atRate: rate)
    }

    /// `host` moved by `seconds` (either sign), clamped at 0.
    private static func offset(_ host: UInt64, bySeconds seconds: Double) -> UInt64 {
        if seconds >= 0 { return host &+ hostTime(forSeconds: seconds) }
        let back = hostTime(forSeconds: -seconds)
        return back > host ? 0 : host - back
    }

    /// The host time span of `seconds` (nanoseconds, rounded; 0 for negative or NaN seconds).
    public static func hostTime(forSeconds seconds: TimeInterval) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let ns = (seconds * 1e9).rounded()
        return ns >= 0x1p64 ? .max : UInt64(ns)
    }

    /// The seconds a host time span lasts (nanoseconds / 10⁹).
    public static func seconds(forHostTime hostTime: UInt64) -> TimeInterval {
        Double(hostTime) / 1e9
    }

    /// The host time now: CLOCK_MONOTONIC in nanoseconds. Real-time safe (a vDSO call).
    public static var currentHostTime: UInt64 { UInt64(MonotonicClock.nanoseconds()) }

    /// `<AudioTime: sample 512 @ 48000 Hz, host 123456789 ns>` (invalid parts left out).
    public var description: String {
        var parts: [String] = []
        if isSampleTimeValid { parts.append("sample \(sampleTime) @ \(ParameterInfo.format(sampleRate)) Hz") }
        if isHostTimeValid { parts.append("host \(hostTime) ns") }
        return "<AudioTime: " + (parts.isEmpty ? "invalid" : parts.joined(separator: ", ")) + ">"
    }
}
