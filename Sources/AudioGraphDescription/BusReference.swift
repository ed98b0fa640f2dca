// One bus of one node as a connection names it: "node" (bus 0) or "node:N".
import AudioGraphCore

/// A reference to bus `bus` of node `node`.
///
/// Thread safety: a value type; safe to share between threads.
public struct BusReference: Sendable, Hashable, CustomStringConvertible {
    /// The node's id.
    public var node: String
    /// The bus index (0 when the string names only the node).
    public var bus: Int

    /// Creates a reference.
    public init(node: String, bus: Int = 0) {
        self.node = node
        self.bus = bus
    }

    /// Parses `"node"` or `"node:N"` (N decimal, no sign); nil otherwise.
    public init?(_ string: String) {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty, parts.count <= 2 else { return nil }
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let bus = Int(digits) else { return nil }
            self.init(node: String(name), bus: bus)
        } else {
            self.init(node: String(name))
        }
    }

    /// `node` for bus 0, `node:N` otherwise.
    public var description: String { bus == 0 ? node : "\(node):\(bus)" }
}
