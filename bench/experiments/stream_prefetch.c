/* Does a software prefetch help the bf16 vector-matrix product 1x2048x16384 read its 64 MiB
 * matrix from DRAM, and how far ahead should it reach? The loops below are written the way
 * Morello's C is (GNU vectors, bf16 widened with vpmovzxwd and a shift, gcc) in two shapes:
 *
 *   rows32: the searched kernel's loops. 32 rows at a time, in strips of 256 columns; the
 *           output strip is loaded and stored around every row.
 *   rows8:  8 rows at a time, strips of 256 columns, the output strip held in registers.
 *
 * each without a prefetch and with one per 64-byte line, DIST bytes further along the row.
 * "read" is a plain sequential read of the matrix, for scale. Eight copies of the matrix
 * (512 MiB) are cycled so that every call reads DRAM. Prints the median of 9 calls.
 *
 *   gcc -O3 -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl bench/experiments/stream_prefetch.c \
 *       -o /tmp/stream_prefetch
 *   taskset -c 1 /tmp/stream_prefetch
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define K 2048
#define N 16384
#define COPIES 8

typedef float vf32 __attribute__((vector_size(64)));
typedef uint16_t vbf16 __attribute__((vector_size(64)));

static float bf16_value(uint16_t x) {
    uint32_t bits = (uint32_t)x << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Lanes 16h..16h+15 of a bf16 vector, widened to f32. */
static inline vf32 widen(vbf16 v, int h) {
    return (vf32)_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64((__m512i)v, h)), 16);
}

/* One row's 256 columns: c[0..256) += a * b[0..256), prefetching `dist` bytes ahead if nonzero. */
static inline void row_strip(vf32 *acc, float a, const uint16_t *b, int dist) {
    for (int j = 0; j < 8; j++) {
        if (dist) __builtin_prefetch((const char *)(b + 32 * j) + dist, 0, 3);
        vbf16 v;
        memcpy(&v, b + 32 * j, 64);
        acc[2 * j] += widen(v, 0) * a;
        acc[2 * j + 1] += widen(v, 1) * a;
    }
}

static void rows32(const uint16_t *a, const uint16_t *b, float *c, int dist) {
    memset(c, 0, N * sizeof(float));
    for (int r = 0; r < K; r += 32)
        for (int s = 0; s < N; s += 256)
            for (int i = r; i < r + 32; i++) {
                vf32 acc[16];
                memcpy(acc, c + s, sizeof acc);
                row_strip(acc, bf16_value(a[i]), b + (size_t)i * N + s, dist);
                memcpy(c + s, acc, sizeof acc);
            }
}

static void rows8(const uint16_t *a, const uint16_t *b, float *c, int dist) {
    memset(c, 0, N * sizeof(float));
    for (int r = 0; r < K; r += 8)
        for (int s = 0; s < N; s += 256) {
            vf32 acc[16];
            memcpy(acc, c + s, sizeof acc);
            for (int i = r; i < r + 8; i++) row_strip(acc, bf16_value(a[i]), b + (size_t)i * N + s, dist);
            memcpy(c + s, acc, sizeof acc);
        }
}

static void read_all(const uint16_t *a, const uint16_t *b, float *c, int dist) {
    (void)a;
    (void)dist;
    __m512i x = _mm512_setzero_si512(), y = x;
    for (size_t i = 0; i < (size_t)K * N; i += 64) {
        x = _mm512_xor_si512(x, _mm512_loadu_si512(b + i));
        y = _mm512_xor_si512(y, _mm512_loadu_si512(b + i + 32));
    }
    _mm512_storeu_si512(c, _mm512_xor_si512(x, y));
}

typedef void (*kernel)(const uint16_t *, const uint16_t *, float *, int);

int main(void) {
    uint16_t *a = aligned_alloc(64, K * sizeof(uint16_t));
    uint16_t *b[COPIES];
    float *c = aligned_alloc(64, N * sizeof(float));
    for (int i = 0; i < K; i++) a[i] = 0x3f80 + i % 7;
    for (int q = 0; q < COPIES; q++) {
        b[q] = aligned_alloc(64, (size_t)K * N * sizeof(uint16_t));
        for (size_t i = 0; i < (size_t)K * N; i++) b[q][i] = 0x3f00 + i % 13;
    }
    struct { const char *name; kernel f; int dist; } runs[] = {
        {"rows32, no prefetch", rows32, 0}, {"rows32, 512 B ahead", rows32, 512},
        {"rows32, 1 KiB ahead", rows32, 1024}, {"rows32, 2 KiB ahead", rows32, 2048},
        {"rows8, no prefetch", rows8, 0}, {"rows8, 512 B ahead", rows8, 512},
        {"rows8, 1 KiB ahead", rows8, 1024}, {"rows8, 2 KiB ahead", rows8, 2048},
        {"sequential read", read_all, 0},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double t[9];
        for (int it = 0; it < 9; it++) {
            double start = now();
            runs[r].f(a, b[it % COPIES], c, runs[r].dist);
            t[it] = now() - start;
        }
        qsort(t, 9, sizeof t[0], by_value);
        double bytes = (double)K * N * sizeof(uint16_t);
        printf("%-22s %5.1f GB/s  %5.1f GFLOP/s\n", runs[r].name, bytes / t[4] / 1e9, 2.0 * K * N / t[4] / 1e9);
    }
    return 0;
}
