// libpulse, opened on first use (CPulseLazy), as a LazyLibrary value.
import AudioGraphCore
import CPulseLazy

extension LazyLibrary {
    /// libpulse (`libpulse.so.0`): every PulseAudio connection (``PulseContext``).
    package static let pulse = LazyLibrary(name: "libpulse", load: ag_pulse_load)
}
