// Loads a C library on first use (dlopen) instead of at start-up: the one loader every lazy C wrapper shares.
#ifndef AG_LAZY_LIBRARY_H
#define AG_LAZY_LIBRARY_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {  // CVoiceProcessing (C++) calls the loader
#endif

/// A library loaded on first use. Define one per library as a static in the wrapper's stub
/// file: `static AGLazyLibrary lib = AG_LAZY_LIBRARY("libfoo.so.1", "libbar.so.2");` — the
/// sonames are opened in order (RTLD_NOW | RTLD_LOCAL; the last one's handle answers dlsym,
/// so list dependencies first).
///
/// Thread safety: ag_lazy_library_load and ag_lazy_symbol may be called from any thread
/// (a mutex serialises the first load), but not from a render thread: the first call opens
/// files and allocates. A wrapper calls its load function where its API starts (on a control
/// thread) and reports a failure as an error there.
typedef struct AGLazyLibrary {
    const char *sonames[4];
    void *handle;
    int failed;
    char error[256];
} AGLazyLibrary;

#define AG_LAZY_LIBRARY(...) { { __VA_ARGS__ }, 0, 0, { 0 } }

/// Loads the library if it is not loaded yet. Returns 1 when it is loaded; 0 when it cannot
/// be, with the reason in `library->error` (the same on every later call).
int ag_lazy_library_load(AGLazyLibrary *library);

/// The address of `symbol` in the library, loading it first. A library or symbol that cannot
/// be found ends the process with a one-line message on standard error: wrappers call
/// ag_lazy_library_load first, so this happens only for a call that skipped it.
void *ag_lazy_symbol(AGLazyLibrary *library, const char *symbol);

// MARK: Trampoline tables

/// One function of a trampoline table: where its name is and the pointer its trampoline jumps
/// through, each as a byte offset from the field itself. Offsets, not addresses: the table is
/// read-only data the dynamic loader never relocates (addresses would be ~3 400 relative
/// relocations of a position-independent executable, applied at every start of a process).
typedef struct AGLazyFunction {
    int name;
    int address;
} AGLazyFunction;

/// The function's name (NUL-terminated).
static inline const char *ag_lazy_function_name(const AGLazyFunction *function) {
    return (const char *)&function->name + function->name;
}

/// The pointer the function's trampoline jumps through (null until the table is resolved).
static inline void **ag_lazy_function_address(const AGLazyFunction *function) {
    return (void **)((char *)&function->address + function->address);
}

/// Every function of one library that the Swift code may call, each defined in the executable as
/// a trampoline with the library's own name, so Swift calls the real header's functions with
/// their real prototypes and no stub repeats a signature. The trampoline jumps through its
/// pointer; a pointer starts null (zero-filled memory, nothing to relocate), and the trampoline
/// then enters a slow path that saves the argument registers, loads the library, resolves the
/// whole table (dlsym of every name) and continues into the real function. Define a table with
/// AG_LAZY_FUNCTIONS in the library's C<Name>Lazy target (scripts/lazy-functions.sh writes it).
///
/// Thread safety: the first call of any function of the table loads the library and allocates, so
/// it must happen on a control thread; every library so wrapped is first called by a constructor
/// (`cairo_*_create`, `pa_*_new`, `rubberband_new`, `fftwf_plan_*`, `soxr_create`, `mysofa_open`,
/// `new_fluid_*`, `lilv_world_new`) on a control thread, after which a render thread only ever
/// jumps through a resolved pointer (no lock, no allocation). Concurrent first calls are
/// serialised by a mutex.
typedef struct AGLazyFunctions {
    AGLazyLibrary *library;
    const AGLazyFunction *functions;
    int count;
    int resolved;
} AGLazyFunctions;

