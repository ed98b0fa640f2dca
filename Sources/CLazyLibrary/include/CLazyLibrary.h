// Loads a C library on first use (dlopen) instead of at start-up: the one loader every lazy C wrapper shares.
#ifndef AG_LAZY_LIBRARY_H
#define AG_LAZY_LIBRARY_H
#include <stddef.h>

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

#endif
