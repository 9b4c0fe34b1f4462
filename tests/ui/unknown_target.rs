morello::kernel! {
    #[target(avx1024)]
    pub fn k(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        synthesize_all;
    }
}

fn main() {}
