//! Matmuls whose operands in registers no kernel can ever consume.
//!
//! Nothing moves out of a register level, and the only rewrites of a Matmul are tiles,
//! `to_accum`, peels (two tiles of the reduction), moves and kernels: so an operand in
//! registers reaches a kernel as a tile of itself, in the same dimension order and vector size,
//! inside a MatmulAccum. Where no
//! MatmulAccum kernel could take any tile of it ([`KernelKind::may_take_register_tiles`]), the
//! Matmul has no implementation at any memory limits. The search would otherwise explore every
//! tiling and move of its other operands before finding that nothing applies, or, under a
//! budget, never find out. The common case is an input moved to vector registers in a layout
//! that no tile of it is a contiguous row of, as the broadcast multiply-add needs.

use crate::kernels::KernelKind;
use crate::primitive::Primitive;
use crate::spec::LogicalSpec;
use crate::target::Target;

/// Whether `spec` is a Matmul with operands in registers that no kernel can consume.
pub(super) fn unusable_registers(spec: &LogicalSpec, target: &Target) -> bool {
    let Some(Primitive::Matmul { .. }) = spec.primitive() else { return false };
    if !spec.operands().iter().any(|t| t.level().is_register_file()) {
        return false;
    }
    let accum = Primitive::Matmul { accum: true };
    !KernelKind::ALL.iter().any(|k| k.implements(accum) && k.may_take_register_tiles(spec, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::layout::Layout;
    use crate::level::Level;
    use crate::rewrite::Action;
    use crate::search::enumerate::dimension_orders;
    use crate::search::{actions, exhaustive};
    use crate::shape::Shape;
    use crate::spec::{Operands, Spec};
    use crate::target::{X86_AVX2, X86_AVX512};
    use crate::tensor::TensorSpec;

    fn logical(text: &str) -> LogicalSpec {
        Spec::parse_for(text, &X86_AVX512).unwrap().logical().clone()
    }

    /// Register operands that rule a Matmul out, each beside a neighbour that does not.
    #[test]
    fn dead_ends_are_told_from_their_neighbours() {
        let cases = [
            // A row-major 1×32 lhs: a tile along m alone is a single element, not a vector.
            ("MatmulAccum(1x1x32x128, (f32, VRF, row_major, v8), (f32, L1, row_major), (f32, L1, row_major))", true),
            // A 32×1 lhs is a column: broadcast against rows of the rhs.
            ("MatmulAccum(1x32x1x128, (f32, VRF, row_major, v8), (f32, L1, row_major), (f32, L1, row_major))", false),
            // Both inputs in vector registers: neither can be the broadcast scalar.
            ("Matmul(1x1x8x8, (f32, VRF, row_major, v8), (f32, VRF, row_major, v8), (f32, L1, row_major))", true),
            ("Matmul(1x1x8x8, (f32, L1, row_major), (f32, VRF, row_major, v8), (f32, L1, row_major))", false),
            // An output in vector registers with both inputs in scalar registers: neither can
            // become the vector operand.
            ("MatmulAccum(1x1x1x8, (f32, RF), (f32, RF), (f32, VRF, row_major, v8))", true),
            ("MatmulAccum(1x1x1x8, (f32, RF), (f32, L1, row_major), (f32, VRF, row_major, v8))", false),
        ];
        for (text, dead) in cases {
            assert_eq!(unusable_registers(&logical(text), &X86_AVX512), dead, "{text}");
        }
    }

    /// No input can become the vector operand: the exhaustive reference agrees, and so does the
    /// search, which answers such a Spec before searching it.
    #[test]
    fn an_output_in_vector_registers_with_scalar_inputs_has_no_implementation() {
        let scalars = "MatmulAccum(1x1x1x8, (f32, RF), (f32, RF), (f32, VRF, row_major, v8))";
        let spec = Spec::new(logical(scalars), X86_AVX512.max_limits());
        assert_eq!(exhaustive::optimal_cost(&spec, &X86_AVX512), None);
        let mut synth = crate::search::Synthesizer::new(&X86_AVX512);
        assert_eq!(synth.optimal_cost(&spec), None);
        assert_eq!(synth.stats().specs_solved, 0, "searched instead of answered at once");
    }

    /// Nested tiles reach tiles of a packed register operand that no single tile does (a tile
    /// inside a strip); the rule looks at single tiles only, which is enough because every
    /// nested tile, and its remainders, must be whole vectors too. Checked against the
    /// exhaustive reference on both sides of the line.
    #[test]
    fn a_packed_register_lhs_is_judged_like_the_exhaustive_reference() {
        let spec = |layout: &str, rows: u32| {
            let text = format!(
                "(MatmulAccum(1x{rows}x2x1, (f32, VRF, {layout}, v4), (f32, L1, row_major), (f32, L1, row_major)), \
                 [64, 512, 32768, 1073741824])"
            );
            Spec::parse_for(&text, &X86_AVX2).unwrap()
        };
        // Strips of 6 rows: no run of whole 4-lane vectors along m.
        let dead = spec("[1, 2, 1 p6]", 12);
        assert!(unusable_registers(dead.logical(), &X86_AVX2));
        assert_eq!(exhaustive::optimal_cost(&dead, &X86_AVX2), None);
        // Strips of 8 rows: two vectors per strip.
        let alive = spec("[1, 2, 1 p8]", 16);
        assert!(!unusable_registers(alive.logical(), &X86_AVX2));
        assert!(exhaustive::optimal_cost(&alive, &X86_AVX2).is_some());
    }

    /// Operand candidates of `shape` and `dtype`: in L1, in RF if a single element, and in
    /// vector registers in every dimension order and vector width that fits.
    fn candidates(shape: &[u32], dtype: Dtype, target: &Target) -> Vec<TensorSpec> {
        let tensor =
            |level, layout, lanes| TensorSpec::new(Shape::from(shape), dtype, level, layout, lanes, target).ok();
        let mut out: Vec<TensorSpec> = tensor(Level::L1, Layout::row_major(shape), None).into_iter().collect();
        if shape.iter().all(|&s| s == 1) {
            out.extend(tensor(Level::RF, Layout::empty(), None));
        }
        for lanes in target.vector_lanes(dtype.size_bytes()) {
            for layout in dimension_orders(shape) {
                out.extend(tensor(Level::VRF, layout, Some(lanes)));
            }
        }
        out
    }

    /// Every Matmul of `shape` with operands from [`candidates`] and at least one in vector
    /// registers.
    fn register_matmuls(shape: [u32; 4], dtypes: [Dtype; 3], accum: bool, target: &Target) -> Vec<LogicalSpec> {
        let prim = Primitive::Matmul { accum };
        let per_operand: Vec<Vec<TensorSpec>> =
            (0..3).map(|i| candidates(&prim.operand_shape(i, &shape), dtypes[i], target)).collect();
        let mut out = Vec::new();
        for a in &per_operand[0] {
            for b in &per_operand[1] {
                for c in &per_operand[2] {
                    if [a, b, c].iter().any(|t| t.level() == Level::VRF) {
                        let operands: Operands = [a.clone(), b.clone(), c.clone()].into_iter().collect();
                        out.push(LogicalSpec::from_tensors(prim, &shape, operands, true));
                    }
                }
            }
        }
        out
    }

    const DTYPES: [[Dtype; 3]; 2] = [[Dtype::F32; 3], [Dtype::Bf16, Dtype::Bf16, Dtype::F32]];

    /// The kernel table's register tests are necessary conditions: every kernel that applies
    /// to a Spec passes its test on it.
    #[test]
    fn kernels_that_apply_pass_their_register_test() {
        let sizes = [1, 2, 8, 16, 32];
        let mut applied = 0;
        for target in [&X86_AVX512, &X86_AVX2] {
            for dtypes in DTYPES {
                for (&m, &k, &n) in triples(&sizes) {
                    for spec in register_matmuls([1, m, k, n], dtypes, true, target) {
                        for kernel in KernelKind::ALL.iter().filter(|k| k.implements(Primitive::Matmul { accum: true }))
                        {
                            if kernel.applies(&spec, target).is_ok() {
                                applied += 1;
                                assert!(kernel.may_take_register_tiles(&spec, target), "{kernel} applies to {spec}");
                            }
                        }
                    }
                }
            }
        }
        assert!(applied > 100, "only {applied} applications checked");
    }

    /// Every (m, k, n) of `sizes`.
    fn triples(sizes: &[u32]) -> impl Iterator<Item = (&u32, &u32, &u32)> {
        sizes.iter().flat_map(move |m| sizes.iter().flat_map(move |k| sizes.iter().map(move |n| (m, k, n))))
    }

    /// The rule is closed under the rewrites that keep register operands: a Spec it rules out
    /// has only tiles and accumulating variants it rules out too.
    #[test]
    fn what_a_dead_end_rewrites_to_is_a_dead_end() {
        let sizes = [2, 4, 16];
        let mut dead = 0;
        for target in [&X86_AVX512, &X86_AVX2] {
            for (&m, &k, &n) in triples(&sizes) {
                for accum in [false, true] {
                    for logical in register_matmuls([1, m, k, n], DTYPES[0], accum, target) {
                        if !unusable_registers(&logical, target) {
                            continue;
                        }
                        dead += 1;
                        let spec = Spec::new(logical, target.max_limits());
                        for action in actions(&spec, target) {
                            if !matches!(action, Action::Tile { .. } | Action::ToAccum | Action::Peel { .. }) {
                                continue;
                            }
                            let Ok(node) = action.apply(&spec, target) else { continue };
                            for child in node.children() {
                                let child = child.spec.logical();
                                let rewritten = matches!(child.primitive(), Some(Primitive::Matmul { .. }));
                                assert!(
                                    !rewritten || unusable_registers(child, target),
                                    "{spec} -> {action} -> {child}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(dead > 100, "only {dead} dead ends checked");
    }

    /// The search's reference, which has no such rule, finds no implementation of the Specs
    /// ruled out, at the largest limits.
    #[test]
    fn dead_ends_have_no_implementation() {
        let sizes = [1, 2, 4];
        let (mut dead, mut checked) = (0, 0);
        for (&m, &k, &n) in triples(&sizes) {
            for logical in register_matmuls([1, m, k, n], DTYPES[0], true, &X86_AVX2) {
                if unusable_registers(&logical, &X86_AVX2) {
                    dead += 1;
                    // Each exhaustive search takes up to a second: a fixed sample of them.
                    if dead % 12 == 0 {
                        checked += 1;
                        let spec = Spec::new(logical, X86_AVX2.max_limits());
                        assert_eq!(exhaustive::optimal_cost(&spec, &X86_AVX2), None, "{spec}");
                    }
                }
            }
        }
        assert!(checked > 20, "only {checked} of {dead} dead ends checked");
    }
}
