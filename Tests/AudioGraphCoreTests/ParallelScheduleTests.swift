// Tests of ParallelSchedule: which nodes root tasks, in which phase, which stay serial, and the balance.
import XCTest
@testable import AudioGraphCore

final class ParallelScheduleTests: XCTestCase {
    typealias Input = ParallelSchedule.Input

    private func input(_ source: Int, adapted: Bool = false) -> Input { Input(source: source, adapted: adapted) }

    /// Entries: 0..n-1 sources, n the mixer (n inputs), n+1 the output.
    private func fan(_ n: Int) -> [[Input]] {
        Array(repeating: [], count: n) + [(0..<n).map { input($0) }, [input(n)]]
    }

    func testSourcesIntoAMixerAreBalancedLargestFirst() {
        // Sources 0..3 alone, source 4 behind a chain of three effects (5 -> 6 -> 7 -> 4): cost 4.
        var inputs: [[Input]] = [[], [], [], [], [input(5)], [input(6)], [input(7)], []]
        inputs.append((0..<5).map { input($0) })          // 8: the mixer
        inputs.append([input(8)])                          // 9: the output
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 9, concurrent: Array(repeating: true, count: 10), threadCount: 2)
        // Costs 1,1,1,1,4: 4 goes first to thread 0, then the four 1s to thread 1 (loads 4 vs 4).
        XCTAssertEqual(s.phases, [[[4], [0, 1, 2, 3]]])
        XCTAssertEqual(s.groups, [[4], [0, 1, 2, 3]])
        XCTAssertTrue(s.isParallel)
    }

    func testTheJoinIsFoundBelowASingleInputChain() {
        // 0,1 -> mixer 2 -> effect 3 -> effect 4 -> output 5
        let inputs: [[Input]] = [[], [], [input(0), input(1)], [input(2)], [input(3)], [input(4)]]
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 5, concurrent: Array(repeating: true, count: 6), threadCount: 2)
        XCTAssertEqual(s.phases, [[[0], [1]]])
    }

    func testAdaptedInputsAndUnsafeKernelsStaySerialSharedSourcesAreTasks() {
        // 0 feeds mixer inputs 0 and 1 (fan-out: a task, rendered once); 1 feeds input 2 through an
        // adapter (serial); 2 is not safe to render concurrently (serial); 3 feeds the mixer and a
        // sink 6 outside the mixer (a fan-out: a task the sink reads afterwards); 4, 5 are free.
        var inputs: [[Input]] = [[], [], [], [], [], []]
        inputs.append([input(3)])                                                   // 6: a sink
        inputs.append([input(0), input(0), input(1, adapted: true), input(2), input(3), input(4), input(5)])  // 7: mixer
        inputs.append([input(7)])                                                   // 8: output
        var concurrent = Array(repeating: true, count: 9)
        concurrent[2] = false
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 8, concurrent: concurrent, threadCount: 2)
        XCTAssertEqual(s.phases, [[[0, 4], [3, 5]]])
    }

    /// Voices into sub-mixes into a master: every voice is a task of phase 0, every sub-mix a task
    /// of phase 1 (it reads its voices), the master and the output are the serial rest.
    func testNestedMixersSplitAtEveryLevel() {
        // 0...5 voices (2 and 5 behind an effect 6, 7); sub-mix 8 = 0,1,6 (6 <- 2); sub-mix 9 = 3,4,7 (7 <- 5);
        // 10: a voice straight into the master; 11 master = 8, 9, 10; 12 output.
        var inputs: [[Input]] = Array(repeating: [], count: 6)
        inputs.append([input(2)])                                  // 6
        inputs.append([input(5)])                                  // 7
        inputs.append([input(0), input(1), input(6)])              // 8
        inputs.append([input(3), input(4), input(7)])              // 9
        inputs.append([])                                          // 10
        inputs.append([input(8), input(9), input(10)])             // 11
        inputs.append([input(11)])                                 // 12
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 12, concurrent: Array(repeating: true, count: 13), threadCount: 2)
        // Phase 0: voices 0, 1, 3, 4, 10 (cost 1), 6 and 7 (cost 2: the effect and its voice).
        XCTAssertEqual(s.phases, [[[6, 0, 3, 10], [7, 1, 4]], [[8], [9]]])
        XCTAssertTrue(s.isParallel)
    }

    /// A fan-out source renders in a phase before the branches that read it; the branches then
    /// split. A kernel that may not render concurrently and feeds two branches keeps them serial.
    func testAFanOutSourceRendersBeforeItsBranches() {
        // 0 -> effects 1 and 2 -> mixer 3 -> output 4.
        let inputs: [[Input]] = [[], [input(0)], [input(0)], [input(1), input(2)], [input(3)]]
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 4, concurrent: Array(repeating: true, count: 5), threadCount: 2)
        XCTAssertEqual(s.phases, [[[0], []], [[1], [2]]])
        var unsafe = Array(repeating: true, count: 5)
        unsafe[0] = false
        XCTAssertEqual(ParallelSchedule.make(inputs: inputs, outputEntry: 4, concurrent: unsafe, threadCount: 2), .serial)
    }

    /// A branch behind a rate-converting adapter is pulled by the task that consumes it.
    func testABranchBehindAnAdapterBelongsToItsConsumersTask() {
        // 0 -(adapted)-> 1 -> mixer 3; 2 -> mixer 3; 3 -> output 4.
        let inputs: [[Input]] = [[], [input(0, adapted: true)], [], [input(1), input(2)], [input(3)]]
        let s = ParallelSchedule.make(inputs: inputs, outputEntry: 4, concurrent: Array(repeating: true, count: 5), threadCount: 2)
        XCTAssertEqual(s.phases, [[[1], [2]]])
    }

    func testACycleStaysSerial() {
        let inputs: [[Input]] = [[input(1)], [input(0)], [input(0), input(1)], [input(2)]]
        XCTAssertEqual(ParallelSchedule.make(inputs: inputs, outputEntry: 3, concurrent: Array(repeating: true, count: 4), threadCount: 2), .serial)
    }

    func testNoSplitWithOneThreadOneUnitOrAnAdaptedChain() {
        XCTAssertEqual(ParallelSchedule.make(inputs: fan(4), outputEntry: 5, concurrent: Array(repeating: true, count: 6), threadCount: 1), .serial)
        XCTAssertEqual(ParallelSchedule.make(inputs: fan(1), outputEntry: 2, concurrent: [true, true, true], threadCount: 4), .serial)
        // The output's input is adapted: the chain runs on another timeline.
        let adapted: [[Input]] = [[], [], [input(0), input(1)], [input(2, adapted: true)]]
        XCTAssertEqual(ParallelSchedule.make(inputs: adapted, outputEntry: 3, concurrent: Array(repeating: true, count: 4), threadCount: 2), .serial)
        XCTAssertFalse(ParallelSchedule.serial.isParallel)
    }

    func testMoreThreadsThanUnitsLeavesGroupsEmpty() {
        let s = ParallelSchedule.make(inputs: fan(2), outputEntry: 3, concurrent: Array(repeating: true, count: 4), threadCount: 4)
        XCTAssertEqual(s.groups, [[0], [1], [], []])
    }

    /// Through the graph: two branches summed by a SumNode render the same on 3 threads as
    /// serially, and the one worker with a unit rendered its share every slice.
    func testAGraphRendersTheSameSumOnWorkers() throws {
        let g = try makeGraph([CountingSourceNode("a", value: 1), GainNode("g", gain: 3), CountingSourceNode("b", value: 2),
                               SumNode("sum"), TestOutputNode()], "a -> g; g -> sum:0; b -> sum:1; sum -> out")
        try g.initialize()
        try g.setRenderThreadCount(3)
        XCTAssertEqual(g.testOnly_parallelGroups.groups, [["g"], ["b"], []])
        try g.start()
        for _ in 0..<10 { XCTAssertEqual(renderSlice(g, frames: 8), Array(repeating: 5, count: 8)) }
        XCTAssertEqual(g.testOnly_parallelGroups.workerRenderedGroups, 10, "one worker with a unit, ten slices")
        g.stop()
        g.uninitialize()
    }
}
