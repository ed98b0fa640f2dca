// A node's typed properties: its type's descriptor's options value.
import AudioGraphCore

/// The decoded `properties` of a node: the options value its type's ``NodeTypeDescriptor``
/// decoded (``options(as:)`` gives it as the type's own value, e.g. `PlayerProperties`).
///
/// Thread safety: a value type; safe to share between threads.
package enum NodeConfiguration: Sendable, Hashable {
    /// A `setProperty` update's value before the checker knows the node's type.
    case unresolved
    /// A type registered with ``NodeTypeRegistry``: its descriptor's options.
    case registered(RegisteredNodeOptions)

    /// The node type this configuration belongs to.
    package var type: NodeType {
        switch self {
        case .unresolved: return .unresolved
        case .registered(let r): return r.type
        }
    }

    /// The decoded options, or nil while unresolved.
    package var options: (any NodeOptions)? {
        if case .registered(let r) = self { return r.options }
        return nil
    }

    /// The options as the type's own value, or nil.
    package func options<T: NodeOptions>(as type: T.Type) -> T? { options as? T }

    /// The number of elements of the type's per-band parameters (an eq's bands); 0 for others.
    package var bandCount: Int {
        guard case .registered(let r) = self, let d = r.type.descriptor else { return 0 }
        return d.bandCount(r.options)
    }
}

/// The decoded options of a node whose type is registered with ``NodeTypeRegistry``: the type
/// and its descriptor's options value (compared and hashed as that value).
///
/// Thread safety: a value type; safe to share between threads.
package struct RegisteredNodeOptions: Sendable, Hashable {
    /// The node type.
    package let type: NodeType
    /// The descriptor's options.
    package let options: any NodeOptions

    package init(type: NodeType, options: any NodeOptions) {
        self.type = type
        self.options = options
    }

    package static func == (a: RegisteredNodeOptions, b: RegisteredNodeOptions) -> Bool {
        a.type == b.type && AnyHashable(a.options) == AnyHashable(b.options)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(AnyHashable(options))
    }
}
