fn main() {
    let _ = morello_macros::spec!(Move(1x4x20, (f32, GL), (f32, GL, [0, 2, 1, 2 p16])));
}
