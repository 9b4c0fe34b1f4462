fn main() {
    let _ = morello_macros::schedule!(Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial), {
        tile([1, 4, 8, 8], parallel);
    });
}
