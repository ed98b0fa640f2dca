// A MIDI file played by a sequencer through a SoundFont sampler, rendered offline into a sound file.
import AudioGraphKit

let arguments = CommandLine.arguments
let midiURL = URL(fileURLWithPath: arguments[1])
let soundFontURL = URL(fileURLWithPath: arguments[2])
let outputURL = URL(fileURLWithPath: arguments[3])

let engine = AudioEngine()
let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
try engine.enableManualRenderingMode(.offline, format: format, maximumFrameCount: 4096)
let sampler = AudioUnitSampler()
engine.attach(sampler)
engine.connect(sampler, to: engine.mainMixerNode, format: nil)
try sampler.loadSoundBankInstrument(at: soundFontURL, program: 0,
                                    bankMSB: UInt8(kAUSampler_DefaultMelodicBankMSB), bankLSB: UInt8(kAUSampler_DefaultBankLSB))
try engine.start()

// A count-in before the song: four clicks of a high C, one every half second.
for beat in 0..<4 {
    let time = AudioTime(sampleTime: AudioFramePosition(beat * 24000), atRate: 48000)
    sampler.startNote(84, withVelocity: 90, onChannel: 0, at: time)
    sampler.stopNote(84, onChannel: 0, at: AudioTime(sampleTime: AudioFramePosition(beat * 24000 + 4800), atRate: 48000))
}

let sequencer = AudioSequencer(audioEngine: engine)
try sequencer.load(from: midiURL, options: [])
for track in sequencer.tracks { track.destinationAudioUnit = sampler }
sequencer.currentPositionInSeconds = 0
sequencer.prepareToPlay()

let file = try AudioFile(forWriting: outputURL, settings: format.settings)
let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: 4096)!
let songStart = AudioFramePosition(96000)
let songLength = sequencer.tracks.map(\.lengthInSeconds).max() ?? 0
let total = songStart + AudioFramePosition((songLength + 1) * 48000)
while engine.manualRenderingSampleTime < total {
    if engine.manualRenderingSampleTime == songStart { try sequencer.start() }
    let next = engine.manualRenderingSampleTime < songStart ? songStart : total
    let frames = AudioFrameCount(min(4096, next - engine.manualRenderingSampleTime))
    guard try engine.renderOffline(frames, to: buffer) == .success else { break }
    try file.write(from: buffer)
}
sequencer.stop()
engine.stop()
print("rendered \(total) frames: \(sequencer.tracks.count) tracks, \(songLength) s of song")
