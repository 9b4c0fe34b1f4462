//! Wholly searched kernels for the large GEMMs on the AVX2 target, found in the narrowed search
//! space (`morello_core::search::SearchSpace::FixedOutputLayouts`: no relayouts of the output
//! within global memory), which `build.rs` chooses for this file alone. Under cost model 8 the
//! exact search of the serial 2048³ Spec on AVX-512 took 86 s on two threads of the development
//! VM, the narrowed one 34 s for the same optimum (under model 5: over 20 minutes, and 90 s for a
//! cost 0.21% above the optimum). On AVX2 under cost model 16 the six Specs below still take
//! 2 h 13 min of search on two threads of a Zen 3 VM (`bench/README.md`, "The wholly searched
//! AVX2 1024³ and 2048³ kernels"); `MORELLO_BENCH_NARROWED=skip` leaves them out. No
//! schedule: everything here is the search's choice, the parallel loops of the Specs not marked
//! `serial` included; only the layouts of prepacked operands are chosen by hand.
//! `kernels_narrowed_avx512.rs` holds the same Specs for the other target.

morello::kernel! {
    /// `c = a · b`, 1024×1024×1024 f32, wholly searched in the narrowed space.
    #[target(avx2)]
    pub fn gemm1024_narrowed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 2048×2048×2048 f32, wholly searched in the narrowed space.
    #[target(avx2)]
    pub fn gemm2048_narrowed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b` as `gemm1024_narrowed`, with `b` prepacked in panels of 64 columns
    /// (`[2, 1, 2 p64]`: element `(p, j)` at `(j / 64)·64·1024 + 64p + j % 64`), as an inference
    /// engine packs its weights once: a 64-column register block then reads one contiguous
    /// panel. The layout is chosen by hand, the kernel wholly searched in the narrowed space.
    #[target(avx2)]
    pub fn gemm1024_panels(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL, [2, 1, 2 p64]), (f32, GL), serial));

    /// `c = a · b` as `gemm2048_narrowed`, with `b` prepacked in panels of 64 columns, like
    /// `gemm1024_panels`.
    #[target(avx2)]
    pub fn gemm2048_panels(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL, [2, 1, 2 p64]), (f32, GL), serial));

    /// `c = a · b`, 1024×1024×1024 f32 on several threads, wholly searched in the narrowed
    /// space: the search places the parallel loop.
    #[target(avx2)]
    pub fn gemm1024_parallel_narrowed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL)));

    /// `c = a · b`, 2048×2048×2048 f32 on several threads, wholly searched in the narrowed
    /// space.
    #[target(avx2)]
    pub fn gemm2048_parallel_narrowed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL)));
}
