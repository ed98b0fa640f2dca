// The `async` forms of AudioPlayerNode's schedule calls, as Apple's SDK declares them for AVAudioPlayerNode.
import Foundation

extension AudioPlayerNode {
    /// Schedules `buffer` after what was scheduled before and returns once the player has
    /// consumed it (or stopped).
    public func scheduleBuffer(_ buffer: AudioPCMBuffer) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            scheduleBuffer(buffer, at: nil, options: [], completionHandler: { done.resume() })
        }
    }

    /// Schedules `buffer` at player time `when` with `options` and returns once the player has
    /// consumed it (or stopped).
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, at when: AudioTime?, options: AudioPlayerNodeBufferOptions = []) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            scheduleBuffer(buffer, at: when, options: options, completionHandler: { done.resume() })
        }
    }

    /// Schedules `buffer` after what was scheduled before and returns `callbackType` once that
    /// moment has come (or the player stopped).
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType) async
        -> AudioPlayerNodeCompletionCallbackType {
        await withCheckedContinuation { done in
            scheduleBuffer(buffer, completionCallbackType: callbackType, completionHandler: { done.resume(returning: $0) })
        }
    }

    /// Schedules `buffer` at player time `when` with `options` and returns `callbackType` once
    /// that moment has come (or the player stopped).
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, at when: AudioTime?, options: AudioPlayerNodeBufferOptions = [],
                               completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType) async
        -> AudioPlayerNodeCompletionCallbackType {
        await withCheckedContinuation { done in
            scheduleBuffer(buffer, at: when, options: options, completionCallbackType: callbackType,
                           completionHandler: { done.resume(returning: $0) })
        }
    }

    /// Schedules the whole of `file` at player time `when` and returns once the player has
    /// consumed it (or stopped).
    public func scheduleFile(_ file: AudioFile, at when: AudioTime?) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            scheduleFile(file, at: when, completionHandler: { done.resume() })
        }
    }

    /// Schedules the whole of `file` at player time `when` and returns `callbackType` once that
    /// moment has come (or the player stopped).
    public func scheduleFile(_ file: AudioFile, at when: AudioTime?, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType) async
        -> AudioPlayerNodeCompletionCallbackType {
        await withCheckedContinuation { done in
            scheduleFile(file, at: when, completionCallbackType: callbackType, completionHandler: { done.resume(returning: $0) })
        }
    }

    /// Schedules `numberFrames` frames of `file` from `startFrame` at player time `when` and
    /// returns once the player has consumed them (or stopped).
    public func scheduleSegment(_ file: AudioFile, startingFrame startFrame: AudioFramePosition, frameCount numberFrames: AudioFrameCount,
                                at when: AudioTime?) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            scheduleSegment(file, startingFrame: startFrame, frameCount: numberFrames, at: when, completionHandler: { done.resume() })
        }
    }

    /// Schedules `numberFrames` frames of `file` from `startFrame` at player time `when` and
    /// returns `callbackType` once that moment has come (or the player stopped).
    public func scheduleSegment(_ file: AudioFile, startingFrame startFrame: AudioFramePosition, frameCount numberFrames: AudioFrameCount,
                                at when: AudioTime?, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType) async
        -> AudioPlayerNodeCompletionCallbackType {
        await withCheckedContinuation { done in
            scheduleSegment(file, startingFrame: startFrame, frameCount: numberFrames, at: when, completionCallbackType: callbackType,
                            completionHandler: { done.resume(returning: $0) })
        }
    }
}
