// The node types registered beside their classes: looked up by name by the graph-file loader and the engine.
import AudioGraphRealtime

/// The registered node types (``NodeTypeDescriptor``), by name. A module registers its types
/// once before loading graph files (`NodeTypeRegistry.register(MyNode.descriptor)`); the
/// graph-file loader, checker and factory then accept files that name them.
///
/// Thread safety: any control thread; lookups and registrations take a ``ControlLock``.
package enum NodeTypeRegistry {
    private static let table = ControlLock<[String: NodeTypeDescriptor]>([:])

    /// Registers `descriptor` (again: replaces the one of that name, so a module may register
    /// at every entry point). The name must be letters and digits.
    package static func register(_ descriptor: NodeTypeDescriptor) {
        precondition(!descriptor.name.isEmpty && descriptor.name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) },
                     "a node type's name is letters and digits: \"\(descriptor.name)\"")
        table.withLock { $0[descriptor.name] = descriptor }
    }

    /// The descriptor named `name`, or nil.
    package static func descriptor(named name: String) -> NodeTypeDescriptor? {
        table.withLock { $0[name] }
    }

    /// Removes the type named `name` (tests that register types of their own take them out again,
    /// so that other tests see only the stock types in lists and messages).
    package static func unregister(named name: String) {
        _ = table.withLock { $0.removeValue(forKey: name) }
    }

    /// The registered names, sorted.
    package static var names: [String] { table.withLock { $0.keys.sorted() } }
}
