fn main() {
    let _ = morello_macros::spec!(Matmul(1x4x8x16, (f32, GL, row_major, paged), (f32, GL), (f32, GL)));
}
