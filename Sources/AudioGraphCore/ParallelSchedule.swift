// Which parts of a render plan can render at the same time, grouped into one share per thread.

/// The split of a render plan into independent work units, one group of units per render thread
/// (group 0: the thread that calls ``AudioGraph/render(frameCount:)``; groups 1...: the workers
/// of a ``RenderWorkerPool``).
///
/// How the plan splits: from the output node, the schedule follows single-input nodes upstream
/// to the first node with several connected inputs (a mixer, an environment: the *join*). Each
/// of the join's inputs whose source is reached without a rate-converting adapter roots a
/// candidate unit: the source and everything upstream of it (through adapters too). A candidate
/// becomes a unit only if it is *exclusive*: every node in it feeds only nodes of the same unit,
/// or the join through that one input; no node in it is in another candidate; and every kernel in
/// it may render concurrently with other kernels (``NodeKernel/isSafeToRenderConcurrently``).
/// Units are balanced over the threads by an estimated cost (the number of nodes in a unit),
/// largest first onto the least-loaded thread; ties go to the lower thread.
///
/// Why the output is bit-identical to a serial render: a unit touches only its own kernels, each
/// kernel computes the same samples whichever thread runs it, and a node rendered by a unit is
/// marked rendered for the slice, so the serial pull that follows (the join's inputs summed in
/// their fixed bus order) only reads the finished buffers.
///
/// Thread safety: a value computed on a control thread when a plan is compiled.
struct ParallelSchedule: Equatable {
    /// Entry indices of the unit roots for each thread (`groups[0]`: the render thread's share).
    var groups: [[Int]]
    /// Entry index of the join (-1: no split).
    var join: Int

    /// One input of an entry, as the schedule sees it.
    struct Input {
        /// Entry index of the source (-1: unconnected).
        var source: Int
        /// Whether a rate-converting adapter sits on the connection.
        var adapted: Bool
    }

    /// No split: everything renders on the render thread.
    static let serial = ParallelSchedule(groups: [], join: -1)

    /// Whether any unit renders on a worker.
    var isParallel: Bool { groups.dropFirst().contains { !$0.isEmpty } }

    /// Splits the entries for `threadCount` threads.
    ///
    /// - Parameters:
    ///   - inputs: for each entry, its input buses in order.
    ///   - outputEntry: the output node's entry.
    ///   - concurrent: for each entry, whether its kernel may render concurrently with others.
    static func make(inputs: [[Input]], outputEntry: Int, concurrent: [Bool], threadCount: Int) -> ParallelSchedule {
        guard threadCount > 1, outputEntry >= 0, outputEntry < inputs.count else { return .serial }
        // The join: down the single-input chain from the output.
        var join = outputEntry
        var visited = Set<Int>()
        while true {
            visited.insert(join)
            let connected = inputs[join].filter { $0.source >= 0 }
            if connected.count >= 2 { break }
            guard connected.count == 1, !connected[0].adapted, !visited.contains(connected[0].source) else { return .serial }
            join = connected[0].source
        }
        // Who consumes each entry: (consumer, input bus of the consumer).
        var consumers = Array(repeating: [(entry: Int, bus: Int)](), count: inputs.count)
        for (e, buses) in inputs.enumerated() {
            for (bus, input) in buses.enumerated() where input.source >= 0 { consumers[input.source].append((e, bus)) }
        }
        // Candidate units: the upstream closure of each unadapted, connected join input.
        var candidates: [(bus: Int, members: Set<Int>)] = []
        for (bus, input) in inputs[join].enumerated() where input.source >= 0 && !input.adapted {
            var members: Set<Int> = [input.source]
            var stack = [input.source]
            while let e = stack.popLast() {
                for i in inputs[e] where i.source >= 0 && members.insert(i.source).inserted { stack.append(i.source) }
            }
            candidates.append((bus, members))
        }
        var membership = Array(repeating: 0, count: inputs.count)
        for c in candidates { for e in c.members { membership[e] += 1 } }
        var units: [(root: Int, cost: Int)] = []
        for c in candidates {
            let exclusive = c.members.allSatisfy { e in
                e != outputEntry && e != join && membership[e] == 1 && concurrent[e]
                    && consumers[e].allSatisfy { c.members.contains($0.entry) || ($0.entry == join && $0.bus == c.bus) }
            }
            if exclusive { units.append((inputs[join][c.bus].source, c.members.count)) }
        }
        guard units.count >= 2 else { return .serial }
        // Largest first onto the least-loaded thread (stable: equal costs keep bus order).
        let order = units.indices.sorted { (units[$0].cost, -$0) > (units[$1].cost, -$1) }
        var groups = Array(repeating: [Int](), count: threadCount)
        var load = Array(repeating: 0, count: threadCount)
        for u in order {
            let t = load.indices.min { (load[$0], $0) < (load[$1], $1) }!
            groups[t].append(units[u].root)
            load[t] += units[u].cost
        }
        return ParallelSchedule(groups: groups, join: join)
    }
}
