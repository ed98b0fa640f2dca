// The node types this module defines (lv2), registered with graph files in one call.
import AudioGraphCore

/// The plugin-hosting node types as ``NodeTypeDescriptor``s (each written beside its class).
/// ``register()`` makes graph files accept them; AudioGraphKit's loader calls it.
///
/// Thread safety: any control thread.
package enum PluginNodeTypes {
    /// The types: each name with the function that makes its descriptor
    /// (``NodeTypeRegistry/register(named:_:)``: made when a graph first names it).
    package static let types: [(name: String, make: @Sendable () -> NodeTypeDescriptor)] = [
        ("lv2", { LV2Node.descriptor }),
    ]


    /// Registers every type with ``NodeTypeRegistry`` (idempotent; no descriptor is made here).
    package static func register() {
        NodeTypeRegistry.register(named: types)
    }
}
