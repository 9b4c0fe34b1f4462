/* The oneDNN peer: a matmul primitive with weights reordered once into the layout oneDNN
 * prefers ("prepacked"), behind a small C interface the benchmark calls through FFI.
 * Written against the oneDNN 2.x C API (Debian's libdnnl-dev 2.6). */
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bench_dnnl_matmul {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t matmul;
    dnnl_memory_t src, weights, dst;
    char impl[128];
};

void bench_dnnl_matmul_destroy(struct bench_dnnl_matmul *p);

#define CHECK(call)                                                                          \
    do {                                                                                     \
        dnnl_status_t status_ = (call);                                                      \
        if (status_ != dnnl_success) {                                                       \
            snprintf(err, err_len, "%s failed with status %d", #call, (int)status_);         \
            goto fail;                                                                       \
        }                                                                                    \
    } while (0)

/* Creates `c[m×n] = a[m×k] · b[k×n]`, row-major; a and b are bf16 when `bf16` is nonzero, c is
 * f32. `b` is copied (reordered) now; later calls pass only `a` and `c`. Returns NULL and writes
 * a message to `err` on failure. */
struct bench_dnnl_matmul *bench_dnnl_matmul_create(int64_t m, int64_t k, int64_t n, int bf16, const void *b,
                                                   char *err, size_t err_len) {
    struct bench_dnnl_matmul *p = calloc(1, sizeof *p);
    dnnl_primitive_desc_t pd = NULL, reorder_pd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t user_weights = NULL;
    if (!p) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    dnnl_data_type_t in = bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_dims_t a_dims = {m, k}, b_dims = {k, n}, c_dims = {m, n};
    dnnl_memory_desc_t a_md, b_md, b_any, c_md;
    CHECK(dnnl_engine_create(&p->engine, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&p->stream, p->engine, dnnl_stream_default_flags));
    CHECK(dnnl_memory_desc_init_by_tag(&a_md, 2, a_dims, in, dnnl_ab));
    CHECK(dnnl_memory_desc_init_by_tag(&b_md, 2, b_dims, in, dnnl_ab));
    CHECK(dnnl_memory_desc_init_by_tag(&b_any, 2, b_dims, in, dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&c_md, 2, c_dims, dnnl_f32, dnnl_ab));
    dnnl_matmul_desc_t desc;
    CHECK(dnnl_matmul_desc_init(&desc, &a_md, &b_any, NULL, &c_md));
    CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, p->engine, NULL));
    const char *impl = NULL;
    CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    snprintf(p->impl, sizeof p->impl, "%s", impl ? impl : "?");
    const dnnl_memory_desc_t *packed_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    CHECK(dnnl_memory_create(&user_weights, &b_md, p->engine, (void *)b));
    CHECK(dnnl_memory_create(&p->weights, packed_md, p->engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_reorder_primitive_desc_create(&reorder_pd, &b_md, p->engine, packed_md, p->engine, NULL));
    CHECK(dnnl_primitive_create(&reorder, reorder_pd));
    dnnl_exec_arg_t reorder_args[2] = {{DNNL_ARG_FROM, user_weights}, {DNNL_ARG_TO, p->weights}};
    CHECK(dnnl_primitive_execute(reorder, p->stream, 2, reorder_args));
    CHECK(dnnl_stream_wait(p->stream));
    CHECK(dnnl_primitive_create(&p->matmul, pd));
    CHECK(dnnl_memory_create(&p->src, &a_md, p->engine, DNNL_MEMORY_NONE));
    CHECK(dnnl_memory_create(&p->dst, &c_md, p->engine, DNNL_MEMORY_NONE));
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(reorder_pd);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(user_weights);
    return p;
fail:
    if (reorder) dnnl_primitive_destroy(reorder);
    if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (user_weights) dnnl_memory_destroy(user_weights);
    bench_dnnl_matmul_destroy(p);
    return NULL;
}

/* oneDNN's name for the implementation it chose (for example "brg:avx512_core"). */
const char *bench_dnnl_matmul_impl(const struct bench_dnnl_matmul *p) { return p->impl; }

/* Runs the product on `a` into `c`; returns a oneDNN status (0 is success). */
int bench_dnnl_matmul_run(struct bench_dnnl_matmul *p, const void *a, float *c) {
    dnnl_status_t s;
    if ((s = dnnl_memory_set_data_handle(p->src, (void *)a)) != dnnl_success) return (int)s;
    if ((s = dnnl_memory_set_data_handle(p->dst, c)) != dnnl_success) return (int)s;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, p->dst}};
    if ((s = dnnl_primitive_execute(p->matmul, p->stream, 3, args)) != dnnl_success) return (int)s;
    return (int)dnnl_stream_wait(p->stream);
}

void bench_dnnl_matmul_destroy(struct bench_dnnl_matmul *p) {
    if (!p) return;
    if (p->matmul) dnnl_primitive_destroy(p->matmul);
    if (p->src) dnnl_memory_destroy(p->src);
    if (p->weights) dnnl_memory_destroy(p->weights);
    if (p->dst) dnnl_memory_destroy(p->dst);
    if (p->stream) dnnl_stream_destroy(p->stream);
    if (p->engine) dnnl_engine_destroy(p->engine);
    free(p);
}

/* The OpenMP thread count oneDNN's CPU runtime uses for later primitives. */
void bench_set_omp_threads(int n) { omp_set_num_threads(n); }
