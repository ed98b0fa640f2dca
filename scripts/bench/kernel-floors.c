/* C floors for scripts/bench-kernels.sh: the same per-sample work as AudioGraph's kernels, in
   plain C, timed in-process. Prints "name Msamples/s" lines. Built with gcc -O2 and -O3
   -march=native by the script. usage: kernel-floors SECONDS_OF_AUDIO */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

#define RATE 48000
#define BLOCK 512

/* The thread's CPU time, not the wall clock: on a shared machine the wall clock mostly measures
   the scheduler (KernelBench times itself the same way). */
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static float *noise(size_t n, uint32_t seed) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) { seed = seed * 1664525u + 1013904223u; p[i] = (float)((seed >> 8) / 8388608.0 - 1.0) * 0.5f; }
    return p;
}
static volatile float sink;
static void report(const char *name, double samples, double s) { printf("%-10s %9.1f\n", name, samples / s * 1e-6); }

/* Sine: phase accumulated in double, sin() in double, rounded to float (the oscillator's formula). */
static void sine(size_t frames) {
    float *out = malloc(BLOCK * sizeof(float));
    double phase = 0, inc = 441.0 / RATE, a = 0.5;
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK; i++) {
            out[i] = (float)(a * sin(2 * M_PI * phase));
            phase += inc;
            if (phase >= 1) phase -= floor(phase);
        }
        sink += out[BLOCK - 1];
    }
    report("sine", frames, now() - t0);
}

/* Mixer: 32 mono inputs, constant gain and equal-power pan, accumulated into stereo. */
static void mix(size_t frames) {
    enum { N = 32 };
    float *in = noise(BLOCK * N, 1), *l = malloc(BLOCK * 4), *r = malloc(BLOCK * 4);
    float gl[N], gr[N];
    for (int k = 0; k < N; k++) { double x = (k / (N - 1.0)); gl[k] = (float)(0.8 * cos(x * M_PI / 2)); gr[k] = (float)(0.8 * sin(x * M_PI / 2)); }
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK; i++) l[i] = r[i] = 0;
        for (int k = 0; k < N; k++) {
            const float *restrict x = in + k * BLOCK; float *restrict L = l, *restrict R = r;
            for (int i = 0; i < BLOCK; i++) { L[i] += x[i] * gl[k]; R[i] += x[i] * gr[k]; }
        }
        sink += l[BLOCK - 1];
    }
    report("mix", (double)frames * N, now() - t0);
}

/* Delay: 250 ms, feedback 0.5, one-pole low-pass in the loop (double), wet/dry 0.5, stereo. */
static void delay(size_t frames) {
    enum { CAP = 1 << 17 };
    float *in = noise(BLOCK * 2, 2), *out = malloc(BLOCK * 2 * 4);
    float *xs = calloc(2 * CAP, 4), *ds = calloc(2 * CAP, 4);
    double s[2] = {0, 0}, a = 1 - exp(-2 * M_PI * 15000.0 / RATE), fb = 0.5, wet = 0.5;
    int D = RATE / 4, w0 = 0;
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int c = 0; c < 2; c++) {
            float *X = xs + c * CAP, *Dl = ds + c * CAP; const float *x = in + c * BLOCK; float *y = out + c * BLOCK;
            double st = s[c]; int w = w0;
            for (int i = 0; i < BLOCK; i++) {
                float xn = x[i]; X[w] = xn;
                double xd = X[(w - D) & (CAP - 1)], dd = Dl[(w - D) & (CAP - 1)];
                st += a * (dd - st);
                double d = xd + fb * st;
                Dl[w] = (float)d;
                y[i] = (float)((1 - wet) * xn + wet * d);
                w = (w + 1) & (CAP - 1);
            }
            s[c] = st;
        }
        w0 = (w0 + BLOCK) & (CAP - 1);
        sink += out[BLOCK - 1];
    }
    report("delay", frames * 2.0, now() - t0);
}

/* Conversion: float -> int16 interleaved stereo (round to nearest even, clip), and back. */
static void convert(size_t frames) {
    float *l = noise(BLOCK, 3), *r = noise(BLOCK, 4), *back = malloc(BLOCK * 2 * 4);
    int16_t *pcm = malloc(BLOCK * 2 * 2);
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK; i++) {
            float v[2] = {l[i], r[i]};
            for (int c = 0; c < 2; c++) {
                double q = nearbyint((double)v[c] * 32768);
                pcm[2 * i + c] = (int16_t)(q < -32768 ? -32768 : q > 32767 ? 32767 : q);
            }
        }
        sink += pcm[BLOCK];
    }
    report("to-int16", frames * 2.0, now() - t0);
    t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < 2 * BLOCK; i++) back[(i & 1) * BLOCK + (i >> 1)] = (float)(pcm[i] / 32768.0);
        sink += back[BLOCK];
    }
    report("from-int16", frames * 2.0, now() - t0);
}

/* B2's cascade with AudioGraph's arithmetic: 10 RBJ peaking sections (Q 1, +6/-6 dB alternating
   at 31 ... 16k Hz), transposed direct form II in double, each section's output rounded to float
   before the next, states below 1e-200 flushed to 0; sample-major (all sections of a frame, then
   the next), as ../shared/bench/c/biquad10.c (which keeps float state). Stereo, and mono (B6's
   two EQs filter mono sources). A sample is one channel-sample through one section. */
