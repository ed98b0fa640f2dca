// The biquad cascade's wavefront steps (Biquad.processSteadyCascade) with AVX2: two sections of a channel pair, or four sections of one channel, per instruction.
#include "CVectorKernels.h"
#include "CPUFeatures.h"
#include <stdint.h>

// The same operations as the Swift loops, lane by lane: no contraction into fused multiply-adds
// (AVX2 alone does not enable FMA either), IEEE double arithmetic, the same Float rounding.
#pragma clang fp contract(off)

#if defined(__x86_64__)
#include <immintrin.h>

int ag_biquad_wavefront_avx2_available(void) { return ag_cpu_avx2; }

#define AG_AVX2 __attribute__((target("avx2")))
#define AG_UNROLL _Pragma("clang loop unroll(full)")

/// One transposed-direct-form-II step in four lanes, tiny states flushed to +0 (Biquad.step).
AG_AVX2 static inline __m256d ag_step4(const __m256d *c, __m256d *z1, __m256d *z2, __m256d v) {
    const __m256d tiny = _mm256_set1_pd(1e-200);
    const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    __m256d y = _mm256_add_pd(_mm256_mul_pd(c[0], v), *z1);
    __m256d n1 = _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(c[1], v), _mm256_mul_pd(c[3], y)), *z2);
    __m256d n2 = _mm256_sub_pd(_mm256_mul_pd(c[2], v), _mm256_mul_pd(c[4], y));
    n1 = _mm256_andnot_pd(_mm256_cmp_pd(_mm256_and_pd(n1, magnitude), tiny, _CMP_LT_OQ), n1);
    n2 = _mm256_andnot_pd(_mm256_cmp_pd(_mm256_and_pd(n2, magnitude), tiny, _CMP_LT_OQ), n2);
    *z1 = n1;
    *z2 = n2;
    return y;
}

/// The pair wavefront's steps `first ..< end` over P section pairs (a constant: the loops unroll
/// and the state stays in registers). Section 0 takes the new frame; after pair j's step, sections
/// 2j and 2j + 1 take next what 2j - 1 and 2j gave.
#define AG_PAIR_STEPS(P, UNROLL)                                                                        \
    do {                                                                                          \
        __m256d lz1[P], lz2[P], lv[P];                                                            \
        for (int j = 0; j < (P); j++) { lz1[j] = z1[j]; lz2[j] = z2[j]; lv[j] = v[j]; }           \
        for (int t = first; t < end; t++) {                                                       \
            lv[0] = _mm256_insertf128_pd(lv[0], _mm_cvtps_pd(_mm_setr_ps(x0[t], x1[t], 0, 0)), 0); \
            __m256d previous = _mm256_setzero_pd();                                               \
            UNROLL                                                                                \
            for (int j = 0; j < (P); j++) {                                                       \
                __m128 f = _mm256_cvtpd_ps(ag_step4(c + 5 * j, lz1 + j, lz2 + j, lv[j]));         \
                __m256d r = _mm256_cvtps_pd(f);                                                   \
                if (j == (P) - 1) {                                                               \
                    out0[t] = f[2 * lastHigh];                                                    \
                    out1[t] = f[2 * lastHigh + 1];                                                \
                }                                                                                 \
                lv[j] = j > 0 ? _mm256_permute2f128_pd(previous, r, 0x21) : _mm256_permute2f128_pd(r, r, 0x00); \
                previous = r;                                                                     \
            }                                                                                     \
        }                                                                                         \
        for (int j = 0; j < (P); j++) { z1[j] = lz1[j]; z2[j] = lz2[j]; v[j] = lv[j]; }           \
    } while (0)

