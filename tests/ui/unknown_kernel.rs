morello::kernel! {
    pub fn k(MatmulAccum(1x1x1x16, (f32, RF), (f32, VRF, row_major, v8), (f32, VRF, row_major, v8)))
    schedule {
        select(VectorMove);
    }
}

fn main() {}
