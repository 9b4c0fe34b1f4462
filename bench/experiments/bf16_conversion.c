/* Is the bf16 vector-matrix product 1×2048×16384 with a row-major matrix held back by the
 * instructions that widen bf16 to f32? Three loops read the same 64 MiB of bf16, 8 rows of `b`
 * at a time against 128 columns of `c` held in registers:
 *
 *   widen:    Morello's conversion today: `vpmovzxwd` of 16 bf16 and a shift (`vpslld`) per
 *             f32 register, then an FMA (3 instructions per 16 products).
 *   evenodd:  one 64-byte load of 32 bf16 per step; `vpslld` gives the even columns as f32,
 *             `vpandd` the odd ones; one FMA each into accumulators that hold even and odd
 *             columns apart, interleaved with `vpermt2ps` when `c` is stored (2.5
 *             instructions per 16 products).
 *   panels:   evenodd on the matrix packed in panels of 128 columns, each panel row after row:
 *             one sequential stream instead of 8.
 *
 * "evenodd-spread" is evenodd with the 8 rows of each block taken one from each of 8 bands of
 * 256 consecutive rows (rows r, 256 + r, ..., 1792 + r for block r): each of the 8 streams then
 * continues where the previous block left it (a band is 8 MiB in one piece), as in the
 * read-ceiling loop of `bench/src/machine.rs`, where evenodd's consecutive rows start 8 new
 * streams every 256 KiB.
 *
 * "evenodd+pf" adds a software prefetch 1 KiB ahead along each row (into the next block of
 * rows at a row's end), and "pairdot" is evenodd with `vdpbf16ps` (AVX512-BF16) for the shift,
 * mask and FMAs. Each loop is checked against an f64 reference, then all are timed in
 * turns (21 rounds, 8 copies of the matrix cycled so that every call reads DRAM); prints the
 * median, lowest and highest GFLOP/s (GFLOP/s = GB/s of matrix read, 2 flops per 2 bytes).
 *
 *   gcc -O3 -march=native -I bench/experiments bench/experiments/bf16_conversion.c \
 *       -o /tmp/bf16_conversion -lm
 *   taskset -c 1 /tmp/bf16_conversion
 *
 * Measured on the Zen 5 VM (2026-11-27, four runs): widen 23.5–24.1 GFLOP/s, evenodd 33.0–34.0,
 * evenodd+pf 27.5–27.9, panels 39.2–40.6; two later runs with pairdot: pairdot 32.9 and 33.0,
 * evenodd 32.7 and 33.4. A shuffle per step undoes the gain: interleave 23.1, unpack 22.2,
 * halves 23.5 (evenodd 33.4 in the same run). With evenodd's step (128 columns, 4 loads) widened
 * to 256 columns (8 lines of each row a step) it ran 26.2–26.4, narrowed to 64 columns 32.3;
 * with ROWS 4, 16 and 32 instead of 8, 27.5, 25.3 and 22.2. Three runs with evenodd-spread
 * (2026-11-27, a slower phase of the VM): evenodd 27.9 / 27.9 / 28.8, evenodd-spread 37.3 / 35.4
 * / 36.8, panels 36.9 / 37.7 / 37.9: rows taken from 8 bands read as fast as the packed matrix.
 * With 2 loads of each row a step (-DLOADS=2), two runs: evenodd 31.0 / 31.3, evenodd-spread
 * 34.7 / 35.6; with 4 rows, so 4 bands (-DROWS=4): evenodd 29.5 / 29.8, evenodd-spread 39.7 / 38.9.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define K 2048
#define N 16384
#define ROWS 8
#define COPIES 8
#define ROUNDS 21
#define PREFETCH 512 /* bf16 elements: 1 KiB */
#ifndef LOADS
#define LOADS 4 /* evenodd's 64-byte loads of each row a step (lines of each row a step) */
#endif

