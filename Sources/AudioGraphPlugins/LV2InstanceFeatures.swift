// The LV2 features one plugin instance receives: URID map/unmap, options, bounded block length.
import CLilv
import Glibc

/// The null-terminated `LV2_Feature` list passed to one `instantiate`, with the memory it points
/// to: the world's URID map and unmap, an `options:options` array and `buf-size:boundedBlockLength`.
///
/// The options are `bufsz:minBlockLength` (1: the host splits a slice where a parameter
/// changes and runs ramps in sub-blocks, so any length from 1 up may occur),
/// `bufsz:maxBlockLength` (the graph's maximum frames per slice: a run never exceeds it),
/// no `bufsz:nominalBlockLength` (there is no typical length: offline a slice without changes
/// runs whole, live the output renders small quanta of the latency, ramps run in sub-blocks),
/// `bufsz:sequenceSize` (the bytes of an atom output port's buffer) and `param:sampleRate`.
/// `boundedBlockLength` promises exactly these bounds, which the host keeps.
///
/// The data stays valid for the life of the instance (``LV2Instance`` owns this value and frees
/// it after `lilv_instance_free`), as LV2 allows a plugin to keep feature pointers.
///
/// Thread safety: built and freed on a control thread; the plugin reads it during
/// `instantiate` (and may later, read-only, from any of its threads).
final class LV2InstanceFeatures: @unchecked Sendable {
    /// The bytes of every atom output buffer the host connects (`bufsz:sequenceSize`).
    static let sequenceSize = 8192

    // MARK: Fixed at creation (read by the plugin)
    private let map: LV2URIDMap
    private let intValues: UnsafeMutablePointer<Int32>
    private let rateValue: UnsafeMutablePointer<Float>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let features: UnsafeMutablePointer<LV2_Feature>
    private let uriStrings: [UnsafeMutablePointer<CChar>]
    /// The null-terminated list for `lilv_plugin_instantiate`.
    let list: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>

    /// Features for an instance run at `sampleRate` in blocks of at most `maximumFrames`, with
    /// `worker:schedule` when `worker` is given.
    init(map: LV2URIDMap, sampleRate: Double, maximumFrames: Int, worker: LV2Worker? = nil) {
        self.map = map
        intValues = .allocate(capacity: 3)
        intValues.initialize(from: [1, Int32(maximumFrames), Int32(Self.sequenceSize)], count: 3)
        rateValue = .allocate(capacity: 1)
        rateValue.initialize(to: Float(sampleRate))
        let intType = map.map(LV2URI.atomInt), floatType = map.map(LV2URI.atomFloat)
        let keys = [LV2URI.minBlockLength, LV2URI.maxBlockLength, LV2URI.sequenceSize]
        options = .allocate(capacity: keys.count + 2)
        for (i, key) in keys.enumerated() {
            (options + i).initialize(to: LV2_Options_Option(
                context: LV2_OPTIONS_INSTANCE, subject: 0, key: map.map(key), size: UInt32(MemoryLayout<Int32>.size),
                type: intType, value: UnsafeRawPointer(intValues + i)))
        }
        (options + keys.count).initialize(to: LV2_Options_Option(
            context: LV2_OPTIONS_INSTANCE, subject: 0, key: map.map(LV2URI.sampleRate), size: UInt32(MemoryLayout<Float>.size),
            type: floatType, value: UnsafeRawPointer(rateValue)))
        (options + keys.count + 1).initialize(to: LV2_Options_Option(
            context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil))

        var provided: [(String, UnsafeMutableRawPointer?)] = [
            (LV2URI.uridMap, UnsafeMutableRawPointer(map.mapFeature)),
            (LV2URI.uridUnmap, UnsafeMutableRawPointer(map.unmapFeature)),
            (LV2URI.options, UnsafeMutableRawPointer(options)),
            (LV2URI.boundedBlockLength, nil),
        ]
        if let worker { provided.append((LV2URI.workerSchedule, UnsafeMutableRawPointer(worker.scheduleFeature))) }
        uriStrings = provided.map { strdup($0.0)! }
        features = .allocate(capacity: provided.count)
        list = .allocate(capacity: provided.count + 1)
        for (i, feature) in provided.enumerated() {
            (features + i).initialize(to: LV2_Feature(URI: uriStrings[i], data: feature.1))
            (list + i).initialize(to: UnsafePointer(features + i))
        }
        (list + provided.count).initialize(to: nil)
    }

    deinit {
        list.deallocate()
        features.deallocate()
        uriStrings.forEach { free($0) }
        options.deallocate()
        intValues.deallocate()
        rateValue.deallocate()
    }
}
