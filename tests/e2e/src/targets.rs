//! Kernels for the AVX-512 and portable targets, and kernels with parallel loops.

morello::kernel! {
    /// Softmax rows with the vectorized `exp`, on AVX-512.
    #[target(avx512)]
    pub fn softmax_avx512(Softmax(2x32, scan=1, (f32, GL), (f32, GL)));

    /// The same Spec on the portable scalar target.
    #[target(portable)]
    pub fn softmax_portable(Softmax(2x32, scan=1, (f32, GL), (f32, GL)));

    /// A bf16 vector-matrix product accumulating in f32, on AVX-512.
    #[target(avx512)]
    pub fn vecmat_bf16(Matmul(1x1x64x32, (bf16, GL), (bf16, GL), (f32, GL)));

    /// A matrix product whose row blocks run on several threads.
    pub fn matmul_parallel(Matmul(1x16x8x8, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        tile([1, 4, 8, 8], parallel);
        synthesize_all;
    }
}
