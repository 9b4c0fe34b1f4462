morello::kernel! {
    pub fn k(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial))
    schedule {
        tile([1, 8, 1, 16]);
        synthesize_all;
    }
}

fn main() {}
