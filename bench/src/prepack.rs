//! Matrices packed once into the layout a kernel's Spec declares for them, as an inference
//! engine packs its weights when it loads them.

use morello_core::spec::Spec;

/// `b`, the rhs of a Matmul held row-major, rearranged into the buffer order the rhs of
/// `spec_text` (a kernel's `*_SPEC`) declares. Each element goes where that layout puts it
/// ([`morello_core::layout::Layout::buffer_index`]), so the packing follows whatever layout the
/// kernel was synthesized for.
pub fn pack_rhs<T: Copy + Default>(b: &[T], spec_text: &str) -> Vec<T> {
    let spec: Spec = spec_text.parse().unwrap_or_else(|e| panic!("{spec_text}: {e}"));
    let rhs = spec.operand(1);
    let &[batch, k, n] = rhs.shape() else { panic!("{spec_text}: the rhs of a Matmul is b×k×n") };
    assert!(batch == 1 && b.len() == (k * n) as usize, "{spec_text}: b is not its {k}×{n} rhs");
    let mut packed = vec![T::default(); b.len()];
    for p in 0..k {
        for j in 0..n {
            let at = rhs.layout().buffer_index(rhs.shape(), &[0u64, u64::from(p), u64::from(j)]);
            packed[at as usize] = b[(p * n + j) as usize];
        }
    }
    packed
}
