// The convolver's inner loops: a clone for AVX2 and one for the baseline, picked by an ifunc when the program loads.
#include "CVectorKernels.h"

// No contraction into fused multiply-adds: the AVX2 clone and the baseline clone (and any
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

// Function multi-versioning (an AVX2 clone chosen at load time) exists on x86-64 only; other
// architectures (AArch64) build the portable version.
#if defined(__x86_64__)
#define AG_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define AG_AVX2_CLONES
#endif

AG_AVX2_CLONES
void ag_split_complex_sum_of_products(float *restrict accR, float *restrict accI, const float *const *x,
                                      const float *const *h, int terms, int stride, int count) {
    int b = 0;
    AG_SUM_OF_PRODUCTS(32)
    AG_SUM_OF_PRODUCTS(8)
}

AG_AVX2_CLONES
void ag_direct_fir64_accumulate(const float *restrict h, const float *x, float *y, int count) {
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
