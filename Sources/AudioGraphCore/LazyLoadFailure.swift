// Calls a lazy C library's load function (ag_<name>_load, Docs/Architecture.md "Lazy C libraries") and returns its error.

/// Calls `load` (a lazy C library's `ag_<name>_load(error, size)`) and returns nil when the
/// library is loaded, else the loader's one-line reason (it names the library). Modules call it
/// where their use of the library starts, and throw their own error with the reason, so a
/// missing library is an error message rather than the trampoline's abort.
///
/// Thread safety: control threads only (the first load opens files and allocates).
package func lazyLoadFailure(_ load: (UnsafeMutablePointer<CChar>?, Int) -> Int32) -> String? {
    var error = [CChar](repeating: 0, count: 320)
    let loaded = error.withUnsafeMutableBufferPointer { load($0.baseAddress, $0.count) }
    if loaded != 0 { return nil }
    return String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
