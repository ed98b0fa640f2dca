// The settings-dictionary keys of AVFAudio, unprefixed names kept exactly as Apple spells them.

// Programs written for AVFAudio build `[String: Any]` settings with these names; the values
// are the strings Apple's constants hold, so dictionaries written out as text read back alike.

/// Settings key: the format ID (`kAudioFormatLinearPCM`, or `kAudioFormatFLAC` for `.flac` files).
public let AVFormatIDKey = "AVFormatIDKey"
/// Settings key: the sample rate in hertz (a number).
public let AVSampleRateKey = "AVSampleRateKey"
/// Settings key: the channel count (a number).
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
/// Settings key: bits per sample of linear PCM: 16, 24, 32 (or 64 for floats).
public let AVLinearPCMBitDepthKey = "AVLinearPCMBitDepthKey"
/// Settings key: whether linear PCM samples are floating point (a Bool).
public let AVLinearPCMIsFloatKey = "AVLinearPCMIsFloatKey"
/// Settings key: whether linear PCM channels are stored one after another (a Bool).
public let AVLinearPCMIsNonInterleaved = "AVLinearPCMIsNonInterleaved"
/// Settings key: whether linear PCM samples are big-endian (a Bool).
public let AVLinearPCMIsBigEndianKey = "AVLinearPCMIsBigEndianKey"
