// AVFAudio's and CoreAudio's scalar type names and constants, spelled as Apple spells them (without `AV`).

/// A count of audio frames (`AVAudioFrameCount`).
public typealias AudioFrameCount = UInt32
/// A position in frames, in a file or on a timeline (`AVAudioFramePosition`).
public typealias AudioFramePosition = Int64
/// A count of packets (`AVAudioPacketCount`); for linear PCM one packet is one frame.
public typealias AudioPacketCount = UInt32
/// A count of channels (`AVAudioChannelCount`).
public typealias AudioChannelCount = UInt32
/// The index of a node's input or output bus (`AVAudioNodeBus`).
public typealias AudioNodeBus = Int
/// CoreAudio's result code: `noErr` (0) for success, anything else a failure.
public typealias OSStatus = Int32
/// CoreAudio's four-character code naming an audio data format (`AudioFormatID`).
public typealias AudioFormatID = UInt32

/// The `OSStatus` of success.
public let noErr: OSStatus = 0

/// Linear PCM, the only format ID an ``AudioFormat`` describes: `'lpcm'`, as in CoreAudio.
public let kAudioFormatLinearPCM: AudioFormatID = 0x6C70_636D
/// FLAC, accepted in the settings of an ``AudioFile`` written with the `.flac` extension: `'flac'`.
public let kAudioFormatFLAC: AudioFormatID = 0x666C_6163
