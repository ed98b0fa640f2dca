// The engine's voice-processing state: on or off for both I/O nodes, the input's switches, the processor of the graph.
import AudioGraphPulse
import Synchronization

/// What an engine knows of voice processing: whether it is on (one switch for the input and
/// the output node, as Apple's voice-processing I/O unit is one unit), the input node's
/// switches, and the ``VoiceProcessor`` of the current graph. It is also the output node's
/// ``PlaybackObserver``, forwarding the played slices to that processor.
///
/// Thread safety: the control side under the engine's lock. The render thread
/// (``observePlayback``) never reads ``processor``: it loads an atomic, unretained pointer to
/// it (published with release ordering). A replaced processor is stopped and kept alive in
/// `retired` until ``dropRetiredProcessors()``, which the engine calls only once the graph's
/// output stream is gone, so a render callback still holding the old pointer never sees it freed.
final class VoiceProcessingSettings: PlaybackObserver, @unchecked Sendable {
    /// Whether voice processing is on.
    var isEnabled = false
    /// The input's bypass (``AudioInputNode/isVoiceProcessingBypassed``).
    var isBypassed = false { didSet { processor?.isBypassed = isBypassed } }
    /// The input's gain control (``AudioInputNode/isVoiceProcessingAGCEnabled``), on by default as on Apple's.
    var isGainControlEnabled = true { didSet { processor?.isGainControlEnabled = isGainControlEnabled } }
    /// The input's mute (``AudioInputNode/isVoiceProcessingInputMuted``).
    var isInputMuted = false { didSet { processor?.isMuted = isInputMuted } }

    /// The input's ducking of other audio (kept, not applied).
    var duckingConfiguration = AudioVoiceProcessingOtherAudioDuckingConfiguration()
    /// The input's muted-speech listener.
    var speechListener: (@Sendable (AudioVoiceProcessingSpeechActivityEvent) -> Void)? {
        didSet { processor?.setMutedSpeechListener(speechListener) }
    }

    /// The processor of the graph being built or run (nil: none).
    private(set) var processor: VoiceProcessor? {
        didSet {
            let bits = processor.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0
            renderProcessor.store(bits, ordering: .releasing)
        }
    }
    /// ``processor`` for the render thread: an unretained pointer's bits, 0 for none.
    private let renderProcessor = Atomic<UInt>(0)
    /// Processors replaced while a render callback may still hold them (control thread).
    private(set) var retired: [VoiceProcessor] = []

    deinit { processor?.stop() }

    /// A fresh processor for a graph about to be built (the previous one stops), with the
    /// switches as they are.
    func makeProcessor(sampleRate: Int, channelCount: Int, maximumFramesPerSlice: Int,
                       delayMilliseconds: Int) throws(VoiceProcessingError) -> VoiceProcessor {
        discardProcessor()
        let p = try VoiceProcessor(sampleRate: sampleRate, channelCount: channelCount,
                                   maximumFramesPerSlice: maximumFramesPerSlice, delayMilliseconds: delayMilliseconds)
        p.isBypassed = isBypassed
        p.isGainControlEnabled = isGainControlEnabled
        p.isMuted = isInputMuted
        p.setMutedSpeechListener(speechListener)
        processor = p
        return p
    }

    /// Stops and drops the processor (voice processing turned off, or a new graph).
    func discardProcessor() {
        guard let p = processor else { return }
        processor = nil
        p.stop()
        retired.append(p)
    }

    /// Frees the replaced processors; only once no render callback can run (the output stream is gone).
    func dropRetiredProcessors() {
        retired.removeAll()
    }

    func observePlayback(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int) {
        let bits = renderProcessor.load(ordering: .acquiring)
        guard let raw = UnsafeRawPointer(bitPattern: bits) else { return }
        Unmanaged<VoiceProcessor>.fromOpaque(raw).takeUnretainedValue()
            .observePlayback(channels, channelCount: channelCount, frameCount: frameCount)
    }
}
