morello::kernel! {
    pub fn k(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 30000, 1073741824]);
}

fn main() {}
