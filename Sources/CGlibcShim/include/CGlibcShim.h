// glibc's GNU extensions that Swift's Glibc module does not import (declared only under _GNU_SOURCE, or macros).
#ifndef AG_GLIBC_SHIM_H
#define AG_GLIBC_SHIM_H

/// The CPUs of the calling process's scheduler affinity mask (sched_getaffinity and CPU_COUNT,
/// as `nproc` counts them), or 0 when the mask cannot be read.
int ag_affinity_cpu_count(void);

#endif
