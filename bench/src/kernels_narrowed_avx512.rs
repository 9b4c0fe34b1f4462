//! Wholly searched kernels for the large GEMMs on the AVX-512 target, found in the narrowed search
//! space (`morello_core::search::SearchSpace::FixedOutputLayouts`: no relayouts of the output
//! within global memory), which `build.rs` chooses for this file alone. The exact search of
//! these sizes takes 12 minutes (1024³) to over 20 (2048³) on two threads, too long for this
//! crate's build; the narrowed one took 1 to 5 minutes on the development VM, for a model cost at
//! most 0.21% above the optimum (measured at 2048³ on AVX-512; the same optimum up to 512³).
//! No schedule: everything here is the search's choice. `kernels_narrowed_avx2.rs` holds the
//! same Specs for the other target.

morello::kernel! {
    /// `c = a · b`, 1024×1024×1024 f32, wholly searched in the narrowed space.
    #[target(avx512)]
    pub fn gemm1024_narrowed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 2048×2048×2048 f32, wholly searched in the narrowed space.
    #[target(avx512)]
    pub fn gemm2048_narrowed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial));
}
