fn main() {
    let _ = morello_macros::schedule!(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)), {
        tile([1, 2, 2, 4]);
    });
}
