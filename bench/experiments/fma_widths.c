/* How many f32 FMA instructions per second one core issues at each vector width: 12
 * independent chains of `acc = acc * x + y` in xmm, ymm and zmm registers, twice over. A core
 * with 512-bit FMA units issues zmm FMAs as often as narrower ones; one that splits them onto
 * 256-bit units (Zen 4) issues xmm and ymm FMAs twice as often as zmm ones, so a 4- or 8-lane
 * tail costs half of a 16-lane vector there. The cost model charges every width the same per
 * register.
 *
 *   gcc -O2 -mavx512f -mavx512vl -mfma bench/experiments/fma_widths.c -o /tmp/fma_widths
 *   taskset -c 1 /tmp/fma_widths
 */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include "timing.h"

enum { CHAINS = 12 };
static const long STEPS = 50000000L;

/* The empty asm statements keep each chain in a register and stop the compiler from folding
 * the steps together. */
#define CHAINS_OF(T, SET, FMA, LANES, NAME)                                                     \
    do {                                                                                       \
        T x = SET(1.0000001f), y = SET(0.9999999f);                                            \
        T a0 = SET(0), a1 = SET(1), a2 = SET(2), a3 = SET(3), a4 = SET(4), a5 = SET(5);        \
        T a6 = SET(6), a7 = SET(7), a8 = SET(8), a9 = SET(9), a10 = SET(10), a11 = SET(11);    \
        double start = now();                                                                  \
        for (long s = 0; s < STEPS; s++) {                                                     \
            a0 = FMA(a0, x, y), a1 = FMA(a1, x, y), a2 = FMA(a2, x, y);                        \
            a3 = FMA(a3, x, y), a4 = FMA(a4, x, y), a5 = FMA(a5, x, y);                        \
            a6 = FMA(a6, x, y), a7 = FMA(a7, x, y), a8 = FMA(a8, x, y);                        \
            a9 = FMA(a9, x, y), a10 = FMA(a10, x, y), a11 = FMA(a11, x, y);                    \
            __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5)); \
            __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11)); \
        }                                                                                      \
        double seconds = now() - start;                                                        \
        T sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                   \
        float lanes[16];                                                                       \
        memcpy(lanes, &sum, sizeof(T));                                                        \
        double per_second = CHAINS * STEPS / seconds;                                          \
        printf("%s: %.2f G FMA instructions/s, %.1f GFLOP/s (checksum %g)\n", NAME,            \
               per_second * 1e-9, 2.0 * LANES * per_second * 1e-9, lanes[0]);                  \
    } while (0)

int main(void) {
    for (int round = 0; round < 2; round++) {
        CHAINS_OF(__m128, _mm_set1_ps, _mm_fmadd_ps, 4, "xmm (4 lanes) ");
        CHAINS_OF(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8, "ymm (8 lanes) ");
        CHAINS_OF(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16, "zmm (16 lanes)");
    }
    return 0;
}
