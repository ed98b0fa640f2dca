// How many buses a node type has on one side: fixed, or chosen by the graph file within a range.

/// How many buses a node type has on one side.
package struct BusCountRule: Sendable, Hashable {
    /// The count when the file does not say (`inputBusCount` default).
    package var defaultCount: Int
    /// The smallest count.
    package var minimum: Int
    /// The largest count.
    package var maximum: Int
    /// A rule: `defaultCount` when the file does not say, else `minimum...maximum`.
    package init(defaultCount: Int, minimum: Int, maximum: Int) {
        self.defaultCount = defaultCount
        self.minimum = minimum
        self.maximum = maximum
    }

    /// Whether the file may choose it (`inputBusCount` of mixer and environment).
    package var isVariable: Bool { minimum != maximum }

    /// A fixed count.
    package static func fixed(_ count: Int) -> BusCountRule { BusCountRule(defaultCount: count, minimum: count, maximum: count) }
}
