// Counts heap allocations and mutex acquisitions made by threads that opted in (tests only).
#pragma once
#include <stdint.h>

/// Starts (1) or stops (0) counting on the calling thread.
void ag_counter_track_this_thread(int on);
/// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) on tracked threads.
uint64_t ag_counter_allocations(void);
/// Frees on tracked threads.
uint64_t ag_counter_frees(void);
/// pthread_mutex_lock / trylock calls on tracked threads (NSLock, Dispatch, libc and C libraries
/// use these). Swift's Synchronization.Mutex is not seen here: it locks with an atomic
/// compare-and-swap (see ag_counter_waits for when it has to wait).
uint64_t ag_counter_locks(void);
/// Futex calls that wait for or hand over a lock (FUTEX_WAIT*, FUTEX_*LOCK_PI*) made through
/// syscall(2) on tracked threads: what Swift's Synchronization.Mutex does when the lock is taken
/// by another thread (an uncontended Mutex makes no call at all and is invisible here).
uint64_t ag_counter_waits(void);
/// Resets every counter to zero.
void ag_counter_reset(void);
/// 1 when the interposer is linked in and active (malloc calls reach it).
/// 0 in ThreadSanitizer/AddressSanitizer builds (`make tsan`), where the sanitizer owns malloc and
/// pthread_mutex_lock and the interposer steps aside: see ag_counter_is_sanitized().
int ag_counter_is_active(void);
/// 1 when this build runs under ThreadSanitizer or AddressSanitizer, so nothing can be counted.
/// Tests that only count skip then, and only then:
///     try XCTSkipIf(ag_counter_is_sanitized() != 0, "allocations are not counted under sanitizers")
///     XCTAssertEqual(ag_counter_is_active(), 1)
/// A test that also drives threads (render + control) is worth running under `make tsan`: let
/// it run its scenario and skip only the count assertions when ag_counter_is_sanitized() is 1.
int ag_counter_is_sanitized(void);
