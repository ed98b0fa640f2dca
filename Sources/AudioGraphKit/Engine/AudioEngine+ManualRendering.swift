// Manual rendering: the application pulls the engine (offline, or from its own real-time thread).
import AudioGraphNodes
import Foundation
import Synchronization

/// Manual rendering's state while the graph exists.
final class ManualRenderState: @unchecked Sendable {
    /// The sample time of the next render (read from any thread).
    let nextSampleTime = Atomic<Int64>(0)
    var sampleTime: Int64 { nextSampleTime.load(ordering: .acquiring) }
    /// Zeros to copy when nothing reaches the output.
    let silence: ChannelBufferStorage

    init(channels: Int, maximumFrames: Int) {
        silence = ChannelBufferStorage(channelCount: channels, capacity: maximumFrames)
    }
}

extension AudioEngine {
    /// The block that renders in `.realtime` manual mode (cf. AVAudioEngineManualRenderingBlock):
    /// `(frameCount, outputData, outError) -> status`. Real-time safe: no allocation, no lock,
    /// no wait; call it from one thread at a time.
    public typealias ManualRenderingBlock = @Sendable (
        _ numberOfFrames: AudioFrameCount, _ outBuffer: UnsafeMutablePointer<AudioBufferList>,
        _ outError: UnsafeMutablePointer<OSStatus>?) -> AudioEngineManualRenderingStatus

    /// Switches the engine to manual rendering: the output node stops being a PulseAudio sink and
    /// the application pulls `format` (the graph then runs at its rate) in slices of at most
    /// `maximumFrameCount` frames. The engine must be stopped.
    ///
    /// - Throws: ``AudioEngineError/invalidState(call:reason:code:)`` when the engine runs, or
    ///   the format is not linear PCM with 1...1024 channels.
    public func enableManualRenderingMode(_ mode: AudioEngineManualRenderingMode, format pcmFormat: AudioFormat,
                                          maximumFrameCount: AudioFrameCount) throws(AudioEngineError) {
        lock.lock()
        defer { lock.unlock() }
        do {
            let call = "enableManualRenderingMode(_:format:maximumFrameCount:)"
            guard !running else {
                throw .invalidState(call: call, reason: "stop the engine first", code: AudioEngineError.initializedCode)
            }
            guard maximumFrameCount > 0, maximumFrameCount <= 1 << 20 else {
                throw .invalidState(call: call, reason: "maximumFrameCount \(maximumFrameCount) is outside 1...1048576",
                                    code: AudioEngineError.invalidModeCode)
            }
            guard pcmFormat.commonFormat != .otherFormat, pcmFormat.channelCount >= 1 else {
                throw .invalidState(call: call, reason: "\(pcmFormat) is not a PCM format the engine renders",
                                    code: AudioEngineError.invalidModeCode)
            }
            tearDownGraph()
            live?.context.close()
            live = nil
            manualMode = mode
            manualFormat = pcmFormat
            manualMaximumFrames = maximumFrameCount
        }
    }

    /// Back to rendering to PulseAudio (the engine stops first).
    public func disableManualRenderingMode() {
        withLock {
            guard manualMode != nil else { return }
            stop()
            manualMode = nil
            manualFormat = nil
        }
    }

    /// Threads that render each slice in `.offline` manual mode (``AudioGraph/renderThreadCount``):
    /// 1, the default, renders serially; more render the independent inputs of the first mixer
    /// on worker threads, bit-identical to the serial render. `.realtime` mode always renders
    /// serially (the render call would wait for the workers). Values below 1 mean 1. Set it
    /// while the engine is stopped; it applies from the next `prepare()` / `start()`.
    public var manualRenderingThreadCount: Int {
        get { withLock { manualThreads } }
        set {
            withLock {
                manualThreads = max(1, newValue)
                if let g = graph, !running, manualMode == .offline { try? g.setRenderThreadCount(manualThreads) }
            }
        }
    }

    /// Whether the engine is in manual rendering mode.
    public var isInManualRenderingMode: Bool { withLock { manualMode != nil } }

    /// The manual rendering mode (`.offline` when not in manual mode, as Apple reports).
    public var manualRenderingMode: AudioEngineManualRenderingMode { withLock { manualMode ?? .offline } }

    /// The format the application pulls in manual mode (the output device's otherwise).
    public var manualRenderingFormat: AudioFormat { withLock { manualFormat ?? renderFormat } }

    /// The largest frame count one manual render call may ask for.
    public var manualRenderingMaximumFrameCount: AudioFrameCount { withLock { manualMaximumFrames } }

    /// The sample time of the next frame manual rendering will produce.
    public var manualRenderingSampleTime: AudioFramePosition { withLock { manualState?.sampleTime ?? 0 } }

    /// Manual rendering's state, made with the graph.
    func manualRenderState() -> ManualRenderState {
        if let manualState { return manualState }
        let s = ManualRenderState(channels: Int(manualFormat?.channelCount ?? 2), maximumFrames: Int(manualMaximumFrames))
        manualState = s
        return s
    }

