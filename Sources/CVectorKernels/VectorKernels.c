// The convolver's inner loops: a version for AVX2 and one for the baseline, picked on each call from glibc's CPU features.
#include "CVectorKernels.h"
#include "CPUFeatures.h"

// No contraction into fused multiply-adds: the AVX2 version and the baseline version (and any
// machine) then compute the same bits.
#pragma clang fp contract(off)

/// `count` bins from `b` on (a multiple of W) through every term, W bins at a time: 32 keeps
/// the sums in eight AVX registers and reads each spectrum a cache line at a time (the large
/// levels' spectra come from memory, and the prefetchers follow whole lines of a few streams).
#define AG_SUM_OF_PRODUCTS(W)                                                                   \
    for (; b + W <= count; b += W) {                                                            \
        float r[W] = {0}, im[W] = {0};                                                          \
        for (int t = 0; t < terms; t++) {                                                       \
            const float *xr = x[t] + b, *xi = x[t] + stride + b, *hr = h[t] + b, *hi = h[t] + stride + b; \
            for (int l = 0; l < W; l++) {                                                       \
                r[l] += xr[l] * hr[l] - xi[l] * hi[l];                                          \
                im[l] += xr[l] * hi[l] + xi[l] * hr[l];                                         \
            }                                                                                   \
        }                                                                                       \
        for (int l = 0; l < W; l++) {                                                           \
            accR[b + l] = r[l];                                                                 \
            accI[b + l] = im[l];                                                                \
        }                                                                                       \
    }

// Each loop is written once (an always-inline body) and compiled twice: for AVX2 and for the
// baseline. The public function picks one by glibc's CPU features (ag_cpu_avx2), not by
// GCC/Clang `target_clones`, whose resolvers run libgcc's `__cpu_indicator_init` (a few dozen
// `cpuid` instructions, each a trap to the hypervisor in a VM) in every process at load.
#if defined(__x86_64__)
#define AG_DISPATCHED(name, params, args)                                                       \
    __attribute__((target("avx2"))) static void name##_avx2 params { name##_body args; }        \
    static void name##_baseline params { name##_body args; }                                     \
    void name params {                                                                          \
        if (ag_cpu_avx2) name##_avx2 args; else name##_baseline args;                            \
    }
#else
#define AG_DISPATCHED(name, params, args) void name params { name##_body args; }
#endif
#define AG_BODY static inline __attribute__((always_inline)) void

AG_BODY ag_split_complex_sum_of_products_body(float *restrict accR, float *restrict accI, const float *const *x,
                                              const float *const *h, int terms, int stride, int count) {
    int b = 0;
    AG_SUM_OF_PRODUCTS(32)
    AG_SUM_OF_PRODUCTS(8)
}

AG_BODY ag_direct_fir64_accumulate_body(const float *restrict h, const float *x, float *y, int count) {
    int i = 0;
    for (; i + 8 <= count; i += 8) {
        float acc[8] = {0};
        for (int j = 0; j < 64; j++) {
            for (int l = 0; l < 8; l++) acc[l] += h[j] * x[i + l - j];
        }
        for (int l = 0; l < 8; l++) y[i + l] += acc[l];
    }
    for (; i < count; i++) {
        float acc = 0;
        for (int j = 0; j < 64; j++) acc += h[j] * x[i - j];
        y[i] += acc;
    }
}

AG_DISPATCHED(ag_split_complex_sum_of_products,
              (float *restrict accR, float *restrict accI, const float *const *x, const float *const *h,
               int terms, int stride, int count),
              (accR, accI, x, h, terms, stride, count))

AG_DISPATCHED(ag_direct_fir64_accumulate, (const float *restrict h, const float *x, float *y, int count),
              (h, x, y, count))
