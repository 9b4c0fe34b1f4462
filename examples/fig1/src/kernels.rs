//! Paper Figure 1.

morello::kernel! {
    /// A 1×4×4×16 accumulating matrix multiplication with the left operand in scalar
    /// registers, the right in vector registers and the output in L1, scheduled as in the
    /// paper: tile to rows of 16, move each output row into two 8-lane vector registers, and
    /// use the broadcast-vector multiply-add kernel. Synthesis implements the loads and stores.
    pub fn fig1(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial))
    schedule {
        tile([1, 1, 1, 16]);
        move_param(2, VRF, row_major, v8);
        select(BroadcastVecMultAdd);
        synthesize_all;
    }
}
