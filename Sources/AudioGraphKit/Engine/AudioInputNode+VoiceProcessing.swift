// The input node's voice-processing switches (cf. AVAudioInputNode): bypass, gain control, mute, and what the processing costs in latency.
import Foundation

extension AudioInputNode {
    /// Whether the voice processing leaves the captured audio unprocessed (cf. AVAudioInputNode:
    /// "bypasses all microphone uplink processing"): the capture passes bit for bit, still
    /// ``voiceProcessingLatency`` late. False by default; takes effect within 10 ms, also while
    /// running. No effect while voice processing is off.
    public var isVoiceProcessingBypassed: Bool {
        get { engine?.withLock { engine?.voiceProcessing.isBypassed } ?? false }
        set { engine?.withLock { engine?.voiceProcessing.isBypassed = newValue } }
    }

    /// Whether automatic gain control runs on the processed capture (cf. AVAudioInputNode; on by
    /// default, as Apple documents): webrtc's adaptive digital gain control, toward -3 dBFS peaks
    /// with at most 9 dB of gain and a limiter. Takes effect within 10 ms, also while running.
    public var isVoiceProcessingAGCEnabled: Bool {
        get { engine?.withLock { engine?.voiceProcessing.isGainControlEnabled } ?? true }
        set { engine?.withLock { engine?.voiceProcessing.isGainControlEnabled = newValue } }
    }

    /// Whether the voice processing's output is muted (cf. AVAudioInputNode): the input node
    /// then outputs silence, while the processing goes on. False by default; takes effect at the
    /// next slice, also while running. No effect while voice processing is off.
    public var isVoiceProcessingInputMuted: Bool {
        get { engine?.withLock { engine?.voiceProcessing.isInputMuted } ?? false }
        set { engine?.withLock { engine?.voiceProcessing.isInputMuted = newValue } }
    }

    /// The ducking of other audio while voice processing runs (cf. AVAudioInputNode). Kept but
    /// not applied on Linux (see ``AudioVoiceProcessingOtherAudioDuckingConfiguration``); by
    /// default advanced ducking off, level `.default`.
    public var voiceProcessingOtherAudioDuckingConfiguration: AudioVoiceProcessingOtherAudioDuckingConfiguration {
        get { engine?.withLock { engine?.voiceProcessing.duckingConfiguration } ?? AudioVoiceProcessingOtherAudioDuckingConfiguration() }
        set { engine?.withLock { engine?.voiceProcessing.duckingConfiguration = newValue } }
    }

    /// Registers `listenerBlock` to be told when speech starts and ends while the input is muted
    /// with ``isVoiceProcessingInputMuted`` (cf. AVAudioInputNode; nil removes it): `.started`
    /// at the first 10 ms frame webrtc's voice activity detector calls voiced, `.ended` after
    /// 300 ms without voice, once per change (no repeats while speech goes on or silence lasts).
    /// The block runs on the voice-processing thread. Returns true (it is kept for the next
    /// graphs too); false only for a node without an engine.
    @discardableResult
    public func setMutedSpeechActivityEventListener(
        _ listenerBlock: (@Sendable (AudioVoiceProcessingSpeechActivityEvent) -> Void)?
    ) -> Bool {
        guard let engine else { return false }
        engine.withLock { engine.voiceProcessing.speechListener = listenerBlock }
        return true
    }

    /// How much later than the raw capture the processed one reaches the graph, seconds (a Linux
    /// addition): webrtc works on 10 ms frames on a thread of its own, so the input node's output
    /// waits two such frames plus one slice (20 ms + 512 frames). 0 while voice processing is off
    /// (or before the graph is made).
    public var voiceProcessingLatency: TimeInterval {
        guard let engine else { return 0 }
        return engine.withLock {
            guard engine.voiceProcessing.isEnabled, let p = engine.voiceProcessing.processor else { return 0 }
            return Double(p.latencyFrames) / Double(p.sampleRate)
        }
    }

    /// The voice processing of the running graph (tests: counters, webrtc's state).
    var voiceProcessor: VoiceProcessor? {
        engine?.withLock { engine?.voiceProcessing.processor }
    }
}
