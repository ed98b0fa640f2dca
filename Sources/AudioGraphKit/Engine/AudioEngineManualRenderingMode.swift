// Manual rendering's mode and status values (cf. AVAudioEngineManualRenderingMode / ...Status).

/// How the application pulls the engine in manual rendering mode.
public enum AudioEngineManualRenderingMode: Int, Sendable {
    /// The application renders as fast as it likes with `renderOffline(_:to:)` (no deadline).
    case offline = 0
    /// The application calls `manualRenderingBlock` from its own real-time thread: the block
    /// never allocates, locks or waits.
    case realtime = 1
}

/// What a manual render call did.
public enum AudioEngineManualRenderingStatus: Int, Sendable {
    /// Rendering failed (not in manual mode, not running, or more frames than the maximum).
    case error = -1
    /// The requested frames were rendered.
    case success = 0
    /// The input node had not enough data (manual input is not supported on Linux yet).
    case insufficientDataFromInputNode = 1
    /// The call cannot run now (a real-time render while the engine is changing).
    case cannotDoInCurrentContext = 2
}
