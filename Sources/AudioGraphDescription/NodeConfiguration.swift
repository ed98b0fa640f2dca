// A node's typed properties: one case per node type.
import AudioGraphCore
import AudioGraphPlugins
import AudioGraphNodes
import AudioGraphPulse

/// The decoded `properties` of a node, typed by its node type.
///
/// Thread safety: a value type; safe to share between threads.
public enum NodeConfiguration: Sendable, Hashable {
    case player(PlayerProperties)
    case input(InputProperties)
    case environment(EnvironmentProperties)
    case eq(EQProperties)
    case recorder(RecorderProperties)
    case output(OutputProperties)
    case genericOutput(GenericOutputProperties)
    /// An LV2 plugin (its URI and what the catalogue said about it).
    case lv2(LV2Properties)
    /// A `setProperty` update's value before the checker knows the node's type.
    case unresolved
    /// A type registered with ``NodeTypeRegistry``: its descriptor's options.
    case registered(RegisteredNodeOptions)

    /// The node type this configuration belongs to.
    public var type: NodeType {
        switch self {
        case .player: return .player
        case .input: return .input
        case .environment: return .environment
        case .eq: return .eq
        case .recorder: return .recorder
        case .output: return .output
        case .genericOutput: return .genericOutput
        case .lv2: return .lv2
        case .unresolved: return .unresolved
        case .registered(let r): return r.type
        }
    }

    /// The options of a registered type as its own value, or nil.
    public func options<T: NodeOptions>(as type: T.Type) -> T? {
        if case .registered(let r) = self { return r.options as? T }
        return nil
    }

    /// The eq's band count; 0 for other types.
    public var bandCount: Int {
        if case .eq(let properties) = self { return properties.bands.count }
        return 0
    }
}

/// The decoded options of a node whose type is registered with ``NodeTypeRegistry``: the type
/// and its descriptor's options value (compared and hashed as that value).
///
/// Thread safety: a value type; safe to share between threads.
public struct RegisteredNodeOptions: Sendable, Hashable {
    /// The node type.
    public let type: NodeType
    /// The descriptor's options.
    public let options: any NodeOptions

    public init(type: NodeType, options: any NodeOptions) {
        self.type = type
        self.options = options
    }

    public static func == (a: RegisteredNodeOptions, b: RegisteredNodeOptions) -> Bool {
        a.type == b.type && AnyHashable(a.options) == AnyHashable(b.options)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(AnyHashable(options))
    }
}
