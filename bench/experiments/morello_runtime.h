/* The runtime argument every Morello kernel takes, for the harnesses that call kernels from
 * `morello-db synthesize --emit-c` (they pass a serial one, `{0, 1}`). The generated C declares
 * it under the same guard, from morello-core/src/codegen/runtime.rs; a unit test there checks
 * that this copy matches. */
#ifndef MORELLO_EXPERIMENTS_RUNTIME_H
#define MORELLO_EXPERIMENTS_RUNTIME_H

#include <stdint.h>

#define MORELLO_RUNTIME_DEFINED
typedef struct morello_runtime {
    void (*parallel_for)(const struct morello_runtime *rt, int64_t n, void (*task)(void *ctx, int64_t i), void *ctx);
    int32_t max_threads;
} morello_runtime;

#endif
