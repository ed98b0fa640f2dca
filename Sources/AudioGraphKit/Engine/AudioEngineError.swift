// What the engine API throws, and how it stops on a programmer error (where Apple raises).
import AudioGraphNodes
import AudioGraphPulse
import Foundation

/// Errors the engine API throws, where AVAudioEngine's calls throw (`start()`,
/// `enableManualRenderingMode`, `renderOffline`, `performChanges`). Each has a one-line
/// description naming the call and what went wrong.
public enum AudioEngineError: Error, Sendable, CustomStringConvertible {
    /// The graph rejected the engine's configuration (a cycle, a format a node cannot take, a
    /// node that could not be set up).
    case graph(call: String, AudioGraphError)
    /// PulseAudio failed: no server, an unknown device, a stream that could not start.
    case pulse(call: String, PulseError)
    /// A graph file could not be loaded (`AudioEngine(contentsOf:)`): one line per problem.
    case graphFile(path: String, problems: String)
    /// The call is not allowed in the engine's current state (AVAudioEngineManualRenderingError
    /// `.invalidMode`, `.initialized`, `.notRunning`).
    case invalidState(call: String, reason: String, code: OSStatus)

    /// AVAudioEngineManualRenderingError's codes.
    public static let invalidModeCode: OSStatus = -80800
    /// The engine must be stopped for this call.
    public static let initializedCode: OSStatus = -80801
    /// The engine must be running for this call.
    public static let notRunningCode: OSStatus = -80802

    /// The OSStatus a caller checking codes would see.
    public var code: OSStatus {
        switch self {
        case .invalidState(_, _, let code): return code
        case .graph, .graphFile: return -10875   // kAudioUnitErr_FailedInitialization
        case .pulse: return -10851   // kAudioUnitErr_InvalidPropertyValue's neighbour: a device failure
        }
    }

    public var description: String {
        switch self {
        case let .graph(call, e): return "\(call): \(e.description)"
        case let .pulse(call, e): return "\(call): \(e.description)"
        case let .invalidState(call, reason, _): return "\(call): \(reason)"
        case let .graphFile(_, problems): return problems
        }
    }
}

/// Stops the program for a programmer error, where AVAudioEngine raises an Objective-C
/// exception (a node that is not attached, a bus that does not exist, a format a node cannot
/// take): one line on stderr naming the call, the node and the reason, then `abort()` (SIGABRT,
/// as an uncaught exception ends a program on Apple's platforms).
func engineProgrammerError(_ call: String, _ node: AudioNode?, _ reason: String) -> Never {
    let line = "AudioEngine: \(call): \(node.map { "\($0.description): " } ?? "")\(reason)\n"
    FileHandle.standardError.write(Data(line.utf8))
    abort()
}
