// Lists a PulseAudio server's sinks and sources with their formats and the defaults.
import CPulse
import CPulseShim

/// One sink or source as the server describes it.
package struct PulseDevice: Sendable, Equatable {
    /// Whether the device plays (sink) or records (source).
    package enum Kind: String, Sendable { case sink, source }

    /// Sink or source.
    package var kind: Kind
    /// The name streams and the CLI use (`--device NAME`).
    package var name: String
    /// The human-readable description.
    package var description: String
    /// The server's index for it.
    package var index: UInt32
    /// Its sample spec: rate, channels and sample format as libpulse prints it (`float32le`, `s16le`, ...).
    package var sampleRate: Int
    /// Channel count of its sample spec.
    package var channels: Int
    /// Sample format of its sample spec.
    package var sampleFormat: String
    /// True for the server's default sink (for sinks) or default source (for sources).
    package var isDefault: Bool
    /// For sources: the sink it monitors (nil for real sources and for sinks).
    package var monitorOf: String?
}

/// The devices of a PulseAudio server.
///
/// Thread safety: `list(context:)` is a control-thread call: it takes the context's mainloop lock
/// and waits for the server (at most `timeout` seconds per query). Not real-time safe.
package enum PulseDevices {
    /// Queries the server for its sinks, its sources (monitors included) and its defaults.
    /// Sinks come first, each group in the server's index order.
    ///
    /// - Throws: `.connectionLost` when the connection fails, `.timedOut` when the server does not answer.
    package static func list(context: PulseContext, timeout: Double = 5) throws(PulseError) -> [PulseDevice] {
        guard context.isConnected else { throw context.failure ?? context.withLock { context.lostError() } }
        let box = PulseDeviceCollector(context: context)
        let me = Unmanaged.passUnretained(box).toOpaque()
        let ok: Bool = context.withLock {
            let ctx = context.context
            return context.waitForOperationLocked(pa_context_get_server_info(ctx, serverInfoCallback, me), timeout: timeout)
                && context.waitForOperationLocked(pa_context_get_sink_info_list(ctx, sinkInfoCallback, me), timeout: timeout)
                && context.waitForOperationLocked(pa_context_get_source_info_list(ctx, sourceInfoCallback, me), timeout: timeout)
        }
        withExtendedLifetime(box) {}
        guard context.isConnected else { throw context.failure ?? .connectionLost(reason: "disconnected") }
        guard ok else { throw .timedOut(operation: "list devices") }
        return box.devices.map { device in
            var d = device
            d.isDefault = d.kind == .sink ? d.name == box.defaultSink : d.name == box.defaultSource
            return d
        }
    }
}

/// Collects the answers of the info queries (written on the mainloop thread under its lock,
/// read by the caller after the operations finished).
final class PulseDeviceCollector {
    let context: PulseContext
    var defaultSink: String?
    var defaultSource: String?
    var devices: [PulseDevice] = []
    init(context: PulseContext) { self.context = context }

    static func formatName(_ spec: pa_sample_spec) -> String {
        guard let name = pa_sample_format_to_string(spec.format) else { return "unknown" }
        return String(cString: name)
    }
}

private func string(_ p: UnsafePointer<CChar>?) -> String? {
    p.map { String(cString: $0) }
}

private func serverInfoCallback(_ c: OpaquePointer?, _ info: UnsafePointer<pa_server_info>?, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    let box = Unmanaged<PulseDeviceCollector>.fromOpaque(userdata).takeUnretainedValue()
    if let info {
        box.defaultSink = string(info.pointee.default_sink_name)
        box.defaultSource = string(info.pointee.default_source_name)
    }
    box.context.signal()
}

private func sinkInfoCallback(_ c: OpaquePointer?, _ info: UnsafePointer<pa_sink_info>?, _ eol: Int32, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    let box = Unmanaged<PulseDeviceCollector>.fromOpaque(userdata).takeUnretainedValue()
    if eol == 0, let i = info?.pointee {
        box.devices.append(PulseDevice(
            kind: .sink, name: string(i.name) ?? "", description: string(i.description) ?? "", index: i.index,
            sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            sampleFormat: PulseDeviceCollector.formatName(i.sample_spec), isDefault: false, monitorOf: nil))
    }
    box.context.signal()
}

private func sourceInfoCallback(_ c: OpaquePointer?, _ info: UnsafePointer<pa_source_info>?, _ eol: Int32, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    let box = Unmanaged<PulseDeviceCollector>.fromOpaque(userdata).takeUnretainedValue()
    if eol == 0, let i = info?.pointee {
        box.devices.append(PulseDevice(
            kind: .source, name: string(i.name) ?? "", description: string(i.description) ?? "", index: i.index,
            sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            sampleFormat: PulseDeviceCollector.formatName(i.sample_spec), isDefault: false,
            monitorOf: i.monitor_of_sink == ag_pa_invalid_index() ? nil : string(i.monitor_of_sink_name)))
    }
    box.context.signal()
}
