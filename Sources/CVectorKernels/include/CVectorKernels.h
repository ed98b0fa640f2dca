// The convolver's two inner loops in C, compiled for AVX2 and for the baseline and chosen on each call from glibc's CPU features, and the biquad cascade's AVX2 wavefront.
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

/// Whether this machine runs the AVX2 biquad wavefront below (x86-64 with AVX2); 0 elsewhere.
int ag_biquad_wavefront_avx2_available(void);

/// The steps `first ..< end` of Biquad.processSteadyCascade's channel-pair wavefront (`count`
/// sections; at step t section s filters frame t - s of `x0`/`x1`, section count - 1 writes frame
/// t - count + 1), two sections per AVX2 instruction, in the Swift loop's layouts: `coefficients`
/// b0 b0 b1 b1 b2 b2 a1 a1 a2 a2 per section, the pair's z1 z1 z2 z2 at `state + stateStride * s`,
/// `inFlight` two values per section (what it takes next; updated). `scratch`: 32 * ((count + 1) / 2)
/// + 4 doubles. The same arithmetic lane by lane as the Swift loop (no fused multiply-adds), so
/// the same bits. Real-time safe. Only when ag_biquad_wavefront_avx2_available().
void ag_biquad_pair_wavefront_avx2(int count, float *x0, float *x1, int first, int end,
                                   const double *coefficients, double *state, long stateStride,
                                   double *inFlight, double *scratch);

/// One channel's whole block (`frameCount` >= `count` frames of `x`, in place) through `count`
/// sections as a wavefront, four sections per instruction, its entry and exit steps included
/// (there only the sections that have frames run), in the Swift single-channel loop's layouts
/// (per section pair: b0 b0' b1 b1' … a2 a2', z1 z1' z2 z2'; updated). `scratch`:
/// 32 * ((count + 3) / 4) + 4 doubles. The same arithmetic per section and frame as the Swift
/// loop, so the same bits. Real-time safe. Only when ag_biquad_wavefront_avx2_available().
void ag_biquad_single_wavefront_avx2(int count, float *x, int frameCount, const double *coefficients,
                                     double *state, double *scratch);

#endif