/// The single-channel wavefront over Q groups of four sections (a constant: the loops unroll and
/// the state stays in registers), the whole block: at step t section s filters frame t - s, so
/// steps 0 ..< frameCount + last. Where the wavefront enters the block (t < last) and leaves it
/// (t >= frameCount) only sections lo ... hi are active: groups wholly outside are skipped and a
/// group's inactive lanes keep their state (what runs is what section by section would run, in
/// the same order per section). Lanes shift by one section per step, (previous[3], r[0], r[1],
/// r[2]); section 0 takes the new frame.
#define AG_SINGLE_BLOCK(Q, UNROLL)                                                                      \
    do {                                                                                          \
        __m256d lz1[Q], lz2[Q], lv[Q];                                                            \
        for (int j = 0; j < (Q); j++) { lz1[j] = z1[j]; lz2[j] = z2[j]; lv[j] = _mm256_setzero_pd(); } \
        /* Entering: sections 0 ... t. */                                                         \
        for (int t = 0; t < last; t++) {                                                          \
            lv[0] = _mm256_blend_pd(lv[0], _mm256_set1_pd((double)x[t]), 1);                      \
            const int top = t >> 2;                                                               \
            const __m256d active = _mm256_cmp_pd(lane, _mm256_set1_pd((double)(t - 4 * top)), _CMP_LE_OQ); \
            __m256d previous = _mm256_setzero_pd();                                               \
            UNROLL                                                                                \
            for (int j = 0; j < (Q); j++) {                                                       \
                if (j <= top) {                                                                   \
                    __m256d o1 = lz1[j], o2 = lz2[j];                                             \
                    __m256d r = _mm256_cvtps_pd(_mm256_cvtpd_ps(ag_step4(c + 5 * j, lz1 + j, lz2 + j, lv[j]))); \
                    if (j == top) {                                                               \
                        lz1[j] = _mm256_blendv_pd(o1, lz1[j], active);                            \
                        lz2[j] = _mm256_blendv_pd(o2, lz2[j], active);                            \
                    }                                                                             \
                    lv[j] = _mm256_shuffle_pd(_mm256_permute2f128_pd(previous, r, 0x21), r, 0x5); \
                    previous = r;                                                                 \
                } else if (j == top + 1) {                                                        \
                    /* Its first section takes this step's last active value next. */             \
                    lv[j] = _mm256_shuffle_pd(_mm256_permute2f128_pd(previous, lv[j], 0x21), lv[j], 0x5); \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        /* Every section. */                                                                      \
        for (int t = last; t < frameCount; t++) {                                                 \
            lv[0] = _mm256_blend_pd(lv[0], _mm256_set1_pd((double)x[t]), 1);                      \
            __m256d previous = _mm256_setzero_pd();                                               \
            UNROLL                                                                                \
            for (int j = 0; j < (Q); j++) {                                                       \
                __m128 f = _mm256_cvtpd_ps(ag_step4(c + 5 * j, lz1 + j, lz2 + j, lv[j]));         \
                __m256d r = _mm256_cvtps_pd(f);                                                   \
                if (j == (Q) - 1) out[t] = f[lastLane];                                           \
                lv[j] = _mm256_shuffle_pd(_mm256_permute2f128_pd(previous, r, 0x21), r, 0x5);     \
                previous = r;                                                                     \
            }                                                                                     \
        }                                                                                         \
        /* Leaving: sections t - frameCount + 1 ... last. */                                      \
        for (int t = frameCount; t < frameCount + last; t++) {                                    \
            const int lo = t - frameCount + 1, bottom = lo >> 2;                                  \
            const __m256d active = _mm256_cmp_pd(lane, _mm256_set1_pd((double)(lo - 4 * bottom)), _CMP_GE_OQ); \
            __m256d previous = _mm256_setzero_pd();                                               \
            UNROLL                                                                                \
            for (int j = 0; j < (Q); j++) {                                                       \
                if (j < bottom) continue;                                                         \
                __m256d o1 = lz1[j], o2 = lz2[j];                                                 \
                __m128 f = _mm256_cvtpd_ps(ag_step4(c + 5 * j, lz1 + j, lz2 + j, lv[j]));         \
                __m256d r = _mm256_cvtps_pd(f);                                                   \
                if (j == bottom) {                                                                \
                    lz1[j] = _mm256_blendv_pd(o1, lz1[j], active);                                \
                    lz2[j] = _mm256_blendv_pd(o2, lz2[j], active);                                \
                }                                                                                 \
                if (j == (Q) - 1) out[t] = f[lastLane];                                           \
                lv[j] = _mm256_shuffle_pd(_mm256_permute2f128_pd(previous, r, 0x21), r, 0x5);     \
                previous = r;                                                                     \
            }                                                                                     \
        }                                                                                         \
        for (int j = 0; j < (Q); j++) { z1[j] = lz1[j]; z2[j] = lz2[j]; }                         \
    } while (0)

AG_AVX2
void ag_biquad_pair_wavefront_avx2(int count, float *x0, float *x1, int first, int end,
                                   const double *coefficients, double *state, long stateStride,
                                   double *inFlight, double *scratch) {
    const int pairs = (count + 1) / 2, last = count - 1;
    // Scratch (32-byte aligned here): per section pair j, 5 coefficient vectors, z1, z2, the
    // input (2j, 2j + 1).
    __m256d *c = (__m256d *)(((uintptr_t)scratch + 31) & ~(uintptr_t)31), *z1 = c + 5 * pairs, *z2 = z1 + pairs, *v = z2 + pairs;
    for (int j = 0; j < pairs; j++) {
        const int s0 = 2 * j, s1 = 2 * j + 1;
        for (int m = 0; m < 5; m++) {
            double b = s1 < count ? coefficients[10 * s1 + 2 * m] : 0;
            c[5 * j + m] = _mm256_setr_pd(coefficients[10 * s0 + 2 * m], coefficients[10 * s0 + 2 * m], b, b);
        }
        const double *a = state + stateStride * s0, *b = s1 < count ? state + stateStride * s1 : 0;
        z1[j] = _mm256_setr_pd(a[0], a[1], b ? b[0] : 0, b ? b[1] : 0);
        z2[j] = _mm256_setr_pd(a[2], a[3], b ? b[2] : 0, b ? b[3] : 0);
        const double *i1 = s1 < count ? inFlight + 2 * s1 : inFlight;
        v[j] = _mm256_setr_pd(inFlight[2 * s0], inFlight[2 * s0 + 1], i1[0], i1[1]);
    }
    float *out0 = x0 - last, *out1 = x1 - last;
    const int lastHigh = last & 1;
    // Up to 16 sections with the state and the values in flight in registers (the step's
    // chain then waits on no store), more through the scratch.
    switch (pairs) {
    case 1: AG_PAIR_STEPS(1, AG_UNROLL); break;
    case 2: AG_PAIR_STEPS(2, AG_UNROLL); break;
    case 3: AG_PAIR_STEPS(3, AG_UNROLL); break;
    case 4: AG_PAIR_STEPS(4, AG_UNROLL); break;
    case 5: AG_PAIR_STEPS(5, AG_UNROLL); break;
    case 6: AG_PAIR_STEPS(6, AG_UNROLL); break;
    case 7: AG_PAIR_STEPS(7, AG_UNROLL); break;
    case 8: AG_PAIR_STEPS(8, AG_UNROLL); break;
    default: AG_PAIR_STEPS(pairs, ); break;
    }
    for (int j = 0; j < pairs; j++) {
        const int s0 = 2 * j, s1 = 2 * j + 1;
        double zz1[4], zz2[4], vv[4];
        _mm256_storeu_pd(zz1, z1[j]);
        _mm256_storeu_pd(zz2, z2[j]);
        _mm256_storeu_pd(vv, v[j]);
        double *a = state + stateStride * s0;
        a[0] = zz1[0]; a[1] = zz1[1]; a[2] = zz2[0]; a[3] = zz2[1];
        if (s0 > 0) { inFlight[2 * s0] = vv[0]; inFlight[2 * s0 + 1] = vv[1]; }
        if (s1 < count) {
            double *b = state + stateStride * s1;
            b[0] = zz1[2]; b[1] = zz1[3]; b[2] = zz2[2]; b[3] = zz2[3];
            inFlight[2 * s1] = vv[2]; inFlight[2 * s1 + 1] = vv[3];
        }
    }
}

AG_AVX2
void ag_biquad_single_wavefront_avx2(int count, float *x, int frameCount, const double *coefficients,
                                     double *state, double *scratch) {
    const int quads = (count + 3) / 4, last = count - 1;
    // Scratch (32-byte aligned here): per four sections j, 5 coefficient vectors, z1, z2.
    __m256d *c = (__m256d *)(((uintptr_t)scratch + 31) & ~(uintptr_t)31), *z1 = c + 5 * quads, *z2 = z1 + quads;
    // The Swift layout: per section pair p, b0 b0' b1 b1' ... a2 a2' and z1 z1' z2 z2'.
    for (int j = 0; j < quads; j++) {
        double cc[5][4], zz1[4], zz2[4];
        for (int l = 0; l < 4; l++) {
            const int s = 4 * j + l, inside = s < count;
            const double *p = coefficients + 10 * (s >> 1) + (s & 1), *z = state + 4 * (s >> 1) + (s & 1);
            for (int m = 0; m < 5; m++) cc[m][l] = inside ? p[2 * m] : 0;
            zz1[l] = inside ? z[0] : 0;
            zz2[l] = inside ? z[2] : 0;
        }
        for (int m = 0; m < 5; m++) c[5 * j + m] = _mm256_loadu_pd(cc[m]);
        z1[j] = _mm256_loadu_pd(zz1);
        z2[j] = _mm256_loadu_pd(zz2);
    }
    // Which lane of a group each section is (the active masks compare against it).
    const __m256d lane = _mm256_setr_pd(0, 1, 2, 3);
    float *out = x - last;
    const int lastLane = last & 3;
    switch (quads) {
    case 1: AG_SINGLE_BLOCK(1, AG_UNROLL); break;
    case 2: AG_SINGLE_BLOCK(2, AG_UNROLL); break;
    case 3: AG_SINGLE_BLOCK(3, AG_UNROLL); break;
    case 4: AG_SINGLE_BLOCK(4, AG_UNROLL); break;
    default: AG_SINGLE_BLOCK(quads, ); break;
    }
    for (int j = 0; j < quads; j++) {
        double zz1[4], zz2[4];
        _mm256_storeu_pd(zz1, z1[j]);
        _mm256_storeu_pd(zz2, z2[j]);
        for (int l = 0; l < 4; l++) {
            const int s = 4 * j + l;
            if (s >= count) break;
            double *z = state + 4 * (s >> 1) + (s & 1);
            z[0] = zz1[l];
            z[2] = zz2[l];
        }
    }
}

#else
int ag_biquad_wavefront_avx2_available(void) { return 0; }
void ag_biquad_pair_wavefront_avx2(int count, float *x0, float *x1, int first, int end,
                                   const double *coefficients, double *state, long stateStride,
                                   double *inFlight, double *scratch) {}
void ag_biquad_single_wavefront_avx2(int count, float *x, int frameCount, const double *coefficients,
                                     double *state, double *scratch) {}
#endif
