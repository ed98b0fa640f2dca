// The CPU features the C kernels dispatch on, read once from glibc when the program loads.
#include "CPUFeatures.h"

int ag_cpu_avx2;

#if defined(__x86_64__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
// glibc's own record (glibc 2.33 and later), filled by the dynamic loader: no `cpuid` here. Not
// GCC/Clang `target_clones` or `__builtin_cpu_supports`, whose libgcc constructor runs a few dozen
// `cpuid` instructions, each a VM exit (Docs/Performance.md "Start-up: at SoX's time").
__attribute__((constructor)) static void ag_read_cpu_features(void) { ag_cpu_avx2 = CPU_FEATURE_ACTIVE(AVX2) ? 1 : 0; }
#else
// Older C libraries: the compiler's check (libgcc's `cpuid` probe).
__attribute__((constructor)) static void ag_read_cpu_features(void) {
    __builtin_cpu_init();
    ag_cpu_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
}
#endif
#endif
