// The command line's arguments for the Swift runtime of the `audiograph` executable, taken from glibc's constructor call.
#ifndef AG_SWIFT_ARGUMENTS_H
#define AG_SWIFT_ARGUMENTS_H

/// argv and argc as the standard library's `CommandLine` asks the runtime for them (the Swift
/// runtime's own declaration: Swift calling convention, not owned by the caller). Defined in
/// SwiftArguments.c in place of the runtime's definitions, which it keeps out of the link.
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);

/// The runtime's hook to replace the arguments (an interpreter's), kept with them.
__attribute__((swiftcall)) void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

#endif
