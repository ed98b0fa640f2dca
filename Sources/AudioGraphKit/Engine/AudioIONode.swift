// The engine's I/O nodes' common part (cf. AVAudioIONode): a device, and its latency.
import AudioGraphNodes
import Foundation

/// A node that stands for an audio device (cf. AVAudioIONode): the engine's output or input.
/// On Linux the device is a PulseAudio sink or source, named as `audiograph devices` prints it.
///
/// Thread safety: configure on a control thread while the engine is stopped.
public class AudioIONode: AudioNode, @unchecked Sendable {
    /// The PulseAudio sink or source (nil: the server's default).
    public internal(set) var device: String?
    /// The latency asked of PulseAudio, milliseconds (20 by default).
    public var requestedLatency: Double = 20

    /// The device's presentation latency in seconds (output: what PulseAudio reports while
    /// running; 0 otherwise).
    public var presentationLatency: TimeInterval { 0 }

    /// Uses the PulseAudio device named `name` (a Linux addition: there is no AVAudioSession).
    /// Takes effect at the next `start()`; the engine must be stopped.
    public func setDevice(_ name: String?) {
        if let engine, engine.isRunning {
            engineProgrammerError("setDevice(_:)", self, "stop the engine before changing its device")
        }
        device = name
        engine?.deviceFormats = nil
    }

    /// Voice processing does not exist on Linux: always false.
    public var isVoiceProcessingEnabled: Bool { false }
}
