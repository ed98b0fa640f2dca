// A node type's parameters as a table of templates, expanded per input bus and eq band.

/// The parameters of a node type: one ``ParameterTemplate`` per name, expanded into
/// ``ParameterInfo`` values for a node with a given rate, input bus count and band count.
/// Node classes create their parameters from their table; the graph-file schema names the same
/// table, so the loader and the engine agree on every range and default.
///
/// Thread safety: immutable; safe to share between threads.
package struct ParameterTable: Sendable {
    /// The templates, in order.
    package let templates: [ParameterTemplate]

    /// A table of `templates`.
    package init(_ templates: [ParameterTemplate]) { self.templates = templates }

    /// The table of a node type without parameters.
    package static let none = ParameterTable([])

    /// The parameter at `address` for a node with `inputBusCount` inputs and `bandCount` eq bands,
    /// with ranges at `sampleRate`; nil when the node has no such parameter.
    package func parameterInfo(for address: ParameterAddress, sampleRate: Double, inputBusCount: Int,
                              bandCount: Int) -> ParameterInfo? {
        for template in templates where template.name == address.name {
            switch template.element {
            case .global:
                if address.scope == .global, address.group == nil { return template.info(element: 0, sampleRate: sampleRate) }
            case .perInput:
                if address.scope == .input, address.element >= 0, address.element < inputBusCount {
                    return template.info(element: address.element, sampleRate: sampleRate)
                }
            case .perBand:
                if address.scope == .global, address.group == "band", address.element >= 0, address.element < bandCount {
                    return template.info(element: address.element, sampleRate: sampleRate)
                }
            case .listener:
                if address.scope == .global, address.group == "listener", address.element < 0 {
                    return template.info(element: -1, sampleRate: sampleRate)
                }
            }
        }
        return nil
    }

    /// Every parameter of a node with `inputBusCount` inputs and `bandCount` eq bands: the
    /// global ones, then per input bus, then per band.
    package func parameterInfos(sampleRate: Double, inputBusCount: Int, bandCount: Int) -> [ParameterInfo] {
        var infos: [ParameterInfo] = []
        for template in templates where template.element == .global || template.element == .listener {
            infos.append(template.info(element: template.element == .listener ? -1 : 0, sampleRate: sampleRate))
        }
        for index in 0..<max(0, inputBusCount) {
            for template in templates where template.element == .perInput {
                infos.append(template.info(element: index, sampleRate: sampleRate))
            }
        }
        for index in 0..<max(0, bandCount) {
            for template in templates where template.element == .perBand {
                infos.append(template.info(element: index, sampleRate: sampleRate))
            }
        }
        return infos
    }

    /// The parameter names in the spec's notation (`input.N.volume`, `band.N.gain`, `listener.x`).
    package var parameterNames: [String] {
        templates.map { template in
            switch template.element {
            case .global: return template.name
            case .perInput: return "input.N.\(template.name)"
            case .perBand: return "band.N.\(template.name)"
            case .listener: return "listener.\(template.name)"
            }
        }
    }
}