static float widen_one(uint16_t x) {
    uint32_t bits = (uint32_t)x << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void widen(const uint16_t *a, const uint16_t *b, float *c) {
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 128) {
            __m512 acc[8];
            for (int v = 0; v < 8; v++) acc[v] = _mm512_load_ps(c + j + 16 * v);
            for (int r = 0; r < ROWS; r++) {
                const uint16_t *row = b + (long)(k0 + r) * N + j;
                const __m512 s = _mm512_set1_ps(widen_one(a[k0 + r]));
                for (int v = 0; v < 8; v++) {
                    const __m256i x = _mm256_load_si256((const __m256i *)(row + 16 * v));
                    const __m512 f = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
                    acc[v] = _mm512_fmadd_ps(s, f, acc[v]);
                }
            }
            for (int v = 0; v < 8; v++) _mm512_store_ps(c + j + 16 * v, acc[v]);
        }
    }
}

static void evenodd(const uint16_t *a, const uint16_t *b, float *c, int prefetch, int spread) {
    const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i low_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i high_half = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 32 * LOADS) {
            __m512 even[LOADS], odd[LOADS];
            for (int v = 0; v < LOADS; v++) {
                const __m512 lo = _mm512_load_ps(c + j + 32 * v), hi = _mm512_load_ps(c + j + 32 * v + 16);
                even[v] = _mm512_permutex2var_ps(lo, evens, hi);
                odd[v] = _mm512_permutex2var_ps(lo, odds, hi);
            }
            for (int r = 0; r < ROWS; r++) {
                /* Spread: the ROWS rows of a block lie K / ROWS rows apart, one from each band. */
                const int k = spread ? k0 / ROWS + r * (K / ROWS) : k0 + r;
                const uint16_t *row = b + (long)k * N + j;
                if (prefetch && (j + PREFETCH < N || k0 + ROWS < K)) {
                    const uint16_t *ahead = j + PREFETCH < N ? row + PREFETCH : b + (long)(k0 + ROWS + r) * N + (j + PREFETCH - N);
                    for (int v = 0; v < 4; v++) _mm_prefetch((const char *)(ahead + 32 * v), _MM_HINT_T0);
                }
                const __m512 s = _mm512_set1_ps(widen_one(a[k]));
                for (int v = 0; v < LOADS; v++) {
                    const __m512i x = _mm512_load_si512((const void *)(row + 32 * v));
                    even[v] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)), even[v]);
                    odd[v] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_and_si512(x, high)), odd[v]);
                }
            }
            for (int v = 0; v < LOADS; v++) {
                _mm512_store_ps(c + j + 32 * v, _mm512_permutex2var_ps(even[v], low_half, odd[v]));
                _mm512_store_ps(c + j + 32 * v + 16, _mm512_permutex2var_ps(even[v], high_half, odd[v]));
            }
        }
    }
}

/* evenodd with AVX512-BF16's `vdpbf16ps` in place of the shift, mask and FMAs: each 32-bit lane
 * of a row piece is a pair of columns, multiplied by the pair (a, 0) for the even column and
 * (0, a) for the odd one. */
static void pairdot(const uint16_t *a, const uint16_t *b, float *c) {
    const __m512i low_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i high_half = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 128) {
            __m512 even[4], odd[4];
            for (int v = 0; v < 4; v++) even[v] = odd[v] = _mm512_setzero_ps();
            for (int r = 0; r < ROWS; r++) {
                const uint16_t *row = b + (long)(k0 + r) * N + j;
                const __m512bh to_even = (__m512bh)_mm512_set1_epi32(a[k0 + r]);
                const __m512bh to_odd = (__m512bh)_mm512_set1_epi32((int)((uint32_t)a[k0 + r] << 16));
                for (int v = 0; v < 4; v++) {
                    __m512bh x;
                    memcpy(&x, row + 32 * v, sizeof x);
                    even[v] = _mm512_dpbf16_ps(even[v], x, to_even);
                    odd[v] = _mm512_dpbf16_ps(odd[v], x, to_odd);
                }
            }
            for (int v = 0; v < 4; v++) {
                float *out = c + j + 32 * v;
                _mm512_store_ps(out, _mm512_add_ps(_mm512_load_ps(out), _mm512_permutex2var_ps(even[v], low_half, odd[v])));
                _mm512_store_ps(out + 16, _mm512_add_ps(_mm512_load_ps(out + 16), _mm512_permutex2var_ps(even[v], high_half, odd[v])));
            }
        }
    }
}

/* The shuffle-per-step forms, each with standard-order accumulators: "interleave" shifts and
 * masks as evenodd, then interleaves the two with `vpermt2ps` before the FMAs; "unpack" widens
 * with `vpunpck[lh]wd` against zero and reorders with `vpermt2ps`; "halves" loads 64 bytes and
 * widens each half with `vpmovzxwd`. */
