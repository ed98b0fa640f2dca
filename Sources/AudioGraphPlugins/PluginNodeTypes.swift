// The node types this module defines (lv2), registered with graph files in one call.
import AudioGraphCore

/// The plugin-hosting node types as ``NodeTypeDescriptor``s (each written beside its class).
/// ``register()`` makes graph files accept them; AudioGraphKit's loader calls it.
///
/// Thread safety: any control thread.
public enum PluginNodeTypes {
    /// The descriptors.
    public static let descriptors: [NodeTypeDescriptor] = [
        LV2Node.descriptor,
    ]

    /// Registers every descriptor with ``NodeTypeRegistry`` (idempotent).
    public static func register() {
        for d in descriptors { NodeTypeRegistry.register(d) }
    }
}
