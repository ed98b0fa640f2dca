// A C library opened on first use (Docs/Architecture.md "Lazy C libraries") as the Swift side sees it: its name and its load.

/// A C library that is opened on first use rather than at start-up (a `C<Name>Lazy` target's
/// trampolines): the name users know it by and its `ag_<name>_load(error, size)` function.
///
/// Code that starts using such a library asks ``loadFailure`` first, on a control thread, and
/// reports a failure as its own error naming the library ("cannot load libfftw3f: …"), so that a
/// missing library is a one-line error rather than the trampoline's abort. A node lists the
/// libraries it needs in ``GraphNode/requiredLibraries``: ``AudioGraph/addNode(_:)`` (every front
/// door: graph files, `validate`, the engine API, live and offline) loads them and refuses the node
/// with ``AudioGraphError/libraryNotLoadable(node:library:reason:)``.
///
/// Test hook: the loader fails a library whose soname is listed in `$AG_LAZY_LIBRARY_MISSING`
/// (comma-separated, read at every load), as if it were not installed.
///
/// Thread safety: an immutable value, shared freely; ``loadFailure`` on control threads only (the
/// first load opens files and allocates; later ones are an atomic load and a `getenv`).
package struct LazyLibrary: Sendable, Hashable, CustomStringConvertible {
    /// The library's name in messages (`libfftw3f`).
    package let name: String
    private let load: @Sendable (UnsafeMutablePointer<CChar>?, Int) -> Int32

    /// `name` for messages; `load` is the library's `ag_<name>_load`.
    package init(name: String, load: @escaping @Sendable (UnsafeMutablePointer<CChar>?, Int) -> Int32) {
        self.name = name
        self.load = load
    }

    /// Loads the library if it is not loaded yet: nil when it is loaded, else the loader's one-line
    /// reason (it names the shared object, e.g. "libfftw3f.so.3: cannot open shared object file: …").
    package var loadFailure: String? { lazyLoadFailure(load) }

    package var description: String { name }

    package static func == (a: LazyLibrary, b: LazyLibrary) -> Bool { a.name == b.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// Calls `load` (a lazy C library's `ag_<name>_load(error, size)`) and returns nil when the
/// library is loaded, else the loader's one-line reason (it names the library). Prefer
/// ``LazyLibrary/loadFailure``.
///
/// Thread safety: control threads only (the first load opens files and allocates).
package func lazyLoadFailure(_ load: (UnsafeMutablePointer<CChar>?, Int) -> Int32) -> String? {
    var error = [CChar](repeating: 0, count: 320)
    let loaded = error.withUnsafeMutableBufferPointer { load($0.baseAddress, $0.count) }
    if loaded != 0 { return nil }
    let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return reason.isEmpty ? "unknown reason" : reason
}
