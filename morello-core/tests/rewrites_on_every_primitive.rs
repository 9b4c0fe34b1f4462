//! Rewrites on the whole primitive set: tiles induce the right operand tiles (Conv's sliding
//! windows included), reductions and scan dimensions are respected, `to_accum` initializes
//! every accumulating output, and every child Spec a rewrite produces is canonical.

use morello_core::imp::ImplNode;
use morello_core::level::Level;
use morello_core::primitive::{FillValue, Primitive};
use morello_core::rewrite::{Action, RewriteError};
use morello_core::search::{Synthesizer, actions};
use morello_core::spec::Spec;
use morello_core::target::{Target, X86_AVX2};

fn spec(text: &str) -> Spec {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn tile(text: &str, sizes: &[u32]) -> Result<ImplNode, RewriteError> {
    Action::Tile { tile: sizes.into(), parallel: false }.apply(&spec(text), &X86_AVX2)
}

#[test]
fn conv_tiles_slide_windows_over_the_image() {
    let conv = "ConvAccum(1x4x2x8x8x3x3, (f32, GL), (f32, GL), (f32, GL))";
    let ImplNode::Loop(l) = tile(conv, &[1, 4, 2, 4, 4, 3, 3]).unwrap() else { panic!("a loop") };
    let body = &l.body.spec;
    // A 4×4 output tile needs a 6×6 window of the image (4 + 3 − 1).
    assert_eq!(body.operand(0).shape(), &[1, 2, 6, 6]);
    assert_eq!(body.operand(1).shape(), &[4, 2, 3, 3]);
    assert_eq!(body.operand(2).shape(), &[1, 4, 4, 4]);
    // Tiling the filter's rows (a reduction) shrinks the window too.
    let ImplNode::Loop(l) = tile(conv, &[1, 4, 2, 8, 8, 1, 3]).unwrap() else { panic!("a loop") };
    assert_eq!(l.body.spec.operand(0).shape(), &[1, 2, 8, 10]);
    assert!(matches!(
        tile("Conv(1x4x2x8x8x3x3, (f32, GL), (f32, GL), (f32, GL))", &[1, 4, 1, 8, 8, 3, 3]),
        Err(RewriteError::ReductionNeedsAccum { dim: 2, .. })
    ));
}

#[test]
fn softmax_needs_its_whole_scan_dimension() {
    let softmax = "Softmax(4x8, scan=1, (f32, GL), (f32, GL))";
    assert!(matches!(tile(softmax, &[4, 4]), Err(RewriteError::Untileable { dim: 1, .. })));
    let ImplNode::Loop(l) = tile(softmax, &[1, 8]).unwrap() else { panic!("a loop") };
    assert_eq!(l.body.spec.shape(), &[1, 8]);
    // SoftmaxComplete is elementwise given its maximum and denominator.
    let complete = "SoftmaxComplete(4x8, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))";
    let ImplNode::Loop(l) = tile(complete, &[4, 2]).unwrap() else { panic!("a loop") };
    assert_eq!(l.body.spec.operand(1).shape(), &[4, 1]);
    // The unscaled variant reduces its scan dimension and cannot accumulate.
    let unscaled = "SoftmaxDenominatorAndUnscaled(4x8, scan=1, (f32, GL), (f32, GL), (f32, GL))";
    assert!(matches!(tile(unscaled, &[4, 4]), Err(RewriteError::Untileable { .. })));
}

#[test]
fn to_accum_initializes_every_accumulating_output() {
    let sdam = spec("SoftmaxDenominatorAndMax(4x8, scan=1, (f32, GL), (f32, GL), (f32, GL))");
    assert!(matches!(
        Action::Tile { tile: (&[4, 2][..]).into(), parallel: false }.apply(&sdam, &X86_AVX2),
        Err(RewriteError::ReductionNeedsAccum { .. })
    ));
    let ImplNode::Block(block) = Action::ToAccum.apply(&sdam, &X86_AVX2).unwrap() else { panic!("a block") };
    let stages: Vec<Option<Primitive>> = block.stages.iter().map(|s| s.spec.primitive()).collect();
    assert_eq!(
        stages,
        [
            Some(Primitive::Fill(FillValue::NegInf)),
            Some(Primitive::Fill(FillValue::Zero)),
            Some(Primitive::SoftmaxDenominatorAndMax { scan: 1, accum: true })
        ]
    );
    // Once accumulating, the scan dimension can be split.
    let accum = &block.stages[2].spec;
    assert!(Action::Tile { tile: (&[4, 2][..]).into(), parallel: false }.apply(accum, &X86_AVX2).is_ok());
    // Integer maxima start from the dtype's minimum.
    let max = spec("Max(4x8, dim=1, (i16, GL), (i16, GL))");
    let ImplNode::Block(block) = Action::ToAccum.apply(&max, &X86_AVX2).unwrap() else { panic!("a block") };
    assert_eq!(block.stages[0].spec.primitive(), Some(Primitive::Fill(FillValue::Min)));
}

#[test]
fn compose_is_tiled_only_after_bufferize() {
    let compose =
        spec("Compose([Matmul(1x2x2x2), Matmul(1x2x2x2) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))");
    assert!(matches!(
        Action::Tile { tile: (&[1, 1, 2, 2][..]).into(), parallel: false }.apply(&compose, &X86_AVX2),
        Err(RewriteError::Compose { .. })
    ));
    assert!(Synthesizer::new(&X86_AVX2).synthesize(&compose).is_ok());
}

#[test]
fn every_rewrite_produces_canonical_child_specs() {
    let texts = [
        "Matmul(1x4x8x16, (f32, GL), (f32, GL, col_major), (f32, GL))",
        "MatmulAccum(1x4x8x16, (f32, L1), (f32, L1, [0, 2, 1, 2 p8]), (f32, L1, row_major, c1))",
        "ConvAccum(1x2x2x4x4x3x3, (f32, GL), (f32, GL), (f32, GL))",
        "Move(8x16, (f32, GL, row_major), (f32, GL, [1, 0, 0 oe4]))",
        "Move(4x16, (bf16, L1), (f32, L1))",
        "MaxAccum(4x16, dim=1, (f32, L1), (f32, L1))",
        "SoftmaxDenominatorAndMaxAccum(4x16, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        "DivideVecScalar(4x16, scan=1, (f32, L1), (f32, L1))",
        "Broadcast(4x16, dim=0, (u32, GL), (u32, GL))",
        "FillNegInf(8x8, (f32, L1, col_major))",
        "OnePrefix(4x4, (i8, GL), (i8, GL))",
    ];
    // A copy of AVX2 whose L1 holds none of these Specs whole, so that those in global memory
    // have every rewrite, not only the cache fill of a Spec held in L1 (`residency`).
    let mut levels = X86_AVX2.levels;
    levels[Level::L1.index()].capacity_bytes = 512;
    let target = Target { levels, ..X86_AVX2 };
    let mut children = 0;
    for text in texts {
        let s = spec(text);
        for action in actions(&s, &target) {
            let Ok(node) = action.apply(&s, &target) else { continue };
            let imp = morello_core::imp::Impl { spec: s.clone(), node };
            for child in imp.children() {
                let printed = child.spec.to_string();
                let reparsed: Spec = printed.parse().unwrap_or_else(|e| panic!("{action} on {s}: {printed}: {e}"));
                assert_eq!(reparsed, child.spec, "{action} on {s} produced a non-canonical {printed}");
                children += 1;
            }
        }
    }
    assert!(children > 300, "only {children} child Specs checked");
}
