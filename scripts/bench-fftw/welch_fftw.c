/*
 * Welch PSD on FFTW, the way rxnode's Welch does it: complex float input, periodic Hann
 * window, N-point forward FFT, |X|^2 accumulated per bin, hop N/2 (50 % overlap).
 *
 * The same workload as `cargo bench -p rxnode-dsp --bench dsp -- --welch-table`: a buffer
 * of L = max(65536, 8N) samples in cache (the bench's test signal: a tone at 0.05
 * cycles/sample plus noise), every whole segment of it per pass; MS/s = samples advanced
 * (segments x hop) per second of the best pass. Both an out-of-place and an in-place
 * plan are made with the planner flag given and the faster one is timed (FFTW's best).
 * Wisdom is read from and written to --wisdom FILE, so that PATIENT planning is paid once.
 *
 * Prints one line per size: "fftw N MS/s plan" and checks that the PSD's peak is the
 * tone's bin (exit 1 if not).
 *
 * usage: welch_fftw [--seconds S] [--wisdom FILE] [--flag patient|measure|exhaustive]
 *                   [--sizes N,N,...]
 */
#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* hw/dsp/benches/dsp.rs `signal`: the same tone and the same xorshift noise. */
static void signal(float *x, size_t n) {
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        double ph = 2.0 * M_PI * fmod(0.05 * (double)i, 1.0);
        float r[2];
        for (int k = 0; k < 2; k++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            r[k] = (float)(s >> 40) / (float)(1u << 24) - 0.5f;
        }
        x[2 * i] = 0.1f * (float)cos(ph) + 0.01f * r[0];
        x[2 * i + 1] = 0.1f * (float)sin(ph) + 0.01f * r[1];
    }
}

struct welch {
    size_t n, hop, len;
    const float *x;
    float *win;
    fftwf_complex *in, *out;
    float *acc;
    fftwf_plan plan;
    int inplace;
};

/* One pass over the buffer: every whole segment windowed, transformed, |X|^2 added. */
static size_t pass(struct welch *w) {
    size_t n = w->n, segs = 0;
    memset(w->acc, 0, n * sizeof(float));
    fftwf_complex *res = w->inplace ? w->in : w->out;
    for (size_t start = 0; start + n <= w->len; start += w->hop) {
        const float *src = w->x + 2 * start;
        float *dst = (float *)w->in;
        for (size_t i = 0; i < n; i++) {
            dst[2 * i] = src[2 * i] * w->win[i];
            dst[2 * i + 1] = src[2 * i + 1] * w->win[i];
        }
        fftwf_execute_dft(w->plan, w->in, res);
        const float *r = (const float *)res;
        for (size_t k = 0; k < n; k++)
            w->acc[k] += r[2 * k] * r[2 * k] + r[2 * k + 1] * r[2 * k + 1];
        segs++;
    }
    return segs * w->hop;
}

/* Best MS/s of repeated passes for `secs`. */
static double rate(struct welch *w, double secs) {
    pass(w);
    double best = 0.0, t0 = now();
    while (now() - t0 < secs) {
        double t = now();
        size_t samples = pass(w);
        double r = (double)samples / (now() - t) / 1e6;
        if (r > best)
            best = r;
    }
    return best;
}

int main(int argc, char **argv) {
    double secs = 0.15;
    const char *wisdom = NULL;
    unsigned flag = FFTW_PATIENT;
    const char *flag_name = "patient";
    size_t sizes[32], nsizes = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds"))
            secs = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--wisdom"))
            wisdom = argv[i + 1];
        else if (!strcmp(argv[i], "--flag")) {
            flag_name = argv[i + 1];
            if (!strcmp(flag_name, "patient"))
                flag = FFTW_PATIENT;
            else if (!strcmp(flag_name, "measure"))
                flag = FFTW_MEASURE;
            else if (!strcmp(flag_name, "exhaustive"))
                flag = FFTW_EXHAUSTIVE;
            else {
                fprintf(stderr, "welch_fftw: --flag %s is not patient, measure or exhaustive\n", flag_name);
                return 2;
            }
        } else if (!strcmp(argv[i], "--sizes")) {
            char *p = argv[i + 1];
            while (*p && nsizes < 32) {
                sizes[nsizes++] = strtoul(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else {
            fprintf(stderr, "welch_fftw: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (nsizes == 0)
        for (size_t n = 256; n <= 65536; n *= 2)
            sizes[nsizes++] = n;
    if (wisdom)
        fftwf_import_wisdom_from_filename(wisdom);
    for (size_t k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        if (n < 16 || (n & (n - 1))) {
            fprintf(stderr, "welch_fftw: size %zu is not a power of two >= 16\n", n);
            return 2;
        }
        struct welch w = {.n = n, .hop = n / 2, .len = n * 8 > 65536 ? n * 8 : 65536};
        float *x = fftwf_malloc(2 * w.len * sizeof(float));
        signal(x, w.len);
        w.x = x;
        w.win = fftwf_malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            w.win[i] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * (double)i / (double)n));
        w.in = fftwf_malloc(n * sizeof(fftwf_complex));
        w.out = fftwf_malloc(n * sizeof(fftwf_complex));
        w.acc = fftwf_malloc(n * sizeof(float));
        fftwf_plan oop = fftwf_plan_dft_1d((int)n, w.in, w.out, FFTW_FORWARD, flag);
        fftwf_plan ip = fftwf_plan_dft_1d((int)n, w.in, w.in, FFTW_FORWARD, flag);
        if (!oop || !ip) {
            fprintf(stderr, "welch_fftw: no plan for %zu\n", n);
            return 1;
        }
        w.plan = oop;
        w.inplace = 0;
        double r_oop = rate(&w, secs / 2);
        w.plan = ip;
        w.inplace = 1;
        double r_ip = rate(&w, secs / 2);
        /* The timed figure: the faster plan, timed again for the rest of the time. */
        int best_ip = r_ip > r_oop;
        w.plan = best_ip ? ip : oop;
        w.inplace = best_ip;
        double r = rate(&w, secs);
        if (r_oop > r && !best_ip)
            r = r_oop;
        if (r_ip > r && best_ip)
            r = r_ip;
        /* The tone at 0.05 cycles/sample must be the PSD's peak. */
        size_t peak = 0;
        for (size_t b = 1; b < n; b++)
            if (w.acc[b] > w.acc[peak])
                peak = b;
        size_t want = (size_t)llround(0.05 * (double)n);
        if (peak != want && peak + 1 != want && peak != want + 1) {
            fprintf(stderr, "welch_fftw: N=%zu peak at bin %zu, the tone is at %zu\n", n, peak, want);
            return 1;
        }
        printf("fftw %zu %.1f %s-%s\n", n, r, flag_name, best_ip ? "inplace" : "outofplace");
        fflush(stdout);
        fftwf_destroy_plan(oop);
        fftwf_destroy_plan(ip);
        fftwf_free(x);
        fftwf_free(w.win);
        fftwf_free(w.in);
        fftwf_free(w.out);
        fftwf_free(w.acc);
    }
    if (wisdom)
        fftwf_export_wisdom_to_filename(wisdom);
    return 0;
}
