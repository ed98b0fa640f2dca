// The catalogue of installed LV2 plugins (one lilv world) and where plugin instances are made.
import CLilv
import Glibc
import AudioGraphCore
import AudioGraphRealtime
import Synchronization

/// The installed LV2 plugins, found through lilv on the LV2 path (`LV2_PATH`, else lilv's
/// default: ~/.lv2, /usr/local/lib/lv2, /usr/lib/lv2), and the factory of their instances.
///
/// Thread safety: every method may be called from any control thread; a lilv world is not
/// thread-safe, so each call holds the world's lock (it may block on another control thread's
/// call, never on the render thread, which never calls the world). Never call it from the
/// render thread: it allocates and locks.
package final class LV2World: @unchecked Sendable {
    // MARK: Guarded by `lock`
    private let world: OpaquePointer
    private let lock = ControlLock(())
    private let cache = ControlLock<[String: LV2PluginInfo]>([:])

    // MARK: Shared (thread-safe itself)
    /// The URI↔URID table behind the `urid:map`/`urid:unmap` features of every instance made here.
    package let uridMap = LV2URIDMap()

    /// What lilv printed while loading the LV2 path (unreadable folders, malformed bundles), as
    /// one line, or nil when it printed nothing. Captured, not printed: `audiograph plugins`
    /// shows it as one warning line.
    package let loadReport: String?

    /// Plugins whose binary was seen to load (``checkLoadable(uri:)``).
    private let loadable = ControlLock<Set<String>>([])

    /// The world of the process: the LV2 path of the environment, loaded on first use.
    /// - Throws: ``LV2Error/libraryMissing(reason:)`` when liblilv cannot be loaded (it is opened
    ///   on first use, not at start-up), rather than the process ending at `lilv_world_new`.
    package static func shared() throws(LV2Error) -> LV2World {
        try loadLibrary()
        return sharedWorld
    }

    private static let sharedWorld = LV2World(libraryLoaded: nil)

    /// A world of the plugins on `searchPath` (a colon-separated list of directories holding
    /// bundles, like `LV2_PATH`), or on the default LV2 path when nil.
    /// - Throws: ``LV2Error/libraryMissing(reason:)`` when liblilv cannot be loaded.
    package convenience init(searchPath: String?) throws(LV2Error) {
        try Self.loadLibrary()
        self.init(libraryLoaded: searchPath)
    }

    /// Loads liblilv (once; later calls only check), or throws naming it. Control threads.
    private static func loadLibrary() throws(LV2Error) {
        if let reason = LazyLibrary.lilv.loadFailure { throw .libraryMissing(reason: reason) }
    }

    private init(libraryLoaded searchPath: String?) {
        world = lilv_world_new()
        if let searchPath {
            let node = lilv_new_string(world, searchPath)
            lilv_world_set_option(world, LV2URI.lilvLV2Path, node)
            lilv_node_free(node)
        }
        let world = self.world
        let (_, lines) = LibraryLog.capturing { lilv_world_load_all(world) }
        loadReport = LibraryLog.summary(lines, library: "lilv", doing: "loading the LV2 path")
    }

    /// Checks that the binary of the plugin with `uri` loads (`dlopen`, then its
    /// `lv2_descriptor` entry point), so that a graph naming a plugin whose binary is missing,
    /// corrupt or built for another machine is refused when the node is made — by `validate`
    /// as by `render` — instead of at instantiation, after lilv's own line. Remembered once it
    /// succeeded. Control threads.
    package func checkLoadable(uri: String) throws(LV2Error) {
        if loadable.withLock({ $0.contains(uri) }) { return }
        guard let path = binaryPath(uri: uri) else { throw .binaryNotLoadable(uri: uri, reason: "its lv2:binary is not a local file") }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw .binaryNotLoadable(uri: uri, reason: dlerror().map { String(cString: $0) } ?? path)
        }
        defer { dlclose(handle) }
        guard dlsym(handle, "lv2_descriptor") != nil else {
            throw .binaryNotLoadable(uri: uri, reason: "\(path) has no lv2_descriptor entry point")
        }
        _ = loadable.withLock { $0.insert(uri) }
    }

    /// The local file of the binary (`lv2:binary`) of the plugin with `uri`, or nil when it is
    /// not installed or its binary is not a local file. Control threads.
    func binaryPath(uri: String) -> String? {
        lock.withLock { _ in
            guard let plugin = find(uri), let library = lilv_plugin_get_library_uri(plugin),
                  let text = lilv_node_as_uri(library), let parsed = lilv_file_uri_parse(text, nil) else { return nil }
            defer { lilv_free(parsed) }
            return String(cString: parsed)
        }
    }

    deinit { lilv_world_free(world) }

    /// Every installed plugin, sorted by URI.
    package var plugins: [LV2PluginInfo] {
        lock.withLock { _ in
            let all = lilv_world_get_all_plugins(world)
            var result: [LV2PluginInfo] = []
            var i = lilv_plugins_begin(all)
            while !lilv_plugins_is_end(all, i) {
                if let plugin = lilv_plugins_get(all, i) { result.append(describe(plugin)) }
                i = lilv_plugins_next(all, i)
            }
            return result.sorted { $0.uri < $1.uri }
        }
    }

    /// The plugin with `uri`; throws ``LV2Error/pluginNotFound(uri:)`` when none is installed.
    package func plugin(uri: String) throws(LV2Error) -> LV2PluginInfo {
        if let cached = cache.withLock({ $0[uri] }) { return cached }
        let info: LV2PluginInfo? = lock.withLock { _ in
            guard let plugin = find(uri) else { return nil }
            return describe(plugin)
        }
        guard let info else { throw .pluginNotFound(uri: uri) }
        cache.withLock { $0[uri] = info }
        return info
    }

    /// Some plugins start Qt when instantiated (synthv1, its siblings); without a display Qt
    /// aborts the process. With neither `DISPLAY` nor `WAYLAND_DISPLAY` nor `QT_QPA_PLATFORM`
    /// set, the offscreen platform is chosen (once, before the first instance).
    private static let headlessQt: Bool = {
        if getenv("DISPLAY") == nil && getenv("WAYLAND_DISPLAY") == nil && getenv("QT_QPA_PLATFORM") == nil {
            setenv("QT_QPA_PLATFORM", "offscreen", 0)
        }
        return true
    }()

    /// A new instance of the plugin at `sampleRate`, checked hostable first (control thread:
    /// loads the plugin's binary and allocates; ``LV2Instance`` frees it). `maximumFrames` is
    /// the longest run the caller will ask for: the plugin is told it through
    /// ``LV2PluginInfo/providedFeatures``' options (`bufsz:maxBlockLength`, with
    /// `bufsz:minBlockLength` 1) and must never be run longer. The first instance of a plugin
    /// whose binary links Qt also makes one resident instance of it, never freed
    /// (``keepResidentInstanceIfQt(uri:info:sampleRate:maximumFrames:)``).
    package func instantiate(uri: String, sampleRate: Double, maximumFrames: Int = 4096) throws(LV2Error) -> LV2Instance {
        let info = try plugin(uri: uri)
        try info.checkHostable()
        _ = Self.headlessQt
        try keepResidentInstanceIfQt(uri: uri, info: info, sampleRate: sampleRate, maximumFrames: maximumFrames)
        return try makeInstance(uri: uri, info: info, sampleRate: sampleRate, maximumFrames: maximumFrames)
    }

    /// A new instance of the hostable plugin `info` (the body of ``instantiate(uri:sampleRate:maximumFrames:)``).
    func makeInstance(uri: String, info: LV2PluginInfo, sampleRate: Double, maximumFrames: Int) throws(LV2Error) -> LV2Instance {
        let worker = info.requiredFeatures.contains(LV2URI.workerSchedule) ? LV2Worker() : nil
        let features = LV2InstanceFeatures(map: uridMap, sampleRate: sampleRate, maximumFrames: maximumFrames, worker: worker)
        // lilv prints its reason ("Failed to open library …") itself: captured, and made part of ours.
        let (instance, lines): (UnsafeMutablePointer<LilvInstance>?, [String]) = lock.withLock { _ in
            guard let plugin = find(uri) else { return (nil, []) }
            return LibraryLog.capturing { lilv_plugin_instantiate(plugin, sampleRate, features.list) }
        }
        guard let instance else {
            if let first = lines.first { throw .binaryNotLoadable(uri: uri, reason: "lilv: " + first) }
            throw .instantiationFailed(uri: uri, sampleRate: sampleRate)
        }
        if let worker {
            switch worker.attach(interface: lilv_instance_get_extension_data(instance, LV2URI.workerInterface),
                                 handle: lilv_instance_get_handle(instance)) {
            case .attached: break
            case .noInterface:
                lilv_instance_free(instance)
                throw .missingFeature(uri: uri, feature: LV2URI.workerInterface)
            case .threadNotCreated(let code):
                lilv_instance_free(instance)
                throw .workerThreadFailed(uri: uri, reason: String(cString: strerror(code)))
            }
        }
        return LV2Instance(instance: instance, info: info, world: self, features: features, worker: worker)
    }

    // MARK: Under the lock

    private func find(_ uri: String) -> OpaquePointer? {
        // lilv prints its own "attempt to map invalid URI" line for a string without a scheme;
        // such a string names no plugin, and the caller's one-line error says so.
        guard Self.hasURIScheme(uri) else { return nil }
        // A C string ends at its first NUL: "…/amp\0junk" would find amp.
        guard !uri.utf8.contains(0) else { return nil }
        let node = lilv_new_uri(world, uri)
        defer { lilv_node_free(node) }
        return lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node)
    }

    /// Whether `uri` starts with a URI scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`,
    /// RFC 3986), the test serd applies before lilv maps a URI.
    static func hasURIScheme(_ uri: String) -> Bool {
        guard let colon = uri.utf8.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let scheme = uri.utf8[..<colon]
        guard let first = scheme.first, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z") else { return false }
        return scheme.allSatisfy { c in
            let l = c | 0x20
            return (l >= UInt8(ascii: "a") && l <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
                || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
        }
    }

    private func describe(_ plugin: OpaquePointer) -> LV2PluginInfo {
        func string(_ node: OpaquePointer?) -> String { node.flatMap { lilv_node_as_string($0) }.map { String(cString: $0) } ?? "" }
        let uri = string(lilv_plugin_get_uri(plugin))
        let nameNode = lilv_plugin_get_name(plugin)
        let name = string(nameNode)
        lilv_node_free(nameNode)
        let count = Int(lilv_plugin_get_num_ports(plugin))
        var minimum = [Float](repeating: .nan, count: count)
        var maximum = [Float](repeating: .nan, count: count)
        var defaults = [Float](repeating: .nan, count: count)
        lilv_plugin_get_port_ranges_float(plugin, &minimum, &maximum, &defaults)

        let classes = [LV2URI.audioPort, LV2URI.controlPort, LV2URI.cvPort, LV2URI.atomPort, LV2URI.eventPort,
                       LV2URI.inputPort, LV2URI.reportsLatency, LV2URI.connectionOptional, LV2URI.toggled,
                       LV2URI.hardRTCapable, LV2URI.core + "pluginProperty", LV2URI.integer, LV2URI.midiEvent]
            .map { (uri: String) -> OpaquePointer? in lilv_new_uri(world, uri) }
        defer { classes.forEach { lilv_node_free($0) } }
        let (audio, control, cv, atom, event, input, latency, optional, toggled) =
            (classes[0], classes[1], classes[2], classes[3], classes[4], classes[5], classes[6], classes[7], classes[8])
        // Declared as an optional or a required feature (lilv_plugin_has_feature looks at both),
        // or as a plugin property: swh-lv2 writes `lv2:pluginProperty lv2:hardRtCapable` (sic).
        var hardRT = lilv_plugin_has_feature(plugin, classes[9])
        if !hardRT, let properties = lilv_plugin_get_value(plugin, classes[10]) {
            var i = lilv_nodes_begin(properties)
            while !lilv_nodes_is_end(properties, i) {
                let value = string(lilv_nodes_get(properties, i))
                if value == LV2URI.hardRTCapable || value == LV2URI.core + "hardRtCapable" { hardRT = true }
                i = lilv_nodes_next(properties, i)
            }
            lilv_nodes_free(properties)
        }

        var ports: [LV2PortInfo] = []
        for index in 0..<count {
            guard let port = lilv_plugin_get_port_by_index(plugin, UInt32(index)) else { continue }
            let kind: LV2PortKind = lilv_port_is_a(plugin, port, audio) ? .audio
                : lilv_port_is_a(plugin, port, control) ? .control
                : lilv_port_is_a(plugin, port, cv) ? .cv
                : lilv_port_is_a(plugin, port, atom) ? .atom
                : lilv_port_is_a(plugin, port, event) ? .event : .other
            let portName = lilv_port_get_name(plugin, port)
            defer { lilv_node_free(portName) }
            func bound(_ v: Float) -> Double? { v.isNaN ? nil : Double(v) }
            ports.append(LV2PortInfo(
                index: index, symbol: string(lilv_port_get_symbol(plugin, port)), name: string(portName), kind: kind,
                isInput: lilv_port_is_a(plugin, port, input),
                minimum: bound(minimum[index]), maximum: bound(maximum[index]), defaultValue: bound(defaults[index]),
                isOptional: lilv_port_has_property(plugin, port, optional),
                reportsLatency: lilv_port_has_property(plugin, port, latency),
                isToggled: lilv_port_has_property(plugin, port, toggled),
                isInteger: lilv_port_has_property(plugin, port, classes[11]),
                supportsMIDI: kind == .atom && lilv_port_supports_event(plugin, port, classes[12])))
        }

        var required: [String] = []
        if let features = lilv_plugin_get_required_features(plugin) {
            var i = lilv_nodes_begin(features)
            while !lilv_nodes_is_end(features, i) {
                required.append(string(lilv_nodes_get(features, i)))
                i = lilv_nodes_next(features, i)
            }
            lilv_nodes_free(features)
        }
        return LV2PluginInfo(uri: uri, name: name, ports: ports, requiredFeatures: required, isHardRTCapable: hardRT)
    }
}