/// Loads the table's library and resolves every function it exports (control threads). Returns 1
/// when loaded; 0 when the library cannot be, with the reason in `error` (`size` bytes). Test
/// hook: a soname listed in $AG_LAZY_LIBRARY_MISSING (comma-separated) fails here (not cached). A function
/// the installed library lacks keeps a null pointer: its trampoline's slow path ends the process
/// naming it if it is called.
int ag_lazy_functions_load(AGLazyFunctions *table, char *error, size_t size);

/// The trampolines' slow path: loads and resolves the table, or ends the process with one line on
/// standard error naming the library (or the function `requested` points to, if it is missing).
void ag_lazy_functions_resolve(AGLazyFunctions *table, void **requested);

#define AG_LAZY_STRING(x) #x
#define AG_LAZY_DECLARE(f) __attribute__((visibility("hidden"))) void *ag_lazy_pointer_##f;
#define AG_LAZY_COUNT(f) +1
// A table entry: the offsets from each field to the name and to the pointer (resolved by the
// static linker: no dynamic relocation), and the name's bytes.
#define AG_LAZY_ENTRY_ASM(f) "\t.long .Lag_lazy_name_" #f " - .\n\t.long ag_lazy_pointer_" #f " - .\n"
#define AG_LAZY_NAME_ASM(f) ".Lag_lazy_name_" #f ":\n\t.asciz \"" #f "\"\n"

#if defined(__x86_64__)
// The trampoline, hidden so that a library's own calls to its exported functions are not
// interposed by the executable's: it jumps through the pointer, or to the slow entry while the
// pointer is null, which names the pointer (in %r11, free at a call under the SysV ABI).
#define AG_LAZY_ASM(f) \
    ".globl " #f "\n.hidden " #f "\n.type " #f ", @function\n.p2align 4\n" #f ":\n" \
    "\tmovq ag_lazy_pointer_" #f "(%rip), %r11\n\ttestq %r11, %r11\n\tjz .Lag_lazy_slow_" #f "\n" \
    "\tjmpq *%r11\n.size " #f ", .-" #f "\n" \
    ".Lag_lazy_slow_" #f ":\n" \
    "\tleaq ag_lazy_pointer_" #f "(%rip), %r11\n\tjmp .Lag_lazy_slow_common\n"
// Saves the integer and vector argument registers (and %rax, the vector count of a variadic
// call), keeping the stack 16-byte aligned at the call, then jumps to the resolved function.
#define AG_LAZY_COMMON_ASM(table) \
    ".Lag_lazy_slow_common:\n" \
    "\tpushq %rdi\n\tpushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %r8\n\tpushq %r9\n\tpushq %rax\n\tpushq %r11\n" \
    "\tsubq $136, %rsp\n" \
    "\tmovdqu %xmm0, 0(%rsp)\n\tmovdqu %xmm1, 16(%rsp)\n\tmovdqu %xmm2, 32(%rsp)\n\tmovdqu %xmm3, 48(%rsp)\n" \
    "\tmovdqu %xmm4, 64(%rsp)\n\tmovdqu %xmm5, 80(%rsp)\n\tmovdqu %xmm6, 96(%rsp)\n\tmovdqu %xmm7, 112(%rsp)\n" \
    "\tleaq " table "(%rip), %rdi\n\tmovq %r11, %rsi\n\tcall ag_lazy_functions_resolve@PLT\n" \
    "\tmovdqu 0(%rsp), %xmm0\n\tmovdqu 16(%rsp), %xmm1\n\tmovdqu 32(%rsp), %xmm2\n\tmovdqu 48(%rsp), %xmm3\n" \
    "\tmovdqu 64(%rsp), %xmm4\n\tmovdqu 80(%rsp), %xmm5\n\tmovdqu 96(%rsp), %xmm6\n\tmovdqu 112(%rsp), %xmm7\n" \
    "\taddq $136, %rsp\n" \
    "\tpopq %r11\n\tpopq %rax\n\tpopq %r9\n\tpopq %r8\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\tpopq %rdi\n" \
    "\tjmpq *(%r11)\n"
