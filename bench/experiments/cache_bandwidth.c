/* How fast does one core read data that L2, L3 or only memory holds? The weights of global
 * memory's lines in the cost model (`morello-core/src/target.rs`: memory, L3, L2) follow the
 * ratios of these times. Each size is read again and again with 512-bit loads (four
 * independent sums, so the loads are not serialised); the first pass warms the caches. The
 * largest size, 256 MiB, is far past any cache, so every pass reads memory. Prints the median
 * of 15 passes per size: GB/s and nanoseconds per 64-byte line.
 *
 *   gcc -O2 -mavx512f bench/experiments/cache_bandwidth.c -o /tmp/cache_bandwidth
 *   taskset -c 1 /tmp/cache_bandwidth
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

#define PASSES 15

static float read_all(const float *p, size_t floats) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < floats; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

int main(void) {
    const size_t kib[] = {16, 256, 512, 4096, 8192, 12288, 16384, 24576, 262144};
    const size_t most = 262144 * 1024;
    float *buffer = aligned_alloc(64, most);
    for (size_t i = 0; i < most / 4; i++) buffer[i] = (float)(i & 255);
    volatile float sink = 0;
    for (size_t s = 0; s < sizeof kib / sizeof kib[0]; s++) {
        size_t bytes = kib[s] * 1024;
        /* Small sizes are read many times per timing so that the clock's resolution is no issue. */
        size_t repeats = bytes >= (64u << 20) ? 1 : (64u << 20) / bytes;
        double times[PASSES];
        sink += read_all(buffer, bytes / 4);
        for (int p = 0; p < PASSES; p++) {
            double t0 = now();
            for (size_t r = 0; r < repeats; r++) sink += read_all(buffer, bytes / 4);
            times[p] = (now() - t0) / repeats;
        }
        qsort(times, PASSES, sizeof times[0], by_value);
        double t = times[PASSES / 2];
        printf("%8zu KiB  %7.1f GB/s  %6.3f ns/line\n", kib[s], bytes / t * 1e-9, t / (bytes / 64) * 1e9);
    }
    return sink == 12345.0f;
}
