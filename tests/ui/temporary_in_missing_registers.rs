fn main() {
    let _ = morello_macros::schedule!(#[target(portable)] DivideVecScalar(4x16, scan=1, (f32, GL), (f32, GL)), {
        broadcast_first(VRF, row_major, v4);
    });
}
