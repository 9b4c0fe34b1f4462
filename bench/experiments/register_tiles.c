/* How fast can one register tile of an f32 GEMM run on this core, written the way Morello's C
 * is (GNU vector extensions, compiled by gcc)? Each kernel keeps an MR x NR block of the output
 * in zmm registers and, per step of k, loads NR/16 vectors of b, broadcasts MR elements of a
 * and does MR*NR/16 FMAs; a and b are packed and stay in L1. Like Morello's register tiles,
 * each call starts its accumulators at zero and stores them once at the end. (A first version
 * loaded them from c through an array, which gcc copied through the stack with `rep movsq`
 * on every call: that cost 2-3% and made the tile look slower than it is.)
 *
 *   gcc -O3 -funroll-loops -mavx512f -mfma bench/experiments/register_tiles.c -o /tmp/tiles
 *   taskset -c 1 /tmp/tiles
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

typedef float vf __attribute__((vector_size(64)));

#define TILE(MR, NR)                                                                           \
    __attribute__((noinline)) static void tile_##MR##x##NR(const float *restrict a,           \
                                                            const float *restrict b,           \
                                                            float *restrict c, long k) {       \
        enum { NV = NR / 16 };                                                                 \
        vf acc[MR * NV];                                                                       \
        for (int i = 0; i < MR * NV; i++) acc[i] = (vf){0};                                    \
        for (long l = 0; l < k; l++) {                                                         \
            vf row[NV];                                                                        \
            for (int j = 0; j < NV; j++) memcpy(&row[j], b + NR * l + 16 * j, 64);             \
            for (int r = 0; r < MR; r++) {                                                     \
                float x = a[MR * l + r];                                                       \
                for (int j = 0; j < NV; j++) acc[NV * r + j] += row[j] * x;                    \
            }                                                                                  \
        }                                                                                      \
        for (int i = 0; i < MR * NV; i++) memcpy(c + 16 * i, &acc[i], 64);                     \
    }

/* Power-of-two tiles (what Morello's search can choose), then the best others. */
TILE(8, 32)
TILE(4, 64)
TILE(16, 16)
TILE(12, 32)
TILE(14, 32)
TILE(6, 64)

typedef void (*tile_fn)(const float *, const float *, float *, long);

static double gflops(tile_fn f, int mr, int nr, const float *a, const float *b, float *c, long k) {
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        long calls = 0;
        double start = now(), t;
        do {
            f(a, b, c, k);
            calls++;
        } while ((t = now() - start) < 0.2);
        double g = 2.0 * mr * nr * k * calls / t / 1e9;
        if (g > best) best = g;
    }
    return best;
}

int main(void) {
    const long k = 128;
    float *a = aligned_alloc(64, 64 * k * sizeof(float));
    float *b = aligned_alloc(64, 64 * k * sizeof(float));
    float *c = aligned_alloc(64, 64 * 64 * sizeof(float));
    memset(a, 0, 64 * k * sizeof(float));
    memset(b, 0, 64 * k * sizeof(float));
    memset(c, 0, 64 * 64 * sizeof(float));
    struct { const char *name; tile_fn f; int mr, nr; } tiles[] = {
        {"8x32", tile_8x32, 8, 32},   {"4x64", tile_4x64, 4, 64},   {"16x16", tile_16x16, 16, 16},
        {"12x32", tile_12x32, 12, 32}, {"14x32", tile_14x32, 14, 32}, {"6x64", tile_6x64, 6, 64},
    };
    printf("register tile  GFLOP/s (best of 5, k = %ld, data in L1)\n", k);
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
        printf("%-13s  %.1f\n", tiles[i].name, gflops(tiles[i].f, tiles[i].mr, tiles[i].nr, a, b, c, k));
    return 0;
}
