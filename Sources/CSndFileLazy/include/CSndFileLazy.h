// libsndfile loaded on the first call of any of its functions: the trampolines' explicit load call.
#ifndef AG_SNDFILE_LAZY_H
#define AG_SNDFILE_LAZY_H
#include <stddef.h>

/// Loads libsndfile and resolves every function the project may call, if not done yet (control threads).
/// Returns 1 when loaded; 0 when it cannot be, with the reason in `error` (`size` bytes). Not needed
/// before a call (the first call of any of its functions does it, or ends the process with one line
/// naming the library); use it to report a missing library as an error.
int ag_sndfile_load(char *error, size_t size);

#endif
