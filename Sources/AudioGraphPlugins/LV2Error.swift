// Why an LV2 plugin cannot be hosted: the closed set of refusals, each one line for users.

/// A reason the host refuses a plugin or a plugin configuration.
///
/// Thread safety: a value type; safe to share between threads.
public enum LV2Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// No installed plugin has this URI (searched: the LV2 path).
    case pluginNotFound(uri: String)
    /// The plugin requires an LV2 feature this host does not provide.
    case missingFeature(uri: String, feature: String)
    /// The plugin has a port of a kind this host cannot connect (atom, event, or unknown) and
    /// that is not optional.
    case unsupportedPort(uri: String, symbol: String, kind: String)
    /// The plugin has no audio output port, so it cannot feed a bus (analysers, MIDI-only plugins).
    case noAudioOutput(uri: String)
    /// `lilv_plugin_instantiate` returned nothing (the plugin's binary failed to load or refused the rate).
    case instantiationFailed(uri: String, sampleRate: Double)
    /// The thread that does a worker plugin's work could not be started (`reason`: the
    /// system's error).
    case workerThreadFailed(uri: String, reason: String)
    /// The plugin's binary cannot be loaded (missing, corrupt, missing symbols, another
    /// architecture); `reason` is the loader's (or lilv's) own message.
    case binaryNotLoadable(uri: String, reason: String)
    /// liblilv (opened on first use, not at start-up) cannot be loaded, so no LV2 plugin can be
    /// listed or run; `reason` is the loader's (naming the shared object).
    case libraryMissing(reason: String)

    public var description: String {
        switch self {
        case .pluginNotFound(let uri):
            return "no installed LV2 plugin has the URI <\(Self.printable(uri))> (see `audiograph plugins`; LV2_PATH sets where plugins are searched)"
        case let .missingFeature(uri, feature):
            return "LV2 plugin <\(uri)> requires the feature <\(feature)>, which this host does not provide"
        case let .unsupportedPort(uri, symbol, kind):
            return "LV2 plugin <\(uri)> has a required \(kind) port \"\(symbol)\", which this host cannot connect"
        case .noAudioOutput(let uri):
            return "LV2 plugin <\(uri)> has no audio output port, so it cannot be a node of the graph"
        case let .instantiationFailed(uri, rate):
            return "LV2 plugin <\(uri)> could not be instantiated at \(rate) Hz"
        case let .workerThreadFailed(uri, reason):
            return "LV2 plugin <\(uri)>: its worker thread could not be started: \(reason)"
        case let .binaryNotLoadable(uri, reason):
            return "LV2 plugin <\(uri)>: its binary cannot be loaded: \(Self.printable(reason))"
        case .libraryMissing(let reason):
            return "cannot load liblilv, so LV2 plugins cannot be used: \(reason)"
        }
    }

    /// `text` with control characters (a NUL, an escape sequence) written as `\u{..}`, so a
    /// message is one line of what was given and never drives the terminal.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
    }
}
