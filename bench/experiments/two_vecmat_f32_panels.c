/* Times two Morello kernels of the f32 vector-matrix product 1×2048×16384 side by side, with `b`
 * prepacked in panels of 16 columns (`[2, 1, 2 p16]`: element (p, j) at (j / 16)·16·2048 +
 * 16p + j % 16), one thread, the way `two_vecmat_bf16.c` times the bf16 ones: each kernel is
 * first checked against an f64 reference, then the two are timed in turns (21 rounds of at least
 * 0.2 s, alternating), with 4 copies of `b` (512 MiB) cycled so that every call reads DRAM;
 * prints the median, lowest and highest GFLOP/s of each.
 *
 * The kernels come from `morello-db synthesize --emit-c` (which exports each as `kernel`),
 * renamed, for example the AVX2 kernels of two cost models (bench/README.md, "Cost model 16"):
 *
 *   morello-db synthesize --target avx2 --db /tmp/before.morellodb --emit-c /tmp/before.c \
 *       --spec "Matmul(1x1x2048x16384, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL), serial)"
 *   sed -i 's/void kernel(/void kernel_before(/' /tmp/before.c
 *   sed -i 's/void kernel(/void kernel_after(/' /tmp/after.c
 *   gcc -O3 -std=gnu11 -mavx2 -mfma bench/experiments/two_vecmat_f32_panels.c /tmp/before.c \
 *       /tmp/after.c -o /tmp/two_vecmat_f32_panels -lm
 *   taskset -c 1 /tmp/two_vecmat_f32_panels
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "morello_runtime.h"
#include "timing.h"

typedef void (*kernel_fn)(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);
void kernel_before(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);
void kernel_after(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);

enum { K = 2048, N = 16384, COPIES = 4, ROUNDS = 21 };

/* Element (p, j) of `b`, small exact multiples of 1/8. */
static float b_value(long p, long j) { return (float)((p * N + j) * 5 % 11 - 5) / 8; }

int main(void) {
    float *a = aligned_alloc(64, K * sizeof(float));
    float *c = aligned_alloc(64, N * sizeof(float));
    float *b[COPIES];
    for (long p = 0; p < K; p++) a[p] = (float)(p * 7 % 13 - 6) / 8;
    for (int copy = 0; copy < COPIES; copy++) {
        b[copy] = aligned_alloc(64, (long)K * N * sizeof(float));
        for (long p = 0; p < K; p++)
            for (long j = 0; j < N; j++) b[copy][(j / 16) * 16 * K + 16 * p + j % 16] = b_value(p, j);
    }
    const morello_runtime rt = {0, 1};
    const kernel_fn kernels[2] = {kernel_before, kernel_after};
    const char *names[2] = {"before", "after"};
    for (int f = 0; f < 2; f++) {
        for (long j = 0; j < N; j++) c[j] = NAN;
        kernels[f](a, b[0], c, &rt);
        for (long j = 0; j < N; j++) {
            double expected = 0;
            for (long p = 0; p < K; p++) expected += (double)a[p] * b_value(p, j);
            /* Every product is a multiple of 1/64 below 1/2 in magnitude, so every partial sum
             * is one below 2^10, which f32 holds exactly: any order of summation gives this. */
            if (!(fabs(c[j] - expected) <= 1e-3 * (1 + fabs(expected)))) {
                printf("%s is wrong at %ld: %g, expected %g\n", names[f], j, c[j], expected);
                return 1;
            }
        }
    }
    double rates[2][ROUNDS];
    int next = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int f = 0; f < 2; f++) {
            long calls = 0;
            double start = now(), elapsed;
            do {
                kernels[f](a, b[next], c, &rt);
                next = (next + 1) % COPIES;
                calls++;
            } while ((elapsed = now() - start) < 0.2);
            rates[f][round] = 2.0 * K * N * calls / elapsed / 1e9;
        }
    }
    for (int f = 0; f < 2; f++) {
        qsort(rates[f], ROUNDS, sizeof(double), by_value);
        printf("%-6s median %.2f GFLOP/s (lowest %.2f, highest %.2f)\n", names[f], rates[f][ROUNDS / 2], rates[f][0],
               rates[f][ROUNDS - 1]);
    }
    return 0;
}
