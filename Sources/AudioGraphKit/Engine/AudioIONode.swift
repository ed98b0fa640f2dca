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

    /// Whether voice processing is on (cf. AVAudioIONode): one switch for the engine's input
    /// and output node, as Apple's voice-processing I/O unit is one unit. False by default.
    public var isVoiceProcessingEnabled: Bool {
        guard let engine else { return false }
        return engine.withLock { engine.voiceProcessing.isEnabled }
    }

    /// Turns voice processing on or off, as AVAudioIONode's method of that name: echo
    /// cancellation of what the output node plays from what the input node captures, noise
    /// suppression, automatic gain control (``AudioInputNode/isVoiceProcessingAGCEnabled``) and
    /// a high-pass filter, by webrtc-audio-processing (the library PulseAudio's
    /// `module-echo-cancel` uses). Turning it on or off on either I/O node turns it on or off
    /// for both; turning it on makes the engine's input node exist (the engine then captures).
    /// The input node's output then comes ``AudioInputNode/voiceProcessingLatency`` later.
    /// Off, the capture passes untouched.
    ///
    /// - Throws: ``AudioEngineError/invalidState(call:reason:code:)`` while the engine runs
    ///   (code -10863, kAudioUnitErr_CannotDoInCurrentContext: stop it first, as on Apple's
    ///   platforms), and, for `true`, in manual rendering mode (there is no device to cancel the
    ///   echo of; code ``AudioEngineError/invalidModeCode``).
    ///
    /// Thread safety: a control thread, while the engine is stopped.
    public func setVoiceProcessingEnabled(_ enabled: Bool) throws {
        guard let engine else {
            guard !enabled else {
                throw AudioEngineError.invalidState(call: "setVoiceProcessingEnabled(_:)",
                                                    reason: "\(description) belongs to no engine", code: -10879)
            }
            return
        }
        try engine.setVoiceProcessingEnabled(enabled, call: "setVoiceProcessingEnabled(_:)")
    }
}
