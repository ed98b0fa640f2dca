// CoreAudio's AudioTimeStamp, defined for Linux (without the SMPTE field).

/// A moment as the render callbacks see it: CoreAudio's `AudioTimeStamp` with the same field
/// names (the SMPTE time is left out). Host time is CLOCK_MONOTONIC in nanoseconds (see
/// ``AudioTime``); `mFlags` says which fields hold a value.
///
/// Thread safety: a value type.
public struct AudioTimeStamp: Sendable, Hashable {
    /// The time in sample frames.
    public var mSampleTime: Double
    /// The host time: CLOCK_MONOTONIC nanoseconds.
    public var mHostTime: UInt64
    /// The ratio of actual to nominal host ticks per sample frame.
    public var mRateScalar: Double
    /// The word-clock time.
    public var mWordClockTime: UInt64
    /// Which fields are valid.
    public var mFlags: AudioTimeStampFlags
    /// Reserved, 0.
    public var mReserved: UInt32

    /// A zeroed timestamp with no valid field.
    public init() {
        self.init(mSampleTime: 0, mHostTime: 0, mRateScalar: 0, mWordClockTime: 0, mFlags: [])
    }

    /// A timestamp with its fields given (CoreAudio's memberwise initializer without
    /// `mSMPTETime`).
    public init(mSampleTime: Double, mHostTime: UInt64, mRateScalar: Double, mWordClockTime: UInt64,
                mFlags: AudioTimeStampFlags, mReserved: UInt32 = 0) {
        self.mSampleTime = mSampleTime
        self.mHostTime = mHostTime
        self.mRateScalar = mRateScalar
        self.mWordClockTime = mWordClockTime
        self.mFlags = mFlags
        self.mReserved = mReserved
    }
}
