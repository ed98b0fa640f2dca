// Interposes malloc & co. and pthread_mutex_lock in the test executable to count calls on tracked threads.
//
// How it takes effect: on Linux the .xctest bundle is an executable, and a symbol an executable
// defines (and exports, which the linker does for every symbol a shared library on the link line
// references) is the one the dynamic linker binds for every shared library in the process:
// libswiftCore's swift_slowAlloc, Foundation, Dispatch and libc itself all reach these functions.
// Only the test target depends on this target, so the `audiograph` executable keeps libc's.
//
// The allocator entry points forward to glibc's exported __libc_* functions, so no dlsym is
// needed on the allocation path (dlsym may itself call calloc). pthread_mutex_lock/trylock are
// resolved lazily with dlsym(RTLD_NEXT): glibc 2.36 exports __pthread_mutex_lock only as a
// compatibility symbol (not linkable without .symver tricks), and dlsym in glibc >= 2.34 takes
// its own lock through an internal call, never through the exported pthread_mutex_lock.
//
// Counting costs one thread-local load per call on untracked threads, and one relaxed atomic
// increment on tracked ones; nothing here allocates or locks.
//
// Under ThreadSanitizer or AddressSanitizer the sanitizer runtime owns malloc and
// pthread_mutex_lock, and replacing them would blind it; the interposer then compiles to the
// counting API only and ag_counter_is_active() returns 0.

#define _GNU_SOURCE
#include <execinfo.h>
#include <unistd.h>
#include "CAllocationCounter.h"

#include <dlfcn.h>
#include <errno.h>
#ifdef __linux__
#include <malloc.h>
#endif
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#    define AG_COUNTER_SANITIZED 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#  define AG_COUNTER_SANITIZED 1
#endif
#if AG_COUNTER_SANITIZED || !defined(__linux__) || !defined(__GLIBC__)
/* Sanitized, or not glibc (no __libc_* entry points): interpose nothing, count nothing. */
#  define AG_COUNTER_DISABLED 1
#endif
#ifndef AG_COUNTER_SANITIZED
#  define AG_COUNTER_SANITIZED 0
#endif

// MARK: Shared (atomic)

static _Atomic uint64_t allocationCount;
static _Atomic uint64_t freeCount;
static _Atomic uint64_t lockCount;
static _Atomic uint64_t waitCount;
/// Set by the interposed malloc the first time it runs: proof that calls reach this file.
static _Atomic int interposerSeen;

// MARK: Per thread

/// Non-zero while the thread counts; initial-exec TLS in the executable, safe inside malloc.
static __thread int tracked;

void ag_counter_track_this_thread(int on) { tracked = on ? 1 : 0; }

uint64_t ag_counter_allocations(void) { return atomic_load_explicit(&allocationCount, memory_order_relaxed); }
uint64_t ag_counter_frees(void) { return atomic_load_explicit(&freeCount, memory_order_relaxed); }
uint64_t ag_counter_locks(void) { return atomic_load_explicit(&lockCount, memory_order_relaxed); }
uint64_t ag_counter_waits(void) { return atomic_load_explicit(&waitCount, memory_order_relaxed); }

void ag_counter_reset(void) {
    atomic_store_explicit(&allocationCount, 0, memory_order_relaxed);
    atomic_store_explicit(&freeCount, 0, memory_order_relaxed);
    atomic_store_explicit(&lockCount, 0, memory_order_relaxed);
    atomic_store_explicit(&waitCount, 0, memory_order_relaxed);
}

int ag_counter_is_sanitized(void) { return AG_COUNTER_SANITIZED; }

#if AG_COUNTER_DISABLED

int ag_counter_is_active(void) { return 0; }

#else

/// With AG_COUNTER_BACKTRACE set, the first few tracked allocations print a backtrace (to find
/// the culprit when a real-time test fails).
static _Atomic int backtracesLeft = -1;

static void printBacktrace(void) {
    int left = atomic_load_explicit(&backtracesLeft, memory_order_relaxed);
    if (left < 0) {
        left = getenv("AG_COUNTER_BACKTRACE") ? 3 : 0;
        atomic_store_explicit(&backtracesLeft, left, memory_order_relaxed);
    }
    if (left == 0) return;
    atomic_fetch_sub_explicit(&backtracesLeft, 1, memory_order_relaxed);
    tracked = 0;
    void *frames[32];
    int n = backtrace(frames, 32);
    static const char header[] = "CAllocationCounter: allocation on a tracked thread:\n";
    write(2, header, sizeof header - 1);
    backtrace_symbols_fd(frames, n, 2);
    tracked = 1;
}

static inline void countAllocation(void) {
    atomic_store_explicit(&interposerSeen, 1, memory_order_relaxed);
    if (__builtin_expect(tracked, 0)) {
        atomic_fetch_add_explicit(&allocationCount, 1, memory_order_relaxed);
        printBacktrace();
    }
}

