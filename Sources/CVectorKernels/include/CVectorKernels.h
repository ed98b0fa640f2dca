// The convolver's two inner loops in C, compiled for AVX2 and for the baseline and chosen when the program loads.
#ifndef AG_VECTOR_KERNELS_H
#define AG_VECTOR_KERNELS_H

/// `accR[b] + i·accI[b] = Σ_t (x_t[b] + i·x_t[b + stride]) · (h_t[b] + i·h_t[b + stride])` for
/// `b < count` (a multiple of 8): split-complex spectra, the sum over the terms in order, in
/// single precision without fused multiply-adds (so both builds give the same bits). Real-time
/// safe: no allocation, no lock.
void ag_split_complex_sum_of_products(float *accR, float *accI, const float *const *x, const float *const *h,
                                      int terms, int stride, int count);

/// `y[i] += Σ_{j<64} h[j] · x[i - j]` for `i < count` (each output's sum over `j` in increasing
/// order, then added to `y[i]`; `x[-63]` must be readable). Real-time safe.
void ag_direct_fir64_accumulate(const float *h, const float *x, float *y, int count);

#endif
