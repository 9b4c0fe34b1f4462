fn main() {
    let _ = morello_macros::spec!(Compose(
        [Matmul(1x4x4x4), MatmulAccum(1x4x4x4) -> f32],
        (f32, GL), (f32, GL), (f32, GL), (f32, GL), (f32, GL)
    ));
}
