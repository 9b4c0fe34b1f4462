morello::kernel! {
    /// An unknown primitive.
    pub fn unknown_primitive(Matmull(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));

    /// A good kernel between bad ones.
    pub fn good(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));

    /// A bad dtype.
    pub fn bad_dtype(Move(4x4, (f32, GL), (f33, GL)));

    /// A bad schedule step.
    pub fn bad_step(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tiles([1, 1, 1, 4]);
        synthesize_all;
    }
}

fn main() {}
