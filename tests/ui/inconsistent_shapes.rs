morello::kernel! {
    pub fn k(Matmul(1x4x8x16, (1x4x8, f32, GL), (1x8x8, f32, GL), (f32, GL)));
}

fn main() {}
