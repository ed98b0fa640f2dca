// dlopen on first use for the lazy C wrappers (see CLazyLibrary.h and Docs/Architecture.md "Lazy C libraries").
#include "CLazyLibrary.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lazy_library_lock = PTHREAD_MUTEX_INITIALIZER;

int ag_lazy_library_load(AGLazyLibrary *library) {
    if (__atomic_load_n(&library->handle, __ATOMIC_ACQUIRE) != NULL) return 1;
    pthread_mutex_lock(&lazy_library_lock);
    if (library->handle == NULL && !library->failed) {
        void *last = NULL;
        for (int i = 0; i < 4 && library->sonames[i] != NULL; i++) {
            last = dlopen(library->sonames[i], RTLD_NOW | RTLD_LOCAL);
            if (last == NULL) {
                const char *reason = dlerror();
                snprintf(library->error, sizeof library->error, "%s", reason ? reason : library->sonames[i]);
                library->failed = 1;
                break;
            }
        }
        if (!library->failed) __atomic_store_n(&library->handle, last, __ATOMIC_RELEASE);
    }
    int loaded = library->handle != NULL;
    pthread_mutex_unlock(&lazy_library_lock);
    return loaded;
}

void *ag_lazy_symbol(AGLazyLibrary *library, const char *symbol) {
    if (!ag_lazy_library_load(library)) {
        fprintf(stderr, "audiograph: cannot load %s: %s\n", library->sonames[0], library->error);
        abort();
    }
    void *address = dlsym(library->handle, symbol);
    if (address == NULL) {
        fprintf(stderr, "audiograph: %s has no %s\n", library->sonames[0], symbol);
        abort();
    }
    return address;
}
