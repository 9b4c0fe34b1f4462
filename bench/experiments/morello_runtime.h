/* The runtime argument every Morello kernel takes (as the generated C declares it, under the
 * same guard): the harnesses that call kernels from `morello-db synthesize --emit-c` pass a
 * serial one, `{0, 1}`. */
#ifndef MORELLO_EXPERIMENTS_RUNTIME_H
#define MORELLO_EXPERIMENTS_RUNTIME_H

#include <stdint.h>

#define MORELLO_RUNTIME_DEFINED
typedef struct morello_runtime {
    void (*parallel_for)(const struct morello_runtime *rt, int64_t n, void (*task)(void *ctx, int64_t i), void *ctx);
    int32_t max_threads;
} morello_runtime;

#endif
