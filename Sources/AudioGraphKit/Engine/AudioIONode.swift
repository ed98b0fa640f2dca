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
    /// The latency asked of PulseAudio, milliseconds (20 by default): ``preferredLatency`` in
    /// milliseconds, as the graph file's `latency` property gives it.
    public var requestedLatency: Double = 20

    /// The latency to ask of PulseAudio, seconds (a Linux addition, the role of
    /// AVAudioSession's `preferredIOBufferDuration`): for the output, the stream's queue in the
    /// server (`tlength`; the sink's period and a ring of at most 4 ms come on top); for the
    /// input, the capture fragment (the capture's share of a round trip is one fragment plus a
    /// margin of one latency, at least 10 ms). Set it before `start()`: it takes effect at the next start. Clamped to
    /// 1 ms...10 s (the graph file's range); 0.02 by default. ``presentationLatency`` gives the
    /// figure obtained.
    public var preferredLatency: TimeInterval {
        get { requestedLatency / 1000 }
        set { requestedLatency = min(10_000, max(1, newValue * 1000)) }
    }

    /// The device's presentation latency in seconds while the engine runs live, as PulseAudio
    /// and our rings report it (output: the time until a rendered frame is heard; input: the
    /// time a captured frame waited before the graph read it); 0 otherwise.
    public var presentationLatency: TimeInterval { 0 }

    /// Uses the PulseAudio device named `name` (a Linux addition: there is no AVAudioSession).
    /// Takes effect at the next `start()`; the engine must be stopped.
    public func setDevice(_ name: String?) {
        if let engine, engine.isRunning {
            engineProgrammerError("setDevice(_:)", self, "stop the engine before changing its device")
        }
        device = name
        engine?.deviceFormats = nil
        // A graph prepared for the old device (by prepare(), or left by a start() that failed
        // to open it) is built again for this one at the next start().
        engine?.discardPreparedGraph()
    }

    /// Voice processing (echo cancellation, noise suppression, gain control) is not available
    /// on Linux yet: always false.
    public var isVoiceProcessingEnabled: Bool { false }

    /// Turns voice processing on or off, as AVAudioIONode's method of that name. Not available
    /// on Linux yet: turning it on throws ``AudioEngineError/invalidState(call:reason:code:)``
    /// (code -10879, kAudioUnitErr_InvalidProperty) with a one-line reason; turning it off
    /// succeeds (it is off). A program can route its device through PulseAudio's
    /// `module-echo-cancel` (webrtc) meanwhile and name that source and sink with
    /// ``setDevice(_:)``.
    public func setVoiceProcessingEnabled(_ enabled: Bool) throws {
        guard enabled else { return }
        throw AudioEngineError.invalidState(
            call: "setVoiceProcessingEnabled(_:)",
            reason: "voice processing is not available on Linux yet (use PulseAudio's module-echo-cancel and setDevice(_:))",
            code: -10879)
    }
}
