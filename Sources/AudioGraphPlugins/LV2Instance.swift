// One instantiated LV2 plugin: connect, activate and run (the only type that touches a LilvInstance).
import CLilv

/// An instance of an LV2 plugin (a loaded binary with its state).
///
/// Created on a control thread by ``LV2World/instantiate(uri:sampleRate:)``. Connect every port
/// (``connect(port:to:)``) and ``activate()`` on a control thread before the first ``run(frameCount:)``;
/// then only the render thread calls ``run(frameCount:)``. `deinit` deactivates and frees the
/// instance; it runs on the control thread that releases the last reference (a retired render plan).
///
/// Thread safety: connect/activate on one control thread, before handing the instance to the
/// render thread; `run` on the render thread only (real-time safe as far as the plugin is: the
/// host adds nothing but a function call).
package final class LV2Instance: @unchecked Sendable {
    /// The plugin's description.
    package let info: LV2PluginInfo
    private let instance: UnsafeMutablePointer<LilvInstance>
    private var isActive = false
    // Keeps the world (and so the plugin's data) alive as long as the instance.
    private let world: LV2World
    // The features' memory: the plugin may keep pointers into it until it is freed.
    private let features: LV2InstanceFeatures
    // The worker thread of a plugin requiring worker:schedule (stopped before the instance goes).
    private let worker: LV2Worker?

    init(instance: UnsafeMutablePointer<LilvInstance>, info: LV2PluginInfo, world: LV2World, features: LV2InstanceFeatures,
         worker: LV2Worker?) {
        self.instance = instance
        self.info = info
        self.world = world
        self.features = features
        self.worker = worker
    }

    deinit {
        worker?.stop()
        if isActive { lilv_instance_deactivate(instance) }
        lilv_instance_free(instance)
    }

    /// Connects port `index` to `buffer` (a Float for control ports, a frame array for audio and
    /// CV ports; it must outlive every `run`). Control thread, before `activate`.
    package func connect(port index: Int, to buffer: UnsafeMutablePointer<Float>?) {
        lilv_instance_connect_port(instance, UInt32(index), buffer.map { UnsafeMutableRawPointer($0) })
    }

    /// Connects port `index` to untyped memory (an atom sequence buffer). Control thread, before `activate`.
    package func connect(port index: Int, toRaw buffer: UnsafeMutableRawPointer?) {
        lilv_instance_connect_port(instance, UInt32(index), buffer)
    }

    /// Activates the instance (resets its state). Control thread, once, before the first `run`.
    package func activate() {
        guard !isActive else { return }
        lilv_instance_activate(instance)
        isActive = true
    }

    /// Runs `frameCount` frames on the connected buffers. Render thread; real-time safe.
    @inline(__always)
    package func run(frameCount: Int) {
        lilv_instance_run(instance, UInt32(frameCount))
        // Worker responses are delivered, and end_run called, right after the run that may have
        // scheduled work (worker spec). Nothing for plugins without a worker.
        worker?.deliverResponses()
    }
}
