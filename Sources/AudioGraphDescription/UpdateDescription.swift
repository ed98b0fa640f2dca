// A timed change list: actions applied together at one frame while rendering.
import AudioGraphCore

/// When an update applies: a time in seconds or a frame on the graph's output timeline.
package enum UpdateTime: Sendable, Hashable {
    case time(Double)
    case frame(Int64)

    /// The frame at `sampleRate` (a time is rounded to the nearest frame).
    package func frame(sampleRate: Double) -> Int64 {
        switch self {
        case .frame(let frame): return frame
        case .time(let seconds):
            return FrameCount.frames(seconds: seconds, sampleRate: sampleRate)
        }
    }
}

/// One action of an update. Applied in order to the graph as one pending-change list.
package enum UpdateAction: Sendable, Hashable {
    /// Sets a parameter, ramping linearly over `rampDuration` seconds (0: a step).
    case setParameter(node: String, address: ParameterAddress, value: Double, rampDuration: Double)
    /// Connects an output bus to a free input bus.
    case connect(ConnectionDescription)
    /// Removes the connection into the input bus `to`.
    case disconnect(to: BusReference)
    /// Adds a node (its connections follow as `connect` actions). Its time counts from this update.
    case addNode(NodeDescription)
    /// Removes a node and every connection to or from it.
    case removeNode(id: String)
    /// Sets a property the node type allows to change while running. `configuration` is the
    /// node's whole configuration after the change (filled in by the validator).
    case setProperty(node: String, name: String, value: JSONValue, configuration: NodeConfiguration)

    /// The action's key in a graph file.
    package var name: String {
        switch self {
        case .setParameter: return "setParameter"
        case .connect: return "connect"
        case .disconnect: return "disconnect"
        case .addNode: return "addNode"
        case .removeNode: return "removeNode"
        case .setProperty: return "setProperty"
        }
    }

    /// Every action key.
    package static let names = ["setParameter", "connect", "disconnect", "addNode", "removeNode", "setProperty"]
}

/// `{ "frame": 24000, "actions": [ ... ] }` or `{ "time": 0.5, "actions": [ ... ] }`.
///
/// Thread safety: a value type; safe to share between threads.
package struct UpdateDescription: Sendable, Hashable {
    /// When the actions apply.
    package var when: UpdateTime
    /// The actions, in file order.
    package var actions: [UpdateAction]

    /// Creates an update.
    package init(when: UpdateTime, actions: [UpdateAction]) {
        self.when = when
        self.actions = actions
    }
}
