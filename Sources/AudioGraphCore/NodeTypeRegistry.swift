// The node types registered beside their classes: looked up by name by the graph-file loader and the engine.
import AudioGraphRealtime

/// The registered node types (``NodeTypeDescriptor``), by name. A module registers its types
/// once before loading graph files (`NodeTypeRegistry.register(MyNode.descriptor)`, or
/// `register(named:_:)` with a function that makes the descriptor on first use); the graph-file
/// loader, checker and factory then accept files that name them.
///
/// A type registered by name is made when a graph first needs it (``descriptor(named:)``), so a
/// command that renders an oscillator does not build the other thirty descriptors — their
/// parameter tables, property tables and closures — at start-up.
///
/// Thread safety: any control thread; lookups and registrations take a ``ControlLock``. A
/// descriptor is made outside the lock (it may be made twice by racing lookups; one is kept).
package enum NodeTypeRegistry {
    /// A registered type: its descriptor, or the function that makes it.
    private enum Entry {
        case made(NodeTypeDescriptor)
        case deferred(@Sendable () -> NodeTypeDescriptor)
    }

    /// Room for the package's own types (about 35) without rehashing as they are registered.
    private static let table = ControlLock<[String: Entry]>(Dictionary(minimumCapacity: 64))

    /// Registers `descriptor` (again: replaces the one of that name, so a module may register
    /// at every entry point). The name must be letters and digits.
    package static func register(_ descriptor: NodeTypeDescriptor) {
        checkName(descriptor.name)
        table.withLock { $0[descriptor.name] = .made(descriptor) }
    }

    /// Registers the type `name` whose descriptor `make` returns, called on the first lookup
    /// (replaces a type of that name, as ``register(_:)`` does). `make` must return a descriptor
    /// named `name`.
    package static func register(named name: String, _ make: @escaping @Sendable () -> NodeTypeDescriptor) {
        checkName(name)
        table.withLock { $0[name] = .deferred(make) }
    }

    /// Registers every type of `types` as ``register(named:_:)`` does, under one lock (a module's
    /// list of its types, registered at every loading entry point).
    package static func register(named types: [(name: String, make: @Sendable () -> NodeTypeDescriptor)]) {
        for type in types { checkName(type.name) }
        table.withLock { entries in
            for type in types { entries[type.name] = .deferred(type.make) }
        }
    }

    /// Whether a type named `name` is registered (without making its descriptor).
    package static func contains(_ name: String) -> Bool {
        table.withLock { $0[name] != nil }
    }

    /// The descriptor named `name`, or nil.
    package static func descriptor(named name: String) -> NodeTypeDescriptor? {
        guard let entry = table.withLock({ $0[name] }) else { return nil }
        switch entry {
        case .made(let descriptor):
            return descriptor
        case .deferred(let make):
            let descriptor = make()
            precondition(descriptor.name == name, "the type registered as \"\(name)\" makes a descriptor named \"\(descriptor.name)\"")
            table.withLock { entries in
                if case .deferred = entries[name] { entries[name] = .made(descriptor) }
            }
            return descriptor
        }
    }

    /// Removes the type named `name` (tests that register types of their own take them out again,
    /// so that other tests see only the stock types in lists and messages).
    package static func unregister(named name: String) {
        _ = table.withLock { $0.removeValue(forKey: name) }
    }

    /// The registered names, sorted.
    package static var names: [String] { table.withLock { $0.keys.sorted() } }

    /// Stops on a name that is not letters and digits (a programming error of the registering module).
    private static func checkName(_ name: String) {
        precondition(!name.isEmpty && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII ? (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar))
                           : scalar.properties.isAlphabetic
        }, "a node type's name is letters and digits: \"\(name)\"")
    }
}