#define NB 10
typedef struct { double b0, b1, b2, a1, a2; } dcoef_t;
static void cookbook10(dcoef_t *c) {
    for (int k = 0; k < NB; k++) {
        double A = pow(10, (k % 2 ? -6.0 : 6.0) / 40), w0 = 2 * M_PI * 31.25 * (1 << k) / RATE;
        double al = sin(w0) / 2.0, a0 = 1 + al / A;
        c[k] = (dcoef_t){(1 + al * A) / a0, -2 * cos(w0) / a0, (1 - al * A) / a0, -2 * cos(w0) / a0, (1 - al / A) / a0};
    }
}
static inline double dstep(const dcoef_t *k, double x, double *z1, double *z2) {
    double y = k->b0 * x + *z1;
    *z1 = k->b1 * x - k->a1 * y + *z2;
    *z2 = k->b2 * x - k->a2 * y;
    if (fabs(*z1) < 1e-200) *z1 = 0;
    if (fabs(*z2) < 1e-200) *z2 = 0;
    return y;
}
/* ../shared/bench/c/biquad10.c's cascade (B2's C peer): float coefficients and state, both
   channels through each section, sample-major; its loop verbatim, on 512-frame blocks. */
typedef struct { float b0, b1, b2, a1, a2; } coef_t;
static void biquad_float(size_t frames) {
    dcoef_t d[NB];
    cookbook10(d);
    coef_t c[NB];
    for (int k = 0; k < NB; k++) c[k] = (coef_t){(float)d[k].b0, (float)d[k].b1, (float)d[k].b2, (float)d[k].a1, (float)d[k].a2};
    float *in = noise(BLOCK * 2, 5), *out = malloc(BLOCK * 2 * sizeof(float));
    float z1[NB][2] = {{0}}, z2[NB][2] = {{0}};
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (size_t n = 0; n < BLOCK; n++) {
            float l = in[2 * n], r = in[2 * n + 1];
            for (int k = 0; k < NB; k++) {
                float yl = c[k].b0 * l + z1[k][0];
                float yr = c[k].b0 * r + z1[k][1];
                z1[k][0] = c[k].b1 * l - c[k].a1 * yl + z2[k][0];
                z1[k][1] = c[k].b1 * r - c[k].a1 * yr + z2[k][1];
                z2[k][0] = c[k].b2 * l - c[k].a2 * yl;
                z2[k][1] = c[k].b2 * r - c[k].a2 * yr;
                l = yl; r = yr;
            }
            out[2 * n] = l; out[2 * n + 1] = r;
        }
        sink += out[BLOCK - 1];
    }
    report("biquad-f", (double)frames * 2 * NB, now() - t0);
}

static void biquad_double(size_t frames, int channels) {
    dcoef_t c[NB];
    cookbook10(c);
    float *in = noise(BLOCK * channels, 5), *work = malloc(BLOCK * channels * sizeof(float));
    double z1[NB][2] = {{0}}, z2[NB][2] = {{0}};
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK * channels; i++) work[i] = in[i];
        for (int i = 0; i < BLOCK; i++) {
            for (int ch = 0; ch < channels; ch++) {
                float v = work[ch * BLOCK + i];
                for (int k = 0; k < NB; k++) v = (float)dstep(&c[k], v, &z1[k][ch], &z2[k][ch]);
                work[ch * BLOCK + i] = v;
            }
        }
        sink += work[BLOCK - 1];
    }
    report(channels == 2 ? "biquad-d" : "biquad-d1", (double)frames * channels * NB, now() - t0);
}

/* The eq-graph's work: mono noise through 64 one-section filters in series (peaking, Q 0.7071,
   100 + 15 k Hz, -3/+3 dB alternating), block by block and filter by filter as a graph renders
   nodes (each filter runs over the whole block before the next starts), our arithmetic
   (double state, float between filters, flush below 1e-200). One section's recurrence is serial,
   so this runs at its latency: the floor of a chain of one-band nodes. */
static void eq_chain(size_t frames) {
    enum { N = 64 };
    dcoef_t c[N];
    for (int k = 0; k < N; k++) {
        double A = pow(10, (k % 2 ? 3.0 : -3.0) / 40), w0 = 2 * M_PI * (100 + 15 * k) / RATE;
        double al = sin(w0) / (2 * 0.70710678118654752), a0 = 1 + al / A;
        c[k] = (dcoef_t){(1 + al * A) / a0, -2 * cos(w0) / a0, (1 - al * A) / a0, -2 * cos(w0) / a0, (1 - al / A) / a0};
    }
    float *in = noise(BLOCK, 6), *work = malloc(BLOCK * sizeof(float));
    double z1[N] = {0}, z2[N] = {0};
    double t0 = now();
    for (size_t done = 0; done < frames; done += BLOCK) {
        for (int i = 0; i < BLOCK; i++) work[i] = in[i];
        for (int k = 0; k < N; k++)
            for (int i = 0; i < BLOCK; i++) work[i] = (float)dstep(&c[k], work[i], &z1[k], &z2[k]);
        sink += work[BLOCK - 1];
    }
    report("eq-chain", (double)frames * N, now() - t0);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    size_t frames = (size_t)(seconds * RATE) / BLOCK * BLOCK;
    sine(frames); mix(frames); delay(frames); convert(frames);
    biquad_float(frames); biquad_double(frames, 2); biquad_double(frames, 1); eq_chain(frames);
    return 0;
}
