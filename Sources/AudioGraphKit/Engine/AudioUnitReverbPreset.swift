// The factory rooms of the engine API's reverb and of the environment's reverb (cf. AVAudioUnitReverbPreset).
import AudioGraphNodes

/// AVAudioUnitReverb's factory rooms (cf. AVAudioUnitReverbPreset).
public enum AudioUnitReverbPreset: Int, Sendable, CaseIterable {
    case smallRoom = 0, mediumRoom, largeRoom, mediumHall, largeHall, plate, mediumChamber, largeChamber,
         cathedral, largeRoom2, mediumHall2, mediumHall3, largeHall2

    /// The graph format's name of this room (the `reverb` node's and the environment's `preset`).
    var graphPreset: ReverbPreset {
        switch self {
        case .smallRoom: return .smallRoom
        case .mediumRoom: return .mediumRoom
        case .largeRoom: return .largeRoom
        case .mediumHall: return .mediumHall
        case .largeHall: return .largeHall
        case .plate: return .plate
        case .mediumChamber: return .mediumChamber
        case .largeChamber: return .largeChamber
        case .cathedral: return .cathedral
        case .largeRoom2: return .largeRoom2
        case .mediumHall2: return .mediumHall2
        case .mediumHall3: return .mediumHall3
        case .largeHall2: return .largeHall2
        }
    }
}
