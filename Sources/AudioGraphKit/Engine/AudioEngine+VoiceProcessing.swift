// Switching the engine's voice processing on and off (AudioIONode.setVoiceProcessingEnabled), and its hooks in the I/O graph nodes.
import AudioGraphPulse

extension AudioEngine {
    /// kAudioUnitErr_CannotDoInCurrentContext: voice processing switched while the engine runs.
    static let voiceProcessingWhileRunningCode: OSStatus = -10863

    /// Turns voice processing on or off for both I/O nodes (``AudioIONode/setVoiceProcessingEnabled(_:)``).
    func setVoiceProcessingEnabled(_ enabled: Bool, call: String) throws(AudioEngineError) {
        lock.lock()
        defer { lock.unlock() }
        guard enabled != voiceProcessing.isEnabled else { return }
        if running {
            throw .invalidState(call: call, reason: "voice processing is switched only while the engine is stopped",
                                code: Self.voiceProcessingWhileRunningCode)
        }
        if enabled && manualMode != nil {
            throw .invalidState(call: call, reason: "voice processing needs the PulseAudio devices, not manual rendering",
                                code: AudioEngineError.invalidModeCode)
        }
        voiceProcessing.isEnabled = enabled
        if enabled {
            _ = inputNode   // as on Apple's platforms: enabling it makes the input node exist
        } else {
            voiceProcessing.discardProcessor()
        }
        discardPreparedGraph()
    }

    /// The processor for the input node's graph node about to be made (`channelCount` captured
    /// channels at `sampleRate`), or nil when voice processing is off or the engine renders manually.
    func voiceProcessorForInput(sampleRate: Double, channelCount: Int, graphID: String) throws(AudioGraphError) -> VoiceProcessor? {
        guard voiceProcessing.isEnabled, manualMode == nil else { return nil }
        // The echo path: the output's queue, then the capture's fragment and margin (a first
        // guess; webrtc's delay-agnostic mode finds the real one).
        let output = outputNodeStorage?.requestedLatency ?? 20
        let input = inputNodeStorage?.requestedLatency ?? 20
        do throws(VoiceProcessingError) {
            return try voiceProcessing.makeProcessor(sampleRate: Int(sampleRate.rounded()), channelCount: channelCount,
                                                     maximumFramesPerSlice: maximumFramesPerSlice,
                                                     delayMilliseconds: Int(output + 2 * max(10, input)))
        } catch {
            throw .nodeSetupFailed(node: graphID, reason: "voice processing: \(error.reason)")
        }
    }

    /// What the output node's graph node reports its played slices to (nil: voice processing off).
    var voiceProcessingObserver: (any PlaybackObserver)? {
        voiceProcessing.isEnabled && manualMode == nil ? voiceProcessing : nil
    }
}
