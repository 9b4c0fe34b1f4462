morello::kernel! {
    pub fn k(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        move_param(3, L1);
        synthesize_all;
    }
}

fn main() {}
