// glibc's GNU extensions that Swift's Glibc module does not import: the affinity mask's CPU count.
#define _GNU_SOURCE
#include "CGlibcShim.h"
#include <sched.h>

int ag_affinity_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}
