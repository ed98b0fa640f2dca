// Taps of the engine API: AudioNode.installTap over the graph's LiveTap.
import AudioGraphNodes
import Foundation
import Synchronization

extension AudioEngine {
    /// Records the tap request on the node and installs it on the node's graph node, if any.
    /// `isInternal`: a tap of the engine's own (a recorder's) that `removeTap(onBus:)` leaves.
    /// Returns the tap's key (for ``removeTap(on:key:)``).
    @discardableResult
    func installTap(on node: AudioNode, bus: Int, bufferSize: Int, format: AudioFormat?, isInternal: Bool = false,
                    block: @escaping AudioNode.TapBlock) -> TapKey {
        withLock {
            let call = "installTap(onBus:bufferSize:format:block:)"
            if let format {
                let busFormat = outputFormat(of: node, bus: bus)
                guard format.sampleRate == busFormat.sampleRate, format.channelCount == busFormat.channelCount else {
                    engineProgrammerError(call, node, "the tap format \(format) differs from the bus format \(busFormat) "
                        + "in rate or channel count")
                }
            }
            let request = TapRequest(bus: bus, bufferSize: bufferSize, format: format, block: block)
            request.isInternal = isInternal
            let key = TapKey(bus: bus, serial: Self.nextTapSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
            node.taps[key] = request
            if let graph, node.graphNode != nil { installTaps(of: node, in: graph) }
            return key
        }
    }

    /// Serial numbers of taps (unique in the process).
    private static let nextTapSerial = Atomic<Int>(0)

    /// Removes the application's taps on `bus` of `node`; their last, partial buffers are
    /// delivered before this returns (live: within a second; manual rendering: at once).
    func removeTaps(on node: AudioNode, bus: Int) {
        let keys = withLock { node.taps.filter { $0.key.bus == bus && !$0.value.isInternal }.map(\.key) }
        for key in keys { removeTap(on: node, key: key) }
    }

    /// Removes one tap of `node`; its last, partial buffer is delivered before this returns
    /// (live: within a second; manual rendering: at once).
    func removeTap(on node: AudioNode, key: TapKey) {
        let tap: LiveTap? = withLock {
            guard let request = node.taps.removeValue(forKey: key) else { return nil }
            guard let graph, let live = request.liveTap else { return nil }
            let t = graph.removeTap(live, fromNode: node.graphID)
            if manualMode == .offline && running {
                // We drive the render (under this lock): adopt the plan that lets go of the tap
                // now, without rendering, so its last partial buffer is delivered before we return.
                _ = graph.render(frameCount: 0)
            }
            if manualMode == .offline || !running { _ = graph.deliverPendingTaps() }
            request.liveTap = nil
            return t ?? live
        }
        _ = tap?.waitUntilFinished(timeout: 1)
    }

    /// Buffers lost by one tap of `node` (0 when it is not there).
    func droppedBufferCount(of node: AudioNode, key: TapKey) -> Int {
        withLock { node.taps[key]?.droppedBufferCount ?? 0 }
    }

    /// Installs every tap request of `node` that has no live tap yet on its current graph node.
    func installTaps(of node: AudioNode, in graph: AudioGraph) {
        guard let gn = node.graphNode else { return }
        for request in node.taps.values where request.liveTap == nil {
            let bus = request.bus
            guard bus < gn.outputFormats.count else { continue }
            let busFormat = gn.outputFormats[bus]
            let deliveredFormat: AudioFormat? = request.format.flatMap {
                AudioFormat(commonFormat: $0.commonFormat, sampleRate: busFormat.sampleRate,
                            channels: AudioChannelCount(busFormat.channelCount), interleaved: $0.isInterleaved)
            }
            let format = deliveredFormat ?? AudioFormat(streamFormat: busFormat)
            // Apple's tap block is not @Sendable: the tap thread is the only one calling it.
            let block = UncheckedSendable(request.block)
            let rate = busFormat.sampleRate
            do {
                request.liveTap = try graph.installTap(
                    onNode: node.graphID, bus: bus, bufferSize: request.bufferSize, format: busFormat,
                    delivery: manualMode == .offline ? .manual : .thread) { list, frames, sampleTime, hostTime in
                    guard let buffer = AudioPCMBuffer(copying: list, sourceFrame: 0, frameCount: frames, format: format) else { return }
                    block.value(buffer, AudioTime(hostTime: hostTime, sampleTime: sampleTime, atRate: rate))
                }
            } catch {
                engineProgrammerError("installTap(onBus:bufferSize:format:block:)", node, error.description)
            }
        }
    }
}
