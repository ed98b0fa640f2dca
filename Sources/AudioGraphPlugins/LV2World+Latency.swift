// A plugin's reported latency, measured on a probe instance (its lv2:reportsLatency output).

extension LV2World {
    /// The latency in frames the plugin `uri` reports at `sampleRate` with its control inputs at
    /// `controls` (by symbol; others at their defaults): a separate instance is run once on one
    /// frame of silence and its `lv2:reportsLatency` output read. 0 for a plugin without one.
    /// Control thread (instantiates; allocates).
    package func latency(uri: String, sampleRate: Double, controls: [String: Double] = [:]) throws(LV2Error) -> Int {
        let info = try plugin(uri: uri)
        guard info.latencyPort != nil else { return 0 }
        let probe = try instantiate(uri: uri, sampleRate: sampleRate)
        let values = UnsafeMutablePointer<Float>.allocate(capacity: max(1, info.ports.count))
        values.initialize(repeating: 0, count: max(1, info.ports.count))
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        silence.initialize(to: 0)
        defer {
            values.deallocate()
            silence.deallocate()
        }
        for port in info.ports {
            switch port.kind {
            case .control:
                values[port.index] = Float(port.isInput ? (controls[port.symbol] ?? port.startValue) : 0)
                probe.connect(port: port.index, to: values + port.index)
            case .audio, .cv:
                probe.connect(port: port.index, to: port.isInput ? silence : values + port.index)
            case .atom:
                continue  // LV2AtomBuffers below.
            default:
                probe.connect(port: port.index, to: nil)
            }
        }
        // Audio and CV outputs write one frame into their own slot of `values`, which has one per
        // port; control slots are read only for the latency port, after the run.
        let atoms = LV2AtomBuffers(info: info, instance: probe, map: uridMap)
        probe.activate()
        probe.run(frameCount: 1)
        let latency = values[info.latencyPort!.index]
        withExtendedLifetime(atoms) {}
        return Self.latencyFrames(reported: latency)
    }

    /// The most frames of latency a plugin may report (about 6 minutes at 48 kHz); larger values
    /// are taken as this.
    package static let maximumReportedLatency = 1 << 24

    /// A plugin's reported latency value as frames: rounded, 0 when it is NaN or not positive,
    /// at most ``maximumReportedLatency`` (a plugin may write anything; this must not
    /// trap). Real-time safe.
    @inline(__always)
    package static func latencyFrames(reported value: Float) -> Int {
        guard value > 0 else { return 0 }   // NaN too
        return value >= Float(maximumReportedLatency) ? maximumReportedLatency : Int(value.rounded())
    }
}
