morello::kernel! {
    pub fn k(Matmul(1x2x2x2, (f32, GL), (f32, GL)));
}

fn main() {}
