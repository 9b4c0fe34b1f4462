//! A Spec may declare that an input is stored prepacked, as an inference engine stores its
//! weights: here bf16 vector-matrix products whose matrix is packed in pairs of rows
//! (`[1, 2, 1 p2]`) or in panels of row pairs (`[2, 1, 2 pP, 1 p2]`, two packed strips). The
//! search implements them reading the matrix in place, with AVX512-BF16's pair dot products
//! where the target has them, and the kernels agree with the reference evaluator.

mod common;

use common::kernel_tiles::kernel_on_l1_tiles;
use morello_core::codegen::emit_c;
use morello_core::imp::{Impl, ImplNode};
use morello_core::kernels::KernelKind;
use morello_core::level::Level;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::{Target, X86_AVX2, X86_AVX512};

/// The matrix layouts, each for the 32×512 matrix of the Specs below.
const LAYOUTS: [&str; 3] = ["[1, 2, 1 p2]", "[2, 1, 2 p256, 1 p2]", "[2, 1, 2 p16, 1 p2]"];

/// The vector-matrix product with the matrix in `layout`, at `target`'s largest memory limits.
fn vecmat(layout: &str, serial: bool, target: &Target) -> Spec {
    let serial = if serial { ", serial" } else { "" };
    let text = format!("Matmul(1x1x32x512, (bf16, GL), (bf16, GL, {layout}), (f32, GL){serial})");
    Spec::parse_for(&text, target).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn synthesized(spec: &Spec, target: &'static Target) -> Impl {
    let mut synth = Synthesizer::new(target);
    synth.synthesize(spec).unwrap_or_else(|e| panic!("{spec} on {}: {e}", target.name))
}

/// Whether `imp` copies the matrix into a buffer in memory: read in place, the packed matrix
/// is only cached in L1 or loaded into registers.
fn repacks_matrix(imp: &Impl) -> bool {
    let mut repacked = false;
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(alloc) = &node.node
            && alloc.operand == 1
            && alloc.tensor.level() == Level::GL
        {
            repacked = true;
        }
    });
    repacked
}

#[test]
fn prepacked_matrices_are_read_with_pair_dot_products_on_avx512() {
    for layout in LAYOUTS {
        let spec = vecmat(layout, true, &X86_AVX512);
        let imp = synthesized(&spec, &X86_AVX512);
        let source = emit_c(&imp, "k", &X86_AVX512).unwrap().source;
        assert!(source.contains("_mm512_dpbf16_ps"), "{spec}: no vdpbf16ps in\n{source}");
        assert!(!repacks_matrix(&imp), "{spec}: the matrix is copied in memory\n{source}");
        common::check_impl(&imp, &X86_AVX512);
    }
}

#[test]
fn prepacked_matrices_agree_with_the_reference_on_avx2() {
    for layout in LAYOUTS {
        common::check_impl(&synthesized(&vecmat(layout, true, &X86_AVX2), &X86_AVX2), &X86_AVX2);
    }
}

#[test]
fn prepacked_matrices_in_parallel_loops_agree_with_the_reference() {
    // The benchmark's two-thread schedule: a parallel loop over the two halves of the columns
    // (whole panels of 256), the rest searched.
    for target in [&X86_AVX512, &X86_AVX2] {
        let mut synth = Synthesizer::new(target);
        let imp = PartialImpl::new(vecmat(LAYOUTS[1], false, target), target)
            .to_accum()
            .and_then(|p| p.parallel_tile(&[1, 1, 32, 256]))
            .and_then(|p| p.synthesize_all(&mut synth))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(emit_c(&imp, "k", target).unwrap().parallel, "a parallel kernel on {}", target.name);
        common::check_impl(&imp, target);
    }
}

/// `MatmulLoopVdpbf16ps` on tiles whose pairs of rows are not adjacent (a tile narrower than the
/// matrix), with one pair and several, and with three rows of `a` against the whole matrix.
#[test]
fn pair_dot_product_tiles_of_a_wider_matrix_agree_with_the_reference() {
    let mut synth = Synthesizer::new(&X86_AVX512);
    for (shape, tile) in [("1x1x16x512", [1, 1, 8, 128]), ("1x1x16x512", [1, 1, 2, 64]), ("1x6x8x96", [1, 3, 8, 96])] {
        let text = format!("MatmulAccum({shape}, (bf16, GL), (bf16, GL, [1, 2, 1 p2]), (f32, GL), serial)");
        let imp = kernel_on_l1_tiles(&text, &tile, KernelKind::MatmulLoopVdpbf16ps, &X86_AVX512, &mut synth);
        common::check_impl(&imp, &X86_AVX512);
    }
}