static void interleave(const uint16_t *a, const uint16_t *b, float *c) {
    const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
    const __m512i low_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i high_half = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 128) {
            __m512 acc[8];
            for (int v = 0; v < 8; v++) acc[v] = _mm512_load_ps(c + j + 16 * v);
            for (int r = 0; r < ROWS; r++) {
                const uint16_t *row = b + (long)(k0 + r) * N + j;
                const __m512 s = _mm512_set1_ps(widen_one(a[k0 + r]));
                for (int v = 0; v < 4; v++) {
                    const __m512i x = _mm512_load_si512((const void *)(row + 32 * v));
                    const __m512 e = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)), o = _mm512_castsi512_ps(_mm512_and_si512(x, high));
                    acc[2 * v] = _mm512_fmadd_ps(s, _mm512_permutex2var_ps(e, low_half, o), acc[2 * v]);
                    acc[2 * v + 1] = _mm512_fmadd_ps(s, _mm512_permutex2var_ps(e, high_half, o), acc[2 * v + 1]);
                }
            }
            for (int v = 0; v < 8; v++) _mm512_store_ps(c + j + 16 * v, acc[v]);
        }
    }
}
static void unpack(const uint16_t *a, const uint16_t *b, float *c) {
    const __m512i low_half = _mm512_setr_epi32(0,1,2,3,16,17,18,19,4,5,6,7,20,21,22,23);
    const __m512i high_half = _mm512_setr_epi32(8,9,10,11,24,25,26,27,12,13,14,15,28,29,30,31);
    const __m512i zero = _mm512_setzero_si512();
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 128) {
            __m512 acc[8];
            for (int v = 0; v < 8; v++) acc[v] = _mm512_load_ps(c + j + 16 * v);
            for (int r = 0; r < ROWS; r++) {
                const uint16_t *row = b + (long)(k0 + r) * N + j;
                const __m512 s = _mm512_set1_ps(widen_one(a[k0 + r]));
                for (int v = 0; v < 4; v++) {
                    const __m512i x = _mm512_load_si512((const void *)(row + 32 * v));
                    const __m512 l = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, x)), h = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, x));
                    acc[2 * v] = _mm512_fmadd_ps(s, _mm512_permutex2var_ps(l, low_half, h), acc[2 * v]);
                    acc[2 * v + 1] = _mm512_fmadd_ps(s, _mm512_permutex2var_ps(l, high_half, h), acc[2 * v + 1]);
                }
            }
            for (int v = 0; v < 8; v++) _mm512_store_ps(c + j + 16 * v, acc[v]);
        }
    }
}
static void halves(const uint16_t *a, const uint16_t *b, float *c) {
    memset(c, 0, N * sizeof *c);
    for (int k0 = 0; k0 < K; k0 += ROWS) {
        for (int j = 0; j < N; j += 128) {
            __m512 acc[8];
            for (int v = 0; v < 8; v++) acc[v] = _mm512_load_ps(c + j + 16 * v);
            for (int r = 0; r < ROWS; r++) {
                const uint16_t *row = b + (long)(k0 + r) * N + j;
                const __m512 s = _mm512_set1_ps(widen_one(a[k0 + r]));
                for (int v = 0; v < 4; v++) {
                    const __m512i x = _mm512_load_si512((const void *)(row + 32 * v));
                    acc[2 * v] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(x)),16)), acc[2 * v]);
                    acc[2 * v + 1] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(x,1)),16)), acc[2 * v + 1]);
                }
            }
            for (int v = 0; v < 8; v++) _mm512_store_ps(c + j + 16 * v, acc[v]);
        }
    }
}
static void panels(const uint16_t *a, const uint16_t *packed, float *c) {
    const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
    for (int j = 0; j < N; j += 128) {
        __m512 even[4], odd[4];
        for (int v = 0; v < 4; v++) even[v] = odd[v] = _mm512_setzero_ps();
        const uint16_t *panel = packed + (long)j * K;
        for (int r = 0; r < K; r++) {
            const __m512 s = _mm512_set1_ps(widen_one(a[r]));
            for (int v = 0; v < 4; v++) {
                const __m512i x = _mm512_load_si512((const void *)(panel + (long)r * 128 + 32 * v));
                even[v] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)), even[v]);
                odd[v] = _mm512_fmadd_ps(s, _mm512_castsi512_ps(_mm512_and_si512(x, high)), odd[v]);
            }
        }
        for (int v = 0; v < 4; v++) {
            float e[16], o[16];
            _mm512_storeu_ps(e, even[v]);
            _mm512_storeu_ps(o, odd[v]);
            for (int l = 0; l < 16; l++) c[j + 32 * v + 2 * l] = e[l], c[j + 32 * v + 2 * l + 1] = o[l];
        }
    }
}

