morello::kernel! {
    pub fn k(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial))
    schedule {
        tile([1, 1, 1, 16]);
        move_param(2, VRF, row_major, v8);
        subschedule([5]) { select(VectorAssign); }
        synthesize_all;
    }
}

fn main() {}
