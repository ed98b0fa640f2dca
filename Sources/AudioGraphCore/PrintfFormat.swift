// Numbers as C's printf writes them (`%.2f`, `%6.2f`, `%3d`), without Foundation's String(format:).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// printf formatting through the C library's `vsnprintf`, the function `String(format:)` ends in
/// for these formats, so the text is the same without linking Foundation (the render command's
/// start-up, Docs/Performance.md).
///
/// Thread safety: stateless; any thread but the render thread (it allocates).
package enum PrintfFormat {
    /// `arguments` formatted by `format` (a C format: `%.2f`, `%6.2f`, `%3d`, `%lld`, ...).
    package static func string(_ format: String, _ arguments: CVarArg...) -> String {
        withVaList(arguments) { first in
            var small = [CChar](repeating: 0, count: 128)
            let needed = Int(vsnprintf(&small, small.count, format, first))
            if needed < small.count { return String(cString: small) }
            return withVaList(arguments) { again in
                var large = [CChar](repeating: 0, count: needed + 1)
                _ = vsnprintf(&large, large.count, format, again)
                return String(cString: large)
            }
        }
    }
}