enum { WIDEN, EVENODD, EVENODD_SPREAD, EVENODD_PREFETCH, PAIRDOT, INTERLEAVE, UNPACK, HALVES, PANELS, LOOPS };
static const char *names[LOOPS] = {"widen", "evenodd", "evenodd-spread", "evenodd+pf", "pairdot", "interleave", "unpack", "halves", "panels"};

static void call(int loop, const uint16_t *a, const uint16_t *rows, const uint16_t *packed, float *c) {
    switch (loop) {
    case WIDEN: widen(a, rows, c); break;
    case EVENODD: evenodd(a, rows, c, 0, 0); break;
    case EVENODD_SPREAD: evenodd(a, rows, c, 0, 1); break;
    case EVENODD_PREFETCH: evenodd(a, rows, c, 1, 0); break;
    case PAIRDOT: pairdot(a, rows, c); break;
    case INTERLEAVE: interleave(a, rows, c); break;
    case UNPACK: unpack(a, rows, c); break;
    case HALVES: halves(a, rows, c); break;
    default: panels(a, packed, c); break;
    }
}

static uint16_t to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (uint16_t)(bits >> 16);
}

int main(void) {
    uint16_t *a = aligned_alloc(64, K * sizeof *a), *rows[COPIES], *packed[COPIES];
    float *c = aligned_alloc(64, N * sizeof *c);
    double *expected = malloc(N * sizeof *expected);
    for (int i = 0; i < K; i++) a[i] = to_bf16((float)(i * 7 % 13 - 6) / 8);
    for (int copy = 0; copy < COPIES; copy++) {
        rows[copy] = aligned_alloc(4096, (size_t)K * N * sizeof **rows);
        packed[copy] = aligned_alloc(4096, (size_t)K * N * sizeof **packed);
        for (long i = 0; i < (long)K * N; i++) rows[copy][i] = to_bf16((float)(i * 5 % 11 - 5) / 8);
        for (int j = 0; j < N; j += 128)
            for (int r = 0; r < K; r++) memcpy(packed[copy] + (long)j * K + r * 128, rows[copy] + (long)r * N + j, 256);
    }
    for (int j = 0; j < N; j++) {
        double sum = 0;
        for (int k = 0; k < K; k++) sum += (double)widen_one(a[k]) * widen_one(rows[0][(long)k * N + j]);
        expected[j] = sum;
    }
    for (int loop = 0; loop < LOOPS; loop++) {
        call(loop, a, rows[0], packed[0], c);
        for (int j = 0; j < N; j++) {
            if (fabs(c[j] - expected[j]) > 1e-3 * (1 + fabs(expected[j]))) {
                printf("%s: c[%d] = %g, expected %g\n", names[loop], j, c[j], expected[j]);
                return 1;
            }
        }
    }
    static double seconds[LOOPS][ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int loop = 0; loop < LOOPS; loop++) {
            const int copy = (round * LOOPS + loop) % COPIES;
            const double start = now();
            call(loop, a, rows[copy], packed[copy], c);
            seconds[loop][round] = now() - start;
        }
    }
    for (int loop = 0; loop < LOOPS; loop++) {
        qsort(seconds[loop], ROUNDS, sizeof **seconds, by_value);
        const double flops = 2.0 * K * N;
        printf("%-11s median %5.1f GFLOP/s (lowest %5.1f, highest %5.1f)\n", names[loop], flops / seconds[loop][ROUNDS / 2] / 1e9,
               flops / seconds[loop][ROUNDS - 1] / 1e9, flops / seconds[loop][0] / 1e9);
    }
    return 0;
}
