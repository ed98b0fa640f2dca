// Human-readable and Graphviz views of a validated graph (what `audiograph inspect` prints).

/// Renders a validated graph as text or as Graphviz dot.
package enum GraphInspection {
    /// Nodes with their buses and formats after propagation, connections, updates and taps.
    package static func text(_ v: ValidatedGraph) -> String {
        let d = v.description
        var s = "graph \(d.fileName): \(ParameterInfo.format(d.sampleRate)) Hz, "
            + "maximumFramesPerSlice \(d.maximumFramesPerSlice), render length \(ParameterInfo.format(v.defaultRenderDuration)) s\n"
        s += "nodes:\n"
        for n in d.nodes {
            s += "  \(n.id) (\(n.type.rawValue))\n"
            let f = v.formats[n.id]
            for (i, input) in (f?.inputs ?? []).enumerated() {
                let source = d.connections.first { $0.parameter == nil && $0.to.node == n.id && $0.to.bus == i }.map { " <- \($0.from)" } ?? ""
                s += "    input \(i): \(input.map(\.description) ?? "unconnected")\(source)\n"
            }
            for (i, output) in (f?.outputs ?? []).enumerated() {
                s += "    output \(i): \(output.description)\n"
            }
            if let client = f?.clientFormat { s += "    client format: \(client.description)\n" }
            s += pluginLines(n, sampleRate: f?.outputs.first?.sampleRate ?? d.sampleRate)
        }
        s += "connections:\n"
        for c in d.connections { s += "  \(c)\n" }
        if !d.updates.isEmpty {
            s += "updates:\n"
            for u in d.updates {
                let when: String
                switch u.when {
                case .frame(let f): when = "frame \(f)"
                case .time(let t): when = "\(ParameterInfo.format(t)) s"
                }
                s += "  at \(when): " + u.actions.map(\.name).joined(separator: ", ") + "\n"
            }
        }
        if !d.taps.isEmpty {
            s += "taps:\n"
            for t in d.taps { s += "  \(t.node):\(t.bus) -> \(t.file)\n" }
        }
        return s
    }

    /// The graph in Graphviz dot: a box per node labelled with its type and output format,
    /// an edge per connection labelled with the buses.
    package static func dot(_ v: ValidatedGraph) -> String {
        let d = v.description
        var s = "digraph \"\(escape(d.fileName))\" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n"
        for n in d.nodes {
            let out = v.formats[n.id]?.outputs.first.map { "\\n\(ParameterInfo.format($0.sampleRate)) Hz, \($0.channels) ch" } ?? ""
            s += "  \"\(escape(n.id))\" [label=\"\(escape(n.id))\\n\(n.type.rawValue)\(out)\"];\n"
        }
        for c in d.connections {
            let label = c.parameter.map { "\(c.from.bus)→\($0)" } ?? "\(c.from.bus)→\(c.to.bus)"
            s += "  \"\(escape(c.from.node))\" -> \"\(escape(c.to.node))\" [label=\"\(escape(label))\"];\n"
        }
        s += "}\n"
        return s
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}

extension String {
    fileprivate func replacingOccurrences(of a: String, with b: String) -> String {
        split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
