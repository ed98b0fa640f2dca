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

// MARK: Trampoline tables

static pthread_mutex_t lazy_table_lock = PTHREAD_MUTEX_INITIALIZER;

/// Test hook: whether $AG_LAZY_LIBRARY_MISSING (sonames separated by commas) names `soname`.
static int ag_lazy_library_marked_missing(const char *soname) {
    const char *list = getenv("AG_LAZY_LIBRARY_MISSING");
    if (list == NULL || soname == NULL) return 0;
    size_t n = strlen(soname);
    for (const char *p = list; *p != 0;) {
        const char *end = strchr(p, ',');
        size_t length = end ? (size_t)(end - p) : strlen(p);
        if (length == n && strncmp(p, soname, n) == 0) return 1;
        if (end == NULL) break;
        p = end + 1;
    }
    return 0;
}

int ag_lazy_functions_load(AGLazyFunctions *table, char *error, size_t size) {
    if (ag_lazy_library_marked_missing(table->library->sonames[0])) {
        snprintf(error, size, "%s: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)", table->library->sonames[0]);
        return 0;
    }
    if (__atomic_load_n(&table->resolved, __ATOMIC_ACQUIRE)) return 1;
    if (!ag_lazy_library_load(table->library)) {
        snprintf(error, size, "%s", table->library->error);
        return 0;
    }
    pthread_mutex_lock(&lazy_table_lock);
    if (!table->resolved) {
        for (int i = 0; i < table->count; i++) {
            const AGLazyFunction *function = &table->functions[i];
            void *address = dlsym(table->library->handle, ag_lazy_function_name(function));
            if (address != NULL) __atomic_store_n(ag_lazy_function_address(function), address, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&table->resolved, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lazy_table_lock);
    return 1;
}

void ag_lazy_functions_resolve(AGLazyFunctions *table, void **requested) {
    char error[300];
    if (!ag_lazy_functions_load(table, error, sizeof error)) {
        fprintf(stderr, "audiograph: cannot load %s: %s\n", table->library->sonames[0], error);
        abort();
    }
    for (int i = 0; i < table->count; i++) {
        const AGLazyFunction *function = &table->functions[i];
        if (ag_lazy_function_address(function) == requested && dlsym(table->library->handle, ag_lazy_function_name(function)) == NULL) {
            fprintf(stderr, "audiograph: %s has no %s\n", table->library->sonames[0], ag_lazy_function_name(function));
            abort();
        }
    }
}
