// Which parts of a render plan can render at the same time: tasks in phases, each phase's tasks grouped by thread.

/// The split of a render plan into independent tasks, run in phases: every task of a phase may
/// render at the same time as the others of that phase, and each phase's tasks are grouped into
/// one share per render thread (group 0: the thread that calls ``AudioGraph/render(frameCount:)``;
/// groups 1...: the workers of a ``RenderWorkerPool``). What no task renders is rendered by the
/// serial pull from the output that follows the phases.
///
/// **Tasks.** A task is rooted at a *split point*: a node on the output's timeline (reached from
/// the output through connections without a rate-converting adapter) that feeds a node with
/// several connected inputs (a mixer, an environment: a join) or feeds several inputs (a fan-out),
/// never through an adapter. A task owns its root and every node upstream of it whose consumers
/// all belong to the task (through adapters too: a branch behind a converter is pulled by the
/// task that consumes it). A node whose consumers belong to different tasks, or to the serial
/// rest, and is not a split point itself, makes those tasks serial (the check repeats until it
/// holds), and so does a kernel that may not render concurrently
/// (``NodeKernel/isSafeToRenderConcurrently``). So nested mixers split at every level (a voice
/// into a sub-mix is a task, the sub-mix into the master is another), a fan-out source renders
/// once before the tasks that read it, and any independent subgraph below a join is a task, not
/// only the first join's branches.
///
/// **Phases.** A task that reads another task's root renders in a later phase (phase = 1 + the
/// latest phase it reads from). Within a phase, tasks are balanced over the threads by their
/// estimated cost (the number of nodes they own), largest first onto the least-loaded thread;
/// ties go to the lower thread.
///
/// Why the output is bit-identical to a serial render: a task touches only the kernels it owns;
/// each kernel computes the same samples whichever thread runs it, from the same inputs; a node
/// is marked rendered for the slice, so a later phase and the serial pull only read the finished
/// buffers of earlier ones; and every join still sums its inputs in its fixed bus order.
///
/// Thread safety: a value computed on a control thread when a plan is compiled.
struct ParallelSchedule: Equatable {
    /// `phases[p][t]`: entry indices of the task roots thread `t` renders in phase `p` (phase 0 first).
    var phases: [[[Int]]]

    /// One input of an entry, as the schedule sees it.
    struct Input {
        /// Entry index of the source (-1: unconnected).
        var source: Int
        /// Whether a rate-converting adapter sits on the connection.
        var adapted: Bool
    }

    /// No split: everything renders on the render thread.
    static let serial = ParallelSchedule(phases: [])

    /// Whether any task renders on a worker.
    var isParallel: Bool { phases.contains { $0.dropFirst().contains { !$0.isEmpty } } }

    /// Every phase's roots by thread, phases concatenated (what each thread renders in a slice).
    var groups: [[Int]] {
        guard let first = phases.first else { return [] }
        return first.indices.map { t in phases.flatMap { $0[t] } }
    }

