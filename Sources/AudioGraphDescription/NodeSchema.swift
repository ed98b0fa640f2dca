// What the format says about one node type (kind, buses, property keys, parameter table), read from its descriptor.
import AudioGraphCore

/// What the format says about one node type: a view of its registered ``NodeTypeDescriptor``
/// (kind, buses, property keys, parameter table: `schema.kind` reads `descriptor.kind`, so each
/// fact has one home) plus the format's own wording about it (``explainUnknown(_:inputBusCount:bandCount:)``).
///
/// The parameter tables belong to the node classes (``ParameterTable``); the schema names them so
/// that the loader and the engine agree on every range and default.
///
/// Thread safety: immutable; safe to share between threads.
@dynamicMemberLookup
package struct NodeSchema: Sendable {
    /// The node type.
    package let type: NodeType
    /// The type's descriptor (a placeholder's for ``NodeType/unresolved``).
    package let descriptor: NodeTypeDescriptor

    /// A field of the descriptor (`kind`, `inputBuses`, `outputBusCount`, `propertyKeys`,
    /// `runtimePropertyKeys`, `convertsInputs`, `parameters`, ...).
    package subscript<Value>(dynamicMember field: KeyPath<NodeTypeDescriptor, Value>) -> Value {
        descriptor[keyPath: field]
    }

    /// The schema of `type`: its registered descriptor's (a placeholder for ``NodeType/unresolved``).
    package static func `for`(_ type: NodeType) -> NodeSchema {
        guard let d = type.descriptor else { return unresolved }
        return NodeSchema(type: type, descriptor: d)
    }

    /// The parameter at `address` for a node with `inputBusCount` inputs and `bandCount` eq bands,
    /// with ranges at `sampleRate`; nil when the node has no such parameter.
    package func parameterInfo(for address: ParameterAddress, sampleRate: Double, inputBusCount: Int,
                              bandCount: Int) -> ParameterInfo? {
        descriptor.parameters.parameterInfo(for: address, sampleRate: sampleRate, inputBusCount: inputBusCount, bandCount: bandCount)
    }

    /// Every parameter of a node with `inputBusCount` inputs and `bandCount` eq bands (see
    /// ``ParameterTable/parameterInfos(sampleRate:inputBusCount:bandCount:)``).
    package func parameterInfos(sampleRate: Double, inputBusCount: Int, bandCount: Int) -> [ParameterInfo] {
        descriptor.parameters.parameterInfos(sampleRate: sampleRate, inputBusCount: inputBusCount, bandCount: bandCount)
    }

    /// The parameter names in the spec's notation (`input.N.volume`, `band.N.gain`, `listener.x`).
    package var parameterNames: [String] { descriptor.parameters.parameterNames }

    /// Why `address` is not a parameter of such a node (for error messages).
    func explainUnknown(_ address: ParameterAddress, inputBusCount: Int, bandCount: Int) -> String {
        let matching = descriptor.parameters.templates.filter { $0.name == address.name }
        if let perInput = matching.first(where: { $0.element == .perInput }), address.scope == .input {
            return "this \(type.rawValue) node has \(inputBusCount) input bus\(inputBusCount == 1 ? "" : "es")"
                + " (input.0 to input.\(inputBusCount - 1)); raise inputBusCount for input.\(address.element).\(perInput.name)"
        }
        if matching.contains(where: { $0.element == .perBand }), address.group == "band" {
            return "the eq has \(bandCount) band\(bandCount == 1 ? "" : "s")"
        }
        let names = parameterNames
        if names.isEmpty { return "a \(type.rawValue) node has no parameters" }
        return "\(article) \(type.rawValue) node has \(names.joined(separator: ", "))"
    }

    var article: String { "aeiou".contains(type.rawValue.first ?? "x") ? "an" : "a" }
}


extension NodeSchema {
    /// A placeholder for a value whose node type is not known yet (never a node's schema): an
    /// effect with one input and one output, no properties and no parameters.
    static let unresolved = NodeSchema(type: .unresolved, descriptor: NodeTypeDescriptor(
        name: NodeType.unresolved.rawValue, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        makeNode: { _ throws(AudioGraphError) in throw .invalidState("a node whose type is not known yet cannot be made") }))
}
