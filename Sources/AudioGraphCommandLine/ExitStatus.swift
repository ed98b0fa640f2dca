// The command line's exit statuses (the spec's), and the error that ends a command with one.

/// Exit statuses of the spec: 0 success, 1 invalid graph or input file, 2 wrong command line,
/// 3 runtime failure.
package enum ExitStatus {
    package static let invalidInput: Int32 = 1
    package static let usage: Int32 = 2
    package static let runtime: Int32 = 3
}

/// A command that stops with `status` once it has said why on standard error (one line each).
/// `audiograph` exits with it; `audiograph-tool` maps it to swift-argument-parser's `ExitCode`.
package struct CommandFailure: Error, Equatable {
    package let status: Int32
    package init(_ status: Int32) { self.status = status }
}
