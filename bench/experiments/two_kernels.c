/* Times two Morello kernels of the same f32 GEMM side by side: `c[M×N] = a[M×K] · b[K×N]`,
 * row-major, one thread. Each kernel is first checked against an f64 reference, then the two
 * are timed in turns (11 rounds of at least 0.1 s each, alternating), and the median, lowest and
 * highest GFLOP/s of each are printed. Alternating keeps a noisy machine's slow spells from
 * favouring either kernel.
 *
 * The kernels come from `morello-db synthesize --emit-c`, which exports each as `kernel`;
 * rename them. For the register-block comparison (AVX2 256³), the "before" file comes from the
 * same command with `REGISTER_BLOCK_ROWS` in morello-core/src/search/enumerate.rs emptied, and
 * with a database file of its own (`--db /tmp/before.morellodb`, `--emit-c /tmp/before.c`):
 *
 *   cargo run --release -p morello-build --bin morello-db -- synthesize --target avx2 \
 *       --db /tmp/after.morellodb --emit-c /tmp/after.c \
 *       --spec "Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL), serial)"
 *   sed -i 's/void kernel(/void kernel_before(/' /tmp/before.c
 *   sed -i 's/void kernel(/void kernel_after(/' /tmp/after.c
 *   gcc -O3 -std=gnu11 -mavx2 -mfma -DM=256 -DK=256 -DN=256 bench/experiments/two_kernels.c \
 *       /tmp/before.c /tmp/after.c -o /tmp/two_kernels -lm
 *   taskset -c 1 /tmp/two_kernels
 *
 * With `-DPANELS=64` both kernels read `b` prepacked in panels of 64 columns (the Spec's rhs
 * `(f32, GL, [2, 1, 2 p64])`: element `(p, j)` at `(j / 64)·64·K + 64p + j % 64`), packed once
 * before timing; N must then be a multiple of PANELS. The reference still reads `b` row-major.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "morello_runtime.h"
#include "timing.h"

typedef void (*kernel_fn)(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);
void kernel_before(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);
void kernel_after(const float *restrict, const float *restrict, float *restrict, const morello_runtime *);

enum { ROUNDS = 11 };

int main(void) {
    const long m = M, k = K, n = N;
    float *a = aligned_alloc(64, m * k * sizeof(float));
    float *b = aligned_alloc(64, k * n * sizeof(float));
    float *c = aligned_alloc(64, m * n * sizeof(float));
    double *expected = malloc(m * n * sizeof(double));
    for (long i = 0; i < m * k; i++) a[i] = (float)(i * 7 % 13 - 6) / 8;
    for (long i = 0; i < k * n; i++) b[i] = (float)(i * 5 % 11 - 5) / 8;
    for (long i = 0; i < m; i++) {
        for (long j = 0; j < n; j++) {
            double sum = 0;
            for (long l = 0; l < k; l++) sum += (double)a[i * k + l] * b[l * n + j];
            expected[i * n + j] = sum;
        }
    }
#ifdef PANELS
    float *packed = aligned_alloc(64, k * n * sizeof(float));
    for (long p = 0; p < k; p++)
        for (long j = 0; j < n; j++) packed[(j / PANELS) * PANELS * k + PANELS * p + j % PANELS] = b[p * n + j];
    b = packed;
#endif
    const kernel_fn kernels[2] = {kernel_before, kernel_after};
    const char *names[2] = {"before", "after"};
    const morello_runtime rt = {0, 1};
    for (int f = 0; f < 2; f++) {
        for (long i = 0; i < m * n; i++) c[i] = NAN;
        kernels[f](a, b, c, &rt);
        for (long i = 0; i < m * n; i++) {
            if (!(fabs(c[i] - expected[i]) <= 1e-4 * (1 + fabs(expected[i])))) {
                printf("%s is wrong at %ld: %g, expected %g\n", names[f], i, c[i], expected[i]);
                return 1;
            }
        }
    }
    double rates[2][ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int f = 0; f < 2; f++) {
            long calls = 0;
            double start = now(), elapsed;
            do {
                kernels[f](a, b, c, &rt);
                calls++;
            } while ((elapsed = now() - start) < 0.1);
            rates[f][round] = 2.0 * m * n * k * calls / elapsed / 1e9;
        }
    }
    for (int f = 0; f < 2; f++) {
        qsort(rates[f], ROUNDS, sizeof(double), by_value);
        printf("%ldx%ldx%ld %-6s median %.1f GFLOP/s (lowest %.1f, highest %.1f)\n", m, k, n, names[f],
               rates[f][ROUNDS / 2], rates[f][0], rates[f][ROUNDS - 1]);
    }
    return 0;
}
