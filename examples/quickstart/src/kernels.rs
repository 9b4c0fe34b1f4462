//! One GEMM, found wholly by the search for each x86 target: the run uses the AVX-512 kernel
//! where the CPU has its features, and the AVX2 kernel elsewhere.

morello::kernel! {
    /// `out = lhs · rhs` for 128 tokens of a 768-wide transformer layer (a BERT-base
    /// projection), f32, row-major, on one thread.
    #[target(avx512)]
    pub fn projection_avx512(Matmul(1x128x768x768, (f32, GL), (f32, GL), (f32, GL), serial));

    /// The same for AVX2 and FMA.
    #[target(avx2)]
    pub fn projection_avx2(Matmul(1x128x768x768, (f32, GL), (f32, GL), (f32, GL), serial));
}
