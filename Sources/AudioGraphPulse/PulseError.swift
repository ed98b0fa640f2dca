// The closed set of errors that PulseAudio playback, capture and device listing report.

/// What can go wrong talking to PulseAudio. Thrown on the control thread only (connecting,
/// creating and starting streams, listing devices) and reported as a fault by running streams.
///
/// `description` is one line meant for users (the CLI prints it and exits with status 3).
public enum PulseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No server answered: nothing listens at the server address (or the default one), or the
    /// connection was refused. `server` is the address tried (`$PULSE_SERVER` or "the default address" when none was given),
    /// `reason` libpulse's explanation.
    case noServer(server: String, reason: String)
    /// libpulse (opened on first use, not at start-up) cannot be loaded: `library` is its name,
    /// `reason` the loader's (naming the shared object).
    case libraryMissing(library: String, reason: String)
    /// The connection to a server that was up has failed (the server died or was killed).
    case connectionLost(reason: String)
    /// The named sink or source does not exist on the server.
    case deviceNotFound(name: String)
    /// The named sink or source a running stream used went away (PulseAudio removed the stream
    /// or moved it to another device).
    case deviceLost(name: String)
    /// A stream could not be created or connected, or failed while running (e.g. its sink was
    /// removed). `stream` is the stream name.
    case streamFailed(stream: String, reason: String)
    /// The server did not answer within the time allowed.
    case timedOut(operation: String)
    /// The server stopped answering a running stream: no data request and no timing update for
    /// `seconds` (a stopped or hung daemon; the connection itself stays open).
    case serverNotResponding(seconds: Double)
    /// A sample rate or channel count PulseAudio cannot carry (rate 1...384000 Hz, 1...32 channels).
    case unsupportedFormat(sampleRate: Double, channels: Int)
    /// The graph's `maximumFramesPerSlice` has no divisor near the live render quantum, so the
    /// quantum would fall to `quantum` frames (below ``PulseStreamConfiguration/minimumQuantumFrames``;
    /// e.g. 1 for a prime slice size like 1021).
    case sliceSizeUnsuitableForLive(maximumFramesPerSlice: Int, quantum: Int)
    /// A graph rendering with more than one thread (``AudioGraph/renderThreadCount``) cannot be
    /// played live: the real-time thread would wait on the workers.
    case parallelRenderingNotLive(threads: Int)

    /// One line for users.
    public var description: String {
        switch self {
        case let .noServer(server, reason):
            return "no PulseAudio server at \(server): \(reason)"
        case let .libraryMissing(library, reason):
            return "cannot load \(library): \(reason)"
        case let .connectionLost(reason):
            return "lost the connection to the PulseAudio server: \(reason)"
        case let .deviceNotFound(name):
            return "PulseAudio device \"\(name)\" not found"
        case let .deviceLost(name):
            return "PulseAudio device \"\(name)\" disappeared"
        case let .streamFailed(stream, reason):
            return "PulseAudio stream \"\(stream)\" failed: \(reason)"
        case let .timedOut(operation):
            return "PulseAudio server did not answer in time (\(operation))"
        case let .serverNotResponding(seconds):
            return "the PulseAudio server stopped answering (no request or timing update for \(seconds) s)"
        case let .unsupportedFormat(sampleRate, channels):
            return "PulseAudio cannot carry \(channels) channel(s) at \(sampleRate) Hz"
        case let .sliceSizeUnsuitableForLive(frames, quantum):
            let floor = PulseStreamConfiguration.minimumQuantumFrames
            return "maximumFramesPerSlice \(frames) cannot be played live: its live quantum would be \(quantum) frame(s) (use a slice size with a divisor of at least \(floor), e.g. a power of two)"
        case let .parallelRenderingNotLive(threads):
            return "a graph rendering with \(threads) threads cannot be played live (use 1 render thread)"
        }
    }
}
