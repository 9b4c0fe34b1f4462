fn main() {
    let _ = morello_macros::schedule!(SoftmaxDenominatorAndMax(1x1000, scan=1, (f32, GL), (f32, GL), (f32, GL)), {
        parallel_split(256, GL);
    });
}
