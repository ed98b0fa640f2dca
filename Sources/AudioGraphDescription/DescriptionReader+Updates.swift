// Decoding update entries and their actions (their effect on the graph is checked by the validator).
import AudioGraphCore

extension DescriptionReader {
    /// Locations of decoded actions, by update location then action index.
    func decodeUpdate(_ value: JSONValue, at location: String) -> UpdateDescription? {
        guard let object = object(value, at: location, allowed: ["time", "frame", "actions"], required: ["actions"]) else { return nil }
        var when: UpdateTime?
        switch (object["time"], object["frame"]) {
        case (nil, nil):
            report(location, .invalidUpdate("an update needs \"time\" (seconds) or \"frame\""))
        case (.some, .some):
            report(location, .invalidUpdate("give either \"time\" or \"frame\", not both"))
        case (let time?, nil):
            if let seconds = number(time, at: Self.join(location, "time"), .time) { when = .time(seconds) }
        case (nil, let frame?):
            if let frames = integer(frame, at: Self.join(location, "frame"), in: 0...Int(Int64.max / 2)) { when = .frame(Int64(frames)) }
        }
        var actions: [UpdateAction] = []
        var locations: [String] = []
        if let value = object["actions"], let array = array(value, at: Self.join(location, "actions")) {
            for (index, element) in array.enumerated() {
                let base = Self.join(Self.join(location, "actions"), index: index)
                if let (action, actionLocation) = decodeAction(element, at: base) {
                    actions.append(action)
                    locations.append(actionLocation)
                }
            }
        }
        guard let when else { return nil }
        actionLocations[location] = locations
        return UpdateDescription(when: when, actions: actions)
    }

    private func decodeAction(_ value: JSONValue, at base: String) -> (UpdateAction, String)? {
        guard case .object(let wrapper) = value else {
            report(base, .wrongType(expected: "an action object", found: value.typeDescription))
            return nil
        }
        guard wrapper.members.count == 1, let member = wrapper.members.first else {
            report(base, .invalidUpdate("an action object has exactly one key (one of \(UpdateAction.names.joined(separator: ", "))), found \(wrapper.members.count)"))
            return nil
        }
        let name = member.key
        let path = Self.join(base, name)
        guard UpdateAction.names.contains(name) else {
            report(path, .unknownKey(name, allowed: UpdateAction.names))
            return nil
        }
        func at(_ key: String) -> String { Self.join(path, key) }
        switch name {
        case "setParameter":
            guard let object = object(member.value, at: path, allowed: ["node", "address", "value", "rampDuration"],
                                      required: ["node", "address", "value"]) else { return nil }
            let node = object["node"].flatMap { string($0, at: at("node")) }
            var address: ParameterAddress?
            if let string = object["address"].flatMap({ string($0, at: at("address")) }) {
                address = ParameterAddress(string)
                if address == nil {
                    report(at("address"), .unknownParameter(address: string, reason: "not an address (write name, group.N.name or input.N.name)"))
                }
            }
            let value = object["value"].flatMap { number($0, at: at("value")) }
            var ramp = 0.0
            if let rampValue = object["rampDuration"] {
                guard let seconds = number(rampValue, at: at("rampDuration"), .time) else { return nil }
                ramp = seconds
            }
            guard let node, let address, let value else { return nil }
            return (.setParameter(node: node, address: address, value: value, rampDuration: ramp), path)
        case "connect":
            guard let connection = decodeConnection(member.value, at: path) else { return nil }
            return (.connect(connection), path)
        case "disconnect":
            guard let object = object(member.value, at: path, allowed: ["to"], required: ["to"]),
                  let to = object["to"].flatMap({ busReference($0, at: at("to")) }) else { return nil }
            return (.disconnect(to: to), path)
        case "addNode":
            guard let node = decodeNode(member.value, at: path) else { return nil }
            return (.addNode(node), nodeLocationOfAdded(node, path))
        case "removeNode":
            guard let id = string(member.value, at: path) else { return nil }
            return (.removeNode(id: id), path)
        default:
            guard let object = object(member.value, at: path, allowed: ["node", "name", "value"], required: ["node", "name", "value"]),
                  let node = object["node"].flatMap({ string($0, at: at("node")) }),
                  let propertyName = object["name"].flatMap({ string($0, at: at("name")) }),
                  let value = object["value"] else { return nil }
            return (.setProperty(node: node, name: propertyName, value: value, configuration: .unresolved), path)
        }
    }

    private func nodeLocationOfAdded(_ node: NodeDescription, _ path: String) -> String { "\(path) (id \"\(node.id)\")" }
}
