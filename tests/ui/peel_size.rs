fn main() {
    let _ = morello_macros::schedule!(Matmul(1x4x8x4, (f32, GL), (f32, GL), (f32, GL)), {
        peel(8);
    });
}
