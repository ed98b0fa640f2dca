// liblilv, opened on first use (CLilvLazy), as a LazyLibrary value.
import AudioGraphCore
import CLilvLazy

extension LazyLibrary {
    /// liblilv (`liblilv-0.so.0`): the LV2 plugin catalogue (``LV2World``) and its instances.
    package static let lilv = LazyLibrary(name: "liblilv", load: ag_lilv_load)
}
