// Whether this machine runs AVX2 code, as glibc's dynamic loader found it at start-up.
#ifndef AG_CPU_FEATURES_H
#define AG_CPU_FEATURES_H

#if defined(__x86_64__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
/// AVX2 usable (the CPU has it and the kernel saves its registers): glibc's own record, read
/// without a `cpuid` (glibc 2.33 and later). No lock, no allocation: real-time safe.
static inline int ag_cpu_has_avx2(void) { return CPU_FEATURE_ACTIVE(AVX2) ? 1 : 0; }
#else
/// Older C libraries: the compiler's check (libgcc's `cpuid` probe, run once).
static inline int ag_cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}
#endif
#else
static inline int ag_cpu_has_avx2(void) { return 0; }
#endif

#endif