#elif defined(__aarch64__)
#define AG_LAZY_ASM(f) \
    ".globl " #f "\n.hidden " #f "\n.type " #f ", %function\n.p2align 2\n" #f ":\n" \
    "\tadrp x16, ag_lazy_pointer_" #f "\n\tldr x16, [x16, :lo12:ag_lazy_pointer_" #f "]\n" \
    "\tcbz x16, .Lag_lazy_slow_" #f "\n\tbr x16\n.size " #f ", .-" #f "\n" \
    ".Lag_lazy_slow_" #f ":\n" \
    "\tadrp x16, ag_lazy_pointer_" #f "\n\tadd x16, x16, :lo12:ag_lazy_pointer_" #f "\n\tb .Lag_lazy_slow_common\n"
// Saves x0-x8 and q0-q7 (the argument registers) and the pointer's address (x16).
#define AG_LAZY_COMMON_ASM(table) \
    ".Lag_lazy_slow_common:\n" \
    "\tstp x29, x30, [sp, #-224]!\n\tmov x29, sp\n" \
    "\tstp x0, x1, [sp, #16]\n\tstp x2, x3, [sp, #32]\n\tstp x4, x5, [sp, #48]\n\tstp x6, x7, [sp, #64]\n\tstp x8, x16, [sp, #80]\n" \
    "\tstp q0, q1, [sp, #96]\n\tstp q2, q3, [sp, #128]\n\tstp q4, q5, [sp, #160]\n\tstp q6, q7, [sp, #192]\n" \
    "\tadrp x0, " table "\n\tadd x0, x0, :lo12:" table "\n\tmov x1, x16\n\tbl ag_lazy_functions_resolve\n" \
    "\tldp q0, q1, [sp, #96]\n\tldp q2, q3, [sp, #128]\n\tldp q4, q5, [sp, #160]\n\tldp q6, q7, [sp, #192]\n" \
    "\tldp x0, x1, [sp, #16]\n\tldp x2, x3, [sp, #32]\n\tldp x4, x5, [sp, #48]\n\tldp x6, x7, [sp, #64]\n\tldp x8, x16, [sp, #80]\n" \
    "\tldp x29, x30, [sp], #224\n\tldr x16, [x16]\n\tbr x16\n"
#else
#error "CLazyLibrary trampolines: add this architecture's jump through a pointer"
#endif

/// Defines the trampoline table of one library: `name` (C identifier), its soname, and an X-macro
/// listing its functions (`#define AG_FOO_FUNCTIONS(F) F(foo_new) F(foo_free)`). Also defines
/// `int ag_<name>_load(char *error, size_t size)` (ag_lazy_functions_load on this table).
#define AG_LAZY_FUNCTIONS(name, soname, LIST) \
    LIST(AG_LAZY_DECLARE) \
    static AGLazyLibrary ag_lazy_library_##name = AG_LAZY_LIBRARY(soname); \
    extern const AGLazyFunction ag_lazy_entries_##name[] __attribute__((visibility("hidden"))); \
    __attribute__((visibility("hidden"), used)) AGLazyFunctions ag_lazy_table_##name = { \
        &ag_lazy_library_##name, ag_lazy_entries_##name, 0 LIST(AG_LAZY_COUNT), 0 }; \
    int ag_##name##_load(char *error, size_t size) { return ag_lazy_functions_load(&ag_lazy_table_##name, error, size); } \
    __asm__(".pushsection .rodata\n.p2align 2\n.globl ag_lazy_entries_" #name "\n.hidden ag_lazy_entries_" #name "\n" \
            "ag_lazy_entries_" #name ":\n" LIST(AG_LAZY_ENTRY_ASM) LIST(AG_LAZY_NAME_ASM) ".popsection\n"); \
    __asm__(".pushsection .text\n" AG_LAZY_COMMON_ASM(AG_LAZY_STRING(ag_lazy_table_##name)) LIST(AG_LAZY_ASM) ".popsection\n");

#ifdef __cplusplus
}
#endif

#endif
