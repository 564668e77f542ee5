/*
 * One-thread streaming read bandwidth: sums a buffer of --mib MiB (float, several
 * independent accumulators so that the adds never limit it), best pass of repeated
 * passes for --seconds. Each pass is timed by the thread's CPU time, as rxnode's
 * `--welch-streamed` bench does: a pass takes tens of ms, long enough to be preempted
 * on a loaded machine. Prints "read-bw MIB GB/s". Compiled with -O3 -march=native, so
 * the loop uses the widest vectors the CPU has.
 *
 * usage: read_bw [--mib MIB] [--seconds S]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    size_t mib = 256;
    double secs = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib"))
            mib = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seconds"))
            secs = atof(argv[i + 1]);
        else {
            fprintf(stderr, "read_bw: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    size_t n = mib * (1u << 20) / sizeof(float);
    float *x = aligned_alloc(64, n * sizeof(float));
    if (!x) {
        fprintf(stderr, "read_bw: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(i & 1023) * 1e-3f;
    double best = 0.0, t0 = now(), sink = 0.0;
    int passes = 0;
    while (passes < 3 || now() - t0 < secs) {
        double t = cpu();
        float acc[64] = {0};
        for (size_t i = 0; i < n; i += 64)
            for (int k = 0; k < 64; k++)
                acc[k] += x[i + k];
        double dt = cpu() - t;
        for (int k = 0; k < 64; k++)
            sink += acc[k];
        double gbs = (double)(n * sizeof(float)) / dt / 1e9;
        if (gbs > best)
            best = gbs;
        passes++;
    }
    printf("read-bw %zu %.2f\n", mib, best);
    return sink == 12345.678 ? 3 : 0;
}
