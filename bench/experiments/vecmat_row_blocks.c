/* How fast does one core run the f32 vector-matrix product 1×2048×16384 (`c = a · b`, `b`
 * row-major, 128 MiB) for each way of blocking its loops? A block of W columns of `c` stays in
 * cache while R rows of `b` are read side by side, 128 columns (8 registers of `c`) at a time;
 * with a prefetch distance P (floats), every load of `b` is preceded by a software prefetch P
 * floats further along its row. Prints the median GFLOP/s of 7 calls per (P, R, W).
 *
 *   gcc -O3 -march=native bench/experiments/vecmat_row_blocks.c -o /tmp/vecmat_row_blocks
 *   taskset -c 1 /tmp/vecmat_row_blocks
 *
 * Measured on the Zen 4 VM (2026-11-26; see "Cost model 8" in bench/README.md): without
 * prefetch, R = 4 and 8 reached 9.2–12.8 GFLOP/s (12.8 for R = 4 with whole rows, W = 16384),
 * R = 1 only 5.4–7.8; every prefetch distance was slower (R = 4, W = 16384: 11.4 at P = 256,
 * 6.9 at P = 512).
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define K 2048
#define N 16384
#define CALLS 7

static void vecmat(const float *a, const float *b, float *c, int rows, int width, int prefetch) {
    memset(c, 0, N * sizeof(float));
    for (int j0 = 0; j0 < N; j0 += width) {
        for (int k0 = 0; k0 < K; k0 += rows) {
            for (int j = j0; j < j0 + width; j += 128) {
                __m512 acc[8];
                for (int v = 0; v < 8; v++) acc[v] = _mm512_load_ps(c + j + 16 * v);
                for (int r = 0; r < rows; r++) {
                    const float *row = b + (long)(k0 + r) * N + j;
                    if (prefetch) {
                        for (int v = 0; v < 8; v++) _mm_prefetch((const char *)(row + prefetch + 16 * v), _MM_HINT_T0);
                    }
                    __m512 s = _mm512_set1_ps(a[k0 + r]);
                    for (int v = 0; v < 8; v++) acc[v] = _mm512_fmadd_ps(s, _mm512_load_ps(row + 16 * v), acc[v]);
                }
                for (int v = 0; v < 8; v++) _mm512_store_ps(c + j + 16 * v, acc[v]);
            }
        }
    }
}

int main(void) {
    float *a = aligned_alloc(64, K * sizeof(float)), *c = aligned_alloc(64, N * sizeof(float));
    float *b = aligned_alloc(4096, (size_t)K * N * sizeof(float));
    if (!a || !b || !c) return 1;
    for (int i = 0; i < K; i++) a[i] = (float)(i % 7) * 0.25f;
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = (float)(i % 5) * 0.5f;
    const int rows[] = {1, 2, 4, 8, 16}, widths[] = {1024, 2048, 4096, 8192, 16384}, prefetches[] = {0, 256, 512};
    for (int p = 0; p < 3; p++) {
        for (int r = 0; r < 5; r++) {
            printf("P %3d R %2d:", prefetches[p], rows[r]);
            for (int w = 0; w < 5; w++) {
                double t[CALLS];
                for (int call = 0; call < CALLS; call++) {
                    double start = now();
                    vecmat(a, b, c, rows[r], widths[w], prefetches[p]);
                    t[call] = now() - start;
                }
                qsort(t, CALLS, sizeof *t, by_value);
                printf("  W %5d %5.1f", widths[w], 2.0 * K * N / t[CALLS / 2] / 1e9);
            }
            printf("\n");
            fflush(stdout);
        }
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