    /// Splits the entries for `threadCount` threads.
    ///
    /// - Parameters:
    ///   - inputs: for each entry, its input buses in order.
    ///   - outputEntry: the output node's entry.
    ///   - concurrent: for each entry, whether its kernel may render concurrently with others.
    static func make(inputs: [[Input]], outputEntry: Int, concurrent: [Bool], threadCount: Int) -> ParallelSchedule {
        let n = inputs.count
        guard threadCount > 1, outputEntry >= 0, outputEntry < n else { return .serial }
        // Who consumes each entry (one element per connected input bus).
        var consumers = Array(repeating: [(entry: Int, adapted: Bool)](), count: n)
        for (e, buses) in inputs.enumerated() {
            for input in buses where input.source >= 0 && input.source < n { consumers[input.source].append((e, input.adapted)) }
        }
        guard let order = topologicalOrder(inputs) else { return .serial }
        // The output's timeline: reached from the output without crossing an adapter.
        var timeline = Array(repeating: false, count: n)
        var stack = [outputEntry]
        timeline[outputEntry] = true
        while let e = stack.popLast() {
            for input in inputs[e] where input.source >= 0 && !input.adapted && !timeline[input.source] {
                timeline[input.source] = true
                stack.append(input.source)
            }
        }
        let connectedInputs = inputs.map { $0.filter { $0.source >= 0 }.count }
        var isRoot = (0..<n).map { e in
            e != outputEntry && timeline[e] && concurrent[e] && !consumers[e].isEmpty
                && consumers[e].allSatisfy { !$0.adapted }
                && (consumers[e].count >= 2 || connectedInputs[consumers[e][0].entry] >= 2)
        }
        // Owners, consumers before producers: a root owns itself; another node belongs to the
        // one task all its consumers belong to, else to the serial rest (-1), which demotes the
        // tasks among its consumers (they would pull it concurrently or before it is rendered).
        var owner = Array(repeating: -1, count: n)
        var changed = true
        while changed {
            changed = false
            for e in order.reversed() {
                if isRoot[e] { owner[e] = e; continue }
                var o = -2
                for c in consumers[e] {
                    let co = owner[c.entry]
                    o = o == -2 ? co : (o == co ? o : -1)
                }
                if o == -2 || !concurrent[e] { o = -1 }
                owner[e] = o
                if o == -1 {
                    for c in consumers[e] where owner[c.entry] >= 0 && isRoot[owner[c.entry]] {
                        isRoot[owner[c.entry]] = false
                        changed = true
                    }
                }
            }
        }
        // Phases: after every task whose root a node of the task reads.
        var phase = Array(repeating: 0, count: n)
        var cost = Array(repeating: 0, count: n)
        var phaseCount = 0
        for e in order where owner[e] >= 0 {
            let task = owner[e]
            cost[task] += 1
            for input in inputs[e] where input.source >= 0 {
                let from = owner[input.source]
                if from >= 0 && from != task { phase[task] = max(phase[task], phase[from] + 1) }
            }
            if e == task { phaseCount = max(phaseCount, phase[task] + 1) }
        }
        var tasksByPhase = Array(repeating: [Int](), count: phaseCount)
        for e in order where owner[e] == e { tasksByPhase[phase[e]].append(e) }
        guard tasksByPhase.contains(where: { $0.count >= 2 }) else { return .serial }
        // Largest first onto the least-loaded thread (stable: equal costs keep plan order).
        let phases = tasksByPhase.map { tasks -> [[Int]] in
            let sorted = tasks.indices.sorted { (cost[tasks[$0]], -$0) > (cost[tasks[$1]], -$1) }
            var groups = Array(repeating: [Int](), count: threadCount)
            var load = Array(repeating: 0, count: threadCount)
            for i in sorted {
                let t = load.indices.min { (load[$0], $0) < (load[$1], $1) }!
                groups[t].append(tasks[i])
                load[t] += cost[tasks[i]]
            }
            return groups
        }
        return ParallelSchedule(phases: phases)
    }

    /// The entries with every source before its consumers; nil when the inputs have a cycle.
    private static func topologicalOrder(_ inputs: [[Input]]) -> [Int]? {
        let n = inputs.count
        var state = Array(repeating: 0, count: n)  // 0 new, 1 on the path, 2 done
        var order: [Int] = []
        order.reserveCapacity(n)
        for start in 0..<n where state[start] == 0 {
            var path: [(entry: Int, next: Int)] = [(start, 0)]
            state[start] = 1
            while let top = path.last {
                let buses = inputs[top.entry]
                if top.next < buses.count {
                    path[path.count - 1].next += 1
                    let s = buses[top.next].source
                    guard s >= 0 && s < n else { continue }
                    if state[s] == 1 { return nil }
                    if state[s] == 0 {
                        state[s] = 1
                        path.append((s, 0))
                    }
                } else {
                    state[top.entry] = 2
                    order.append(top.entry)
                    path.removeLast()
                }
            }
        }
        return order
    }
}
