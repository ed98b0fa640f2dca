// Shim translation unit: the libpulse helpers are static inline in the header; this file holds
// the few helpers that need _GNU_SOURCE.
#define _GNU_SOURCE
#include <pthread.h>
#include "CPulseShim.h"

int ag_set_current_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
