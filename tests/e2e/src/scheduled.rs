//! Kernels scheduled by hand, completed by synthesis.

morello::kernel! {
    /// Paper Figure 1, with register-level parameters.
    pub fn fig1(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial))
    schedule {
        tile([1, 1, 1, 16]);
        move_param(2, VRF, row_major, v8);
        subschedule([0]) { select(VectorAssign); }
        subschedule([1]) { select(BroadcastVecMultAdd); }
        subschedule([2]) { select(VectorAssign); }
    }

    /// A register-tiled GEMM with a non-dividing row tile (boundary bodies).
    pub fn gemm_tiled(Matmul(1x10x32x32, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 4, 32, 16]);
        move_param(0, L1);
        move_param(1, L1);
        move_param(2, L1);
        move_param(2, VRF, row_major, v8);
        split(1);
        move_param(1, VRF, row_major, v8);
        tile([1, 1, 1, 16]);
        select(BroadcastVecMultAdd);
        synthesize_all;
    }
}