    /// Renders `numberOfFrames` frames into `buffer` (`.offline` mode): `buffer.frameLength` is
    /// set to the frames rendered, in the buffer's format (its channels; float32, float64, int16
    /// or int32; interleaved or not). Taps deliver what was rendered before this returns.
    ///
    /// - Returns: `.success`; `.error` when more frames are asked than
    ///   `manualRenderingMaximumFrameCount` or the buffer holds (nothing is rendered then).
    /// - Throws: ``AudioEngineError/invalidState(call:reason:code:)`` when not in offline manual
    ///   mode or not running.
    public func renderOffline(_ numberOfFrames: AudioFrameCount, to buffer: AudioPCMBuffer) throws -> AudioEngineManualRenderingStatus {
        let call = "renderOffline(_:to:)"
        // Offline manual rendering is not real time: the render runs under the engine's lock,
        // so edits and tap removals from other threads fall between render calls.
        lock.lock()
        defer { lock.unlock() }
        guard manualMode == .offline else {
            throw AudioEngineError.invalidState(call: call, reason: "the engine is not in offline manual rendering mode",
                                                code: AudioEngineError.invalidModeCode)
        }
        guard running, let renderGraph = graph else {
            throw AudioEngineError.invalidState(call: call, reason: "the engine is not running", code: AudioEngineError.notRunningCode)
        }
        let state = manualRenderState()
        guard numberOfFrames <= manualMaximumFrames, numberOfFrames <= buffer.frameCapacity else {
            return .error
        }
        let n = Int(numberOfFrames)
        // Players' file segments: their disk buffers hold what this render needs (offline only).
        for node in attached { (node as? AudioPlayerNode)?.prepareForOfflineRender() }
        let result = renderGraph.render(frameCount: n)
        buffer.copyFrames(from: result?.buffer ?? state.silence.list, sourceFrame: 0, toFrame: 0, frameCount: n)
        buffer.frameLength = numberOfFrames
        state.nextSampleTime.wrappingAdd(Int64(n), ordering: .releasing)
        renderGraph.collectRetiredPlans()
        _ = renderGraph.deliverPendingTaps()
        return .success
    }

    /// The render block of `.realtime` manual mode (nil in `.offline` mode or before `start()`
    /// built the graph). It fills `outBuffer` (the manual format's float channels, one
    /// `AudioBuffer` per channel, or one interleaved buffer) and returns `.success`, or `.error`
    /// with `outError` set when more frames are asked than the maximum or the buffers hold.
    public var manualRenderingBlock: ManualRenderingBlock? {
        withLock {
            guard manualMode == .realtime, let graph, let format = manualFormat else { return nil }
            let state = manualRenderState()
            let maximum = Int(manualMaximumFrames)
            let interleaved = format.isInterleaved
            let channels = Int(format.channelCount)
            return { [graph] frames, outBuffer, outError in
                let n = Int(frames)
                let list = UnsafeMutableAudioBufferListPointer(outBuffer)
                let need = interleaved ? 1 : channels
                var fits = n <= maximum && list.count >= need
                var b = 0
                while fits && b < need {   // an index loop: generic collection algorithms allocate in debug builds
                    let buffer = list[b]
                    fits = buffer.mData != nil && Int(buffer.mDataByteSize) >= n * 4 * (interleaved ? channels : 1)
                    b += 1
                }
                guard fits else {
                    outError?.pointee = -50  // kAudio_ParamError
                    return .error
                }
                let result = graph.render(frameCount: n)
                ManualRenderOutput.write(result, frames: n, channels: channels, interleaved: interleaved, into: list)
                state.nextSampleTime.wrappingAdd(Int64(n), ordering: .releasing)
                outError?.pointee = noErr
                return .success
            }
        }
    }
}

/// Writing a rendered slice into a CoreAudio buffer list (float32), real-time safe.
enum ManualRenderOutput {
    static func write(_ result: InputBuffer?, frames n: Int, channels: Int, interleaved: Bool,
                      into list: UnsafeMutableAudioBufferListPointer) {
        if interleaved {
            let out = list[0].mData!.assumingMemoryBound(to: Float.self)
            for c in 0..<channels {
                if let r = result, !r.isSilent, c < r.buffer.channelCount {
                    let x = r.buffer.channel(c)
                    for i in 0..<n { out[i * channels + c] = x[i] }
                } else {
                    for i in 0..<n { out[i * channels + c] = 0 }
                }
            }
        } else {
            for c in 0..<channels {
                let out = list[c].mData!.assumingMemoryBound(to: Float.self)
                if let r = result, !r.isSilent, c < r.buffer.channelCount {
                    out.update(from: r.buffer.channel(c), count: n)
                } else {
                    out.update(repeating: 0, count: n)
                }
                list[c].mDataByteSize = UInt32(n * 4)
            }
        }
    }
}