static inline void countFree(void *pointer) {
    if (__builtin_expect(tracked, 0) && pointer != NULL) atomic_fetch_add_explicit(&freeCount, 1, memory_order_relaxed);
}

int ag_counter_is_active(void) {
    // Through a volatile pointer so the compiler cannot elide the malloc/free pair.
    void *(*volatile allocate)(size_t) = malloc;
    void (*volatile release)(void *) = free;
    release(allocate(16));
    return atomic_load_explicit(&interposerSeen, memory_order_relaxed);
}

// MARK: Allocator (glibc's exported implementations)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

void *malloc(size_t size) {
    countAllocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    countAllocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    countAllocation();
    return __libc_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    countAllocation();
    return __libc_realloc(pointer, bytes);
}

void free(void *pointer) {
    countFree(pointer);
    __libc_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // POSIX: a power of two that is a multiple of sizeof(void *), else EINVAL (nothing allocated).
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    countAllocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    countAllocation();
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    countAllocation();
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    countAllocation();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    countAllocation();
    return __libc_pvalloc(size);
}

// MARK: Mutexes (the next definition in lookup order, libc's)

typedef int (*MutexFunction)(pthread_mutex_t *);

static _Atomic(MutexFunction) nextLock;
static _Atomic(MutexFunction) nextTryLock;
/// Set while this thread is inside dlsym, to catch a (not expected) re-entry loudly.
static __thread int resolving;

static MutexFunction resolveNext(_Atomic(MutexFunction) *slot, const char *name) {
    MutexFunction function = atomic_load_explicit(slot, memory_order_acquire);
    if (__builtin_expect(function != NULL, 1)) return function;
    if (resolving) {
        static const char message[] = "CAllocationCounter: pthread_mutex_lock re-entered while resolving it\n";
        (void)!write(2, message, sizeof message - 1);
        abort();
    }
    resolving = 1;
    function = (MutexFunction)dlsym(RTLD_NEXT, name);
    resolving = 0;
    if (function == NULL) {
        static const char message[] = "CAllocationCounter: dlsym(RTLD_NEXT) found no pthread mutex function\n";
        (void)!write(2, message, sizeof message - 1);
        abort();
    }
    // Racing threads store the same address.
    atomic_store_explicit(slot, function, memory_order_release);
    return function;
}

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    if (__builtin_expect(tracked, 0)) atomic_fetch_add_explicit(&lockCount, 1, memory_order_relaxed);
    return resolveNext(&nextLock, "pthread_mutex_lock")(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t *mutex) {
    if (__builtin_expect(tracked, 0)) atomic_fetch_add_explicit(&lockCount, 1, memory_order_relaxed);
    return resolveNext(&nextTryLock, "pthread_mutex_trylock")(mutex);
}

// MARK: Futex calls through syscall(2) (Swift's Mutex when it has to wait)

typedef long (*SyscallFunction)(long, long, long, long, long, long, long);
static _Atomic(SyscallFunction) nextSyscall;

/// Swift's `Synchronization.Mutex` takes an uncontended lock with a compare-and-swap and nothing
/// else; a contended one waits with `syscall(SYS_futex, FUTEX_LOCK_PI_PRIVATE)` from
/// libswiftSynchronization, and its unlock hands the lock over with FUTEX_UNLOCK_PI. Both reach
/// this definition. (glibc's own semaphores and condition variables use inline system calls, so
/// `sem_post` on a render thread is not seen here.)
long syscall(long number, ...) {
    va_list list;
    va_start(list, number);
    long a = va_arg(list, long), b = va_arg(list, long), c = va_arg(list, long);
    long d = va_arg(list, long), e = va_arg(list, long), f = va_arg(list, long);
    va_end(list);
    if (__builtin_expect(tracked, 0) && number == SYS_futex) {
        switch ((int)b & FUTEX_CMD_MASK) {
        case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_LOCK_PI: case FUTEX_TRYLOCK_PI:
        case FUTEX_UNLOCK_PI: case FUTEX_WAIT_REQUEUE_PI:
#ifdef FUTEX_LOCK_PI2
        case FUTEX_LOCK_PI2:
#endif
            atomic_fetch_add_explicit(&waitCount, 1, memory_order_relaxed);
            break;
        default:
            break;
        }
    }
    SyscallFunction next = atomic_load_explicit(&nextSyscall, memory_order_acquire);
    if (__builtin_expect(next == NULL, 0)) {
        next = (SyscallFunction)dlsym(RTLD_NEXT, "syscall");
        if (next == NULL) {
            static const char message[] = "CAllocationCounter: dlsym(RTLD_NEXT) found no syscall\n";
            (void)!write(2, message, sizeof message - 1);
            abort();
        }
        atomic_store_explicit(&nextSyscall, next, memory_order_release);
    }
    return next(number, a, b, c, d, e, f);
}

#endif
