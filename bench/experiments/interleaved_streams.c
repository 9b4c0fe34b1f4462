/* How fast does one core read a large buffer when a loop continues several streams at once?
 * The 64 MiB buffer is split into S equal regions (the runs: rows of a matrix, or panels of
 * a packed one), and each step of the loop reads the next P bytes of every region in turn, as
 * a loop over tiles that cut each run into pieces does. S = 1 is a plain sequential read.
 * Eight copies (512 MiB) are cycled so that every pass reads DRAM; prints the median GB/s of
 * 9 passes per (S, P).
 *
 *   gcc -O3 -mavx512f bench/experiments/interleaved_streams.c -o /tmp/interleaved_streams
 *   taskset -c 1 /tmp/interleaved_streams
 *
 * Measured on a Zen 4 VM (2026-11-25): 8 KiB pieces ran at 28.7 GB/s for S = 1, 24.3 for
 * S = 8, 10.6 for S = 16 and 10.7 for S = 32 (see StreamCost in morello-core/src/target.rs).
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

#define BYTES (64ul << 20)
#define COPIES 8
#define PASSES 9

static __m512 read_interleaved(const char *buf, size_t streams, size_t piece) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    size_t region = BYTES / streams;
    for (size_t offset = 0; offset < region; offset += piece) {
        for (size_t s = 0; s < streams; s++) {
            const char *p = buf + s * region + offset;
            for (size_t i = 0; i < piece; i += 256) {
                acc0 = _mm512_add_ps(acc0, _mm512_load_ps((const float *)(p + i)));
                acc1 = _mm512_add_ps(acc1, _mm512_load_ps((const float *)(p + i + 64)));
                acc2 = _mm512_add_ps(acc2, _mm512_load_ps((const float *)(p + i + 128)));
                acc3 = _mm512_add_ps(acc3, _mm512_load_ps((const float *)(p + i + 192)));
            }
        }
    }
    return _mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3));
}

int main(void) {
    char *buf = aligned_alloc(4096, BYTES * COPIES);
    if (!buf) return 1;
    for (size_t i = 0; i < BYTES * COPIES; i += sizeof(float)) *(float *)(buf + i) = 1.0f;
    const size_t streams[] = {1, 2, 4, 8, 16, 32, 64};
    const size_t pieces[] = {1024, 4096, 8192, 16384, 65536};
    const size_t n_streams = sizeof streams / sizeof *streams, n_pieces = sizeof pieces / sizeof *pieces;
    printf("GB/s    ");
    for (size_t p = 0; p < n_pieces; p++) printf("%8zu B", pieces[p]);
    printf("\n");
    float sink = 0;
    for (size_t s = 0; s < n_streams; s++) {
        printf("S = %-4zu", streams[s]);
        for (size_t p = 0; p < n_pieces; p++) {
            double t[PASSES];
            for (int r = 0; r < PASSES; r++) {
                double start = now();
                __m512 v = read_interleaved(buf + (r % COPIES) * BYTES, streams[s], pieces[p]);
                t[r] = now() - start;
                sink += v[0];
            }
            qsort(t, PASSES, sizeof *t, by_value);
            printf("%10.1f", BYTES / t[PASSES / 2] / 1e9);
        }
        printf("\n");
    }
    fprintf(stderr, "(checksum %g)\n", sink);
    free(buf);
    return 0;
}
