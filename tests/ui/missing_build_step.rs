morello::kernel! {
    pub fn k(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));
}

fn main() {}
