/* Times two Morello kernels of the bf16 vector-matrix product 1×2048×16384 side by side
 * (`c[N] = a[K] · b[K×N]`, bf16 inputs, f32 output, `b` row-major), one thread, the way
 * `two_kernels.c` times GEMMs: each kernel is first checked against an f64 reference, then the
 * two are timed in turns (21 rounds, alternating), with 8 copies of `b` (512 MiB) cycled so that
 * every call reads DRAM; prints the median, lowest and highest GFLOP/s of each.
 *
 * The kernels come from `morello-db synthesize --emit-c` (which exports each as `kernel`),
 * renamed:
 *
 *   sed -i 's/void kernel(/void kernel_before(/' /tmp/before.c
 *   sed -i 's/void kernel(/void kernel_after(/' /tmp/after.c
 *   gcc -O3 -std=gnu11 -march=native bench/experiments/two_vecmat_bf16.c /tmp/before.c \
 *       /tmp/after.c -o /tmp/two_vecmat_bf16 -lm
 *   taskset -c 1 /tmp/two_vecmat_bf16
 *
 * With -DPAIRS the kernels get `b` packed in pairs of rows (`[1, 2, 1 p2]`: element (k, j) at
 * (k / 2)·2N + 2j + k % 2), as the Spec `(bf16, GL, [1, 2, 1 p2])` declares.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "morello_runtime.h"
#include "timing.h"

typedef void (*kernel_fn)(const uint16_t *restrict, const uint16_t *restrict, float *restrict, const morello_runtime *);
void kernel_before(const uint16_t *restrict, const uint16_t *restrict, float *restrict, const morello_runtime *);
void kernel_after(const uint16_t *restrict, const uint16_t *restrict, float *restrict, const morello_runtime *);

enum { K = 2048, N = 16384, COPIES = 8, ROUNDS = 21 };

static float widen(uint16_t x) {
    uint32_t bits = (uint32_t)x << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t narrow(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (uint16_t)(bits >> 16);
}

int main(void) {
    uint16_t *a = aligned_alloc(64, K * sizeof *a), *b[COPIES];
    float *c = aligned_alloc(64, N * sizeof *c);
    double *expected = malloc(N * sizeof *expected);
    for (int i = 0; i < K; i++) a[i] = narrow((float)(i * 7 % 13 - 6) / 8);
    for (int copy = 0; copy < COPIES; copy++) {
        b[copy] = aligned_alloc(4096, (size_t)K * N * sizeof **b);
        for (long i = 0; i < (long)K * N; i++) b[copy][i] = narrow((float)(i * 5 % 11 - 5) / 8);
    }
    uint16_t *row_major = malloc((size_t)K * N * sizeof *row_major);
    memcpy(row_major, b[0], (size_t)K * N * sizeof *row_major);
#ifdef PAIRS
    for (int copy = 0; copy < COPIES; copy++) {
        for (long k = 0; k < K; k++) {
            for (long j = 0; j < N; j++) b[copy][(k / 2) * 2 * N + 2 * j + k % 2] = row_major[k * N + j];
        }
    }
#endif
    for (int j = 0; j < N; j++) {
        double sum = 0;
        for (int k = 0; k < K; k++) sum += (double)widen(a[k]) * widen(row_major[(long)k * N + j]);
        expected[j] = sum;
    }
    const kernel_fn kernels[2] = {kernel_before, kernel_after};
    const char *names[2] = {"before", "after"};
    const morello_runtime rt = {0, 1};
    for (int f = 0; f < 2; f++) {
        for (int j = 0; j < N; j++) c[j] = NAN;
        kernels[f](a, b[0], c, &rt);
        for (int j = 0; j < N; j++) {
            if (!(fabs(c[j] - expected[j]) <= 1e-3 * (1 + fabs(expected[j])))) {
                printf("%s: c[%d] = %g, expected %g\n", names[f], j, c[j], expected[j]);
                return 1;
            }
        }
    }
    static double seconds[2][ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int f = 0; f < 2; f++) {
            const double start = now();
            kernels[f](a, b[(2 * round + f) % COPIES], c, &rt);
            seconds[f][round] = now() - start;
        }
    }
    for (int f = 0; f < 2; f++) {
        qsort(seconds[f], ROUNDS, sizeof **seconds, by_value);
        const double flops = 2.0 * K * N;
        printf("%-6s median %5.1f GFLOP/s (lowest %5.1f, highest %5.1f)\n", names[f], flops / seconds[f][ROUNDS / 2] / 1e9,
               flops / seconds[f][ROUNDS - 1] / 1e9, flops / seconds[f][0] / 1e9);
    }
    return 0;
}
