// Counts heap allocations and mutex acquisitions made by threads that opted in (tests only).
#pragma once
#include <stdint.h>

/// Starts (1) or stops (0) counting on the calling thread.
void ag_counter_track_this_thread(int on);
/// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) on tracked threads.
uint64_t ag_counter_allocations(void);
/// Frees on tracked threads.
uint64_t ag_counter_frees(void);
/// pthread_mutex_lock / trylock calls on tracked threads.
uint64_t ag_counter_locks(void);
/// Resets every counter to zero.
void ag_counter_reset(void);
/// 1 when the interposer is linked in and active (malloc calls reach it).
int ag_counter_is_active(void);
