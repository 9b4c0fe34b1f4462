//! Kernels implemented entirely by synthesis.

morello::kernel! {
    /// A small f32 matrix multiplication.
    pub fn matmul_f32(Matmul(1x4x8x16, (f32, GL), (f32, GL), (f32, GL)));

    /// u32 with sizes that no power-of-two tile divides: exercises boundary regions and
    /// wrapping integer arithmetic.
    pub fn matmul_u32_odd(Matmul(1x3x5x7, (u32, GL), (u32, GL), (u32, GL)));

    /// Accumulates into the output.
    pub fn matmul_accum(MatmulAccum(1x2x4x8, (f32, GL), (f32, GL), (f32, GL)));

    /// A transposing copy.
    pub fn transpose(Move(8x16, (f32, GL, row_major), (f32, GL, col_major)));

    /// Packs a matrix into 8-wide column strips.
    pub fn pack_strips(Move(1x4x16, (f32, GL, row_major), (f32, GL, [0, 2, 1, 2 p8])));

    /// Zeroes a buffer.
    pub fn zero(FillZero(16x16, (u32, GL)));
}
