//! A kernel found entirely by synthesis.

morello::kernel! {
    /// `out = lhs · rhs` for 16×16 row-major f32 matrices, synthesized without a schedule.
    pub fn matmul16(Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL)));
}
