// Where graph descriptions look up plugins (registered by LV2World, so lookups go through one place).
import Synchronization

/// The lookup graph files use for `lv2` nodes: given a plugin URI, the node's properties
/// (parameters, audio port counts) or a one-line reason it cannot be used. AudioGraphKit
/// registers the LV2 catalogue before it reads a graph (``GraphLoader``); without one, every
/// `lv2` node is reported.
///
/// Thread safety: any thread; the registered lookup is read and replaced under a lock
/// (control threads only, never the render thread).
package enum PluginCatalogue {
    /// A plugin's description, or why there is none (one line naming the URI).
    package typealias Lookup = @Sendable (_ uri: String) -> Result<LV2Properties, PluginLookupError>

    private static let registered = Mutex<Lookup?>(nil)

    /// Installs the lookup (idempotent for the same catalogue; the last one wins).
    package static func register(_ lookup: @escaping Lookup) {
        registered.withLock { $0 = lookup }
    }

    /// Describes the plugin with `uri` through the registered lookup.
    package static func lookUp(_ uri: String) -> Result<LV2Properties, PluginLookupError> {
        guard let lookup = registered.withLock({ $0 }) else {
            return .failure(PluginLookupError(message: "no plugin catalogue is loaded (read graphs with lv2 nodes through AudioGraphKit's GraphLoader)"))
        }
        return lookup(uri)
    }
}

/// Why a plugin cannot be used in a graph file (one line, naming the URI).
///
/// Thread safety: a value type; safe to share between threads.
package struct PluginLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line shown to users.
    package var message: String
    package init(message: String) { self.message = message }
    package var description: String { message }
}
