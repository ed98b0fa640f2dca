// The node types a graph file may name: those registered in NodeTypeRegistry.
import AudioGraphCore

/// A node type of the graph format (`"type"` of a node object): the name of a descriptor
/// registered with ``NodeTypeRegistry`` (the stock types' names are the constants below; their
/// behaviour is in their descriptors, beside their classes).
///
/// Thread safety: a value type; safe to share between threads.
package struct NodeType: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The type's name as graph files write it.
    package let rawValue: String

    /// The type named `rawValue`; nil when no such type is registered.
    package init?(rawValue: String) {
        guard NodeTypeRegistry.contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A `setProperty` value whose node's type is not known yet (never a node's type).
    static let unresolved = NodeType(stock: "")

    private init(stock name: String) { rawValue = name }

    package static let oscillator = NodeType(stock: "oscillator")
    package static let player = NodeType(stock: "player")
    package static let input = NodeType(stock: "input")
    package static let mixer = NodeType(stock: "mixer")
    package static let environment = NodeType(stock: "environment")
    package static let eq = NodeType(stock: "eq")
    package static let delay = NodeType(stock: "delay")
    package static let recorder = NodeType(stock: "recorder")
    package static let converter = NodeType(stock: "converter")
    package static let output = NodeType(stock: "output")
    package static let genericOutput = NodeType(stock: "genericOutput")
    package static let analyser = NodeType(stock: "analyser")
    package static let reverb = NodeType(stock: "reverb")
    package static let timePitch = NodeType(stock: "timePitch")
    package static let varispeed = NodeType(stock: "varispeed")
    package static let lv2 = NodeType(stock: "lv2")

    /// The stock types' names in the order the format lists them (messages list the registered
    /// types in this order, then the others by name).
    package static let stock: [NodeType] = [.oscillator, .player, .input, .mixer, .environment, .eq, .delay, .recorder, .converter,
                                           .output, .genericOutput, .analyser, .reverb, .timePitch, .varispeed, .lv2]

    /// The types a graph file may name now: the stock ones in the format's order (those that are
    /// descriptors once registered), then the other registered ones by name.
    package static var allCases: [NodeType] {
        let registered = NodeTypeRegistry.names
        return stock.filter { registered.contains($0.rawValue) }
            + registered.filter { name in !stock.contains { $0.rawValue == name } }.map(NodeType.init(stock:))
    }

    /// The registered descriptor (nil only for ``unresolved``).
    package var descriptor: NodeTypeDescriptor? { NodeTypeRegistry.descriptor(named: rawValue) }

    package var description: String { rawValue }
}
