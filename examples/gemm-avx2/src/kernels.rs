//! A GotoBLAS-style schedule for a 512×512×512 f32 GEMM on AVX2.

morello::kernel! {
    /// `out = lhs · rhs` for 512×512 row-major f32 matrices.
    ///
    /// The schedule packs `rhs` into 16-column strips, walks `k` in blocks of 256 so one strip
    /// (16 KiB) stays in L1, and computes 6×16 output tiles in 12 vector registers with
    /// broadcast-vector multiply-adds (the register tile of paper Figure 1). Synthesis fills in
    /// the packing copy, the zeroing of `out`, the register loads and stores, and the 2-row
    /// boundary (512 = 85·6 + 2).
    pub fn gemm512(Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        move_param(1, GL, [0, 2, 1, 2 p16]);
        tile([1, 512, 256, 512]);
        tile([1, 512, 256, 16]);
        move_param(1, L1);
        tile([1, 6, 256, 16]);
        move_param(0, L1);
        move_param(2, L1);
        move_param(2, VRF, row_major, v8);
        tile([1, 6, 1, 16]);
        move_param(1, VRF, row_major, v8);
        tile([1, 1, 1, 16]);
        select(BroadcastVecMultAdd);
        synthesize_all;
    }
}
