fn main() { let _ = morello_macros::spec!(Compose(1x2, (f32, GL))); }
