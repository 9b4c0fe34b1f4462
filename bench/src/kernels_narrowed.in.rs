// Wholly searched kernels for the large GEMMs, found in the narrowed search space
// (`morello_core::search::SearchSpace::FixedOutputLayouts`: no relayouts of the output within
// global memory), which `build.rs` chooses for this file alone: it holds the full space's
// optimum of these Specs and searches it several times faster. On AVX2 the six Specs below
// still take hours to search; `MORELLO_BENCH_NARROWED=skip` leaves them out. No schedule:
// everything here is the search's choice, the parallel loops of the Specs not marked `serial`
// included; only the layouts of prepacked operands are chosen by hand. `build.rs` writes this
// file out for the benchmark's target like `kernels.in.rs`.

morello::kernel! {
    /// `c = a · b`, 1024×1024×1024 f32, wholly searched in the narrowed space.
    #[target(@target@)]
    pub fn gemm1024_narrowed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 2048×2048×2048 f32, wholly searched in the narrowed space.
    #[target(@target@)]
    pub fn gemm2048_narrowed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b` as `gemm1024_narrowed`, with `b` prepacked in panels of 64 columns
    /// (`[2, 1, 2 p64]`: element `(p, j)` at `(j / 64)·64·1024 + 64p + j % 64`), as an inference
    /// engine packs its weights once: a 64-column register block then reads one contiguous
    /// panel. The layout is chosen by hand, the kernel wholly searched in the narrowed space.
    #[target(@target@)]
    pub fn gemm1024_panels(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL, [2, 1, 2 p64]), (f32, GL), serial));

    /// `c = a · b` as `gemm2048_narrowed`, with `b` prepacked in panels of 64 columns, like
    /// `gemm1024_panels`.
    #[target(@target@)]
    pub fn gemm2048_panels(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL, [2, 1, 2 p64]), (f32, GL), serial));

    /// `c = a · b`, 1024×1024×1024 f32 on several threads, wholly searched in the narrowed
    /// space: the search places the parallel loop.
    #[target(@target@)]
    pub fn gemm1024_parallel_narrowed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL)));

    /// `c = a · b`, 2048×2048×2048 f32 on several threads, wholly searched in the narrowed
    /// space.
    #[target(@target@)]
    pub fn gemm2048_parallel_narrowed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL)));
}
