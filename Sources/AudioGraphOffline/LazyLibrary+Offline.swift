// The offline renderer's C library that is opened on first use (libebur128 for loudness), as a LazyLibrary value.
import AudioGraphCore
import CEBUR128Lazy

extension LazyLibrary {
    /// libebur128 (`libebur128.so.1`): loudness (``LoudnessMeter``).
    package static let ebur128 = LazyLibrary(name: "libebur128", load: ag_ebur128_load)
}
