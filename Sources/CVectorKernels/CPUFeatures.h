// Whether this machine runs AVX2 code: glibc's record of the CPU, read once when the program loads.
#ifndef AG_CPU_FEATURES_H
#define AG_CPU_FEATURES_H

/// 1 when AVX2 is usable (the CPU has it and the kernel saves its registers), else 0; set by a
/// constructor of CPUFeatures.c before main, so a render thread only reads an int (no call, no
/// lazy symbol binding).
extern int ag_cpu_avx2 __attribute__((visibility("hidden")));

#endif
