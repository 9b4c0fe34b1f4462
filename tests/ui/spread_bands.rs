fn main() {
    let _ = morello_macros::schedule!(Matmul(1x1x16x64, (f32, GL), (f32, GL), (f32, GL)), {
        to_accum;
        spread(3);
    });
}
