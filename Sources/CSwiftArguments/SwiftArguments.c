// `CommandLine.arguments` for the `audiograph` executable without the Swift runtime's /proc/self/maps scan.
//
// The static Swift runtime finds argv on Linux with a constructor (CommandLine.cpp, "ArgvGrabber")
// that reads /proc/self/maps with fopen and sscanf to find the stack, then walks back from
// `environ`: 3% of a 0.1 s render's profile samples, and the executable without it took 0.09 ms
// less (Docs/Performance.md "Start-up: at SoX's time"). glibc calls every constructor of the executable's .init_array with argc,
// argv and envp, so this target keeps them from such a call and defines the two functions the
// standard library asks the runtime for; the linker then has no reason to take CommandLine.cpp's
// object out of libswiftCore.a, and its constructor does not run.
//
// Only the `audiograph` executable links this target (with the static standard library, where
// the runtime's own object is an archive member): in a program that loads the Swift runtime as
// a shared library these definitions would interpose on the runtime's. If a future runtime
// pulls CommandLine.cpp in for another symbol, the link fails with a duplicate definition (not
// a silent change); if it stops asking for these names, its own grabber runs again.
#include "CSwiftArguments.h"
#include <stddef.h>

static int ag_argc;
static char **ag_argv;
static char *ag_empty[] = { NULL };

// Set by `_swift_stdlib_overrideUnsafeArgvArgc` (the runtime's hook for a JIT), as the runtime does.
static char **ag_override_argv;
static int ag_override_argc;

static void ag_keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    ag_argc = argc;
    ag_argv = argv;
}

// glibc calls .init_array entries of the executable with (argc, argv, envp) before main.
__attribute__((section(".init_array"), used)) static void (*const ag_keep_arguments_entry)(int, char **, char **) = ag_keep_arguments;

// The standard library's `CommandLine` asks for these (Swift calling convention, as the runtime
// declares them): argv and argc, not owned by the caller, valid for the life of the process.
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (ag_override_argv != NULL) {
        *outArgLen = ag_override_argc;
        return ag_override_argv;
    }
    if (ag_argv == NULL) {
        *outArgLen = 0;
        return ag_empty;
    }
    *outArgLen = ag_argc;
    return ag_argv;
}

__attribute__((swiftcall)) void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    ag_override_argv = argv;
    ag_override_argc = argc;
}
