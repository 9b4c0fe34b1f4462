//! Every rewrite, written in the schedule language and completed by synthesis, produces C that
//! agrees with the reference evaluator on every target (run where this CPU can, compiled
//! elsewhere); and every inapplicable rewrite says why with a typed reason.

mod common;

use common::{check_impl, scheduled};
use morello_core::codegen::emit_c;
use morello_core::imp::{Impl, ImplNode};
use morello_core::rewrite::RewriteError;
use morello_core::schedule::ScheduleError;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::TargetId;
use morello_core::tensor::TensorSpecError;

/// Checks `schedule` on every target; returns the AVX-512 implementation.
fn check_everywhere(spec: &str, schedule: &str) -> Impl {
    let mut avx512 = None;
    for id in TargetId::ALL {
        let target = id.target();
        let imp = scheduled(spec, schedule, target).unwrap_or_else(|e| panic!("{schedule} on {spec} ({id:?}): {e}"));
        check_impl(&imp, target);
        if id == TargetId::X86Avx512 {
            avx512 = Some(imp);
        }
    }
    avx512.expect("AVX-512 is a target")
}

/// Whether some node of `imp` satisfies `f`.
fn contains(imp: &Impl, f: &impl Fn(&Impl) -> bool) -> bool {
    let mut found = false;
    imp.visit(&mut |node| found |= f(node));
    found
}

#[test]
fn parallel_tiles_over_several_output_dimensions() {
    let imp = check_everywhere(
        "Matmul(2x8x4x16, (f32, GL), (f32, GL), (f32, GL))",
        "tile([1, 4, 4, 8], parallel); synthesize_all;",
    );
    let ImplNode::Loop(l) = &imp.node else { panic!("a loop at the root") };
    assert!(l.parallel);
    let kernel = emit_c(&imp, "k", TargetId::X86Avx512.target()).unwrap();
    assert!(kernel.parallel && kernel.source.contains("parallel_for"), "the loop is outlined for the runtime");
    // Boundary tiles (4 does not divide 6) run in parallel too.
    let imp = check_everywhere(
        "Matmul(1x6x2x8, (f32, GL), (f32, GL), (f32, GL))",
        "tile([1, 4, 2, 8], parallel); synthesize_all;",
    );
    let ImplNode::Loop(l) = &imp.node else { panic!("a loop at the root") };
    assert!(l.parallel && !l.boundaries.is_empty(), "a parallel loop with a boundary region");
}

#[test]
fn bufferize_splits_a_compose_through_a_temporary() {
    for dest in ["L1", "GL", "L1, col_major"] {
        let imp = check_everywhere(
            "Compose([Matmul(1x2x4x2), Matmul(1x2x2x4) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
            &format!("bufferize(0, {dest}); synthesize_all;"),
        );
        let ImplNode::Block(block) = &imp.node else { panic!("a pipeline") };
        assert_eq!(block.temps.len(), 1);
        assert_eq!(block.stages.len(), 2);
    }
    // A softmax feeding a matrix product, the intermediate in registers where they exist.
    check_everywhere(
        "Compose([Matmul(1x2x8x2), Softmax(1x2x8, scan=2) -> f32], (f32, GL), (f32, GL), (f32, GL))",
        "bufferize(0, L1); synthesize_all;",
    );
}

#[test]
fn spatial_split_turns_a_one_pixel_conv_into_matmuls() {
    let imp =
        check_everywhere("ConvAccum(1x4x2x1x1x3x3, (f32, GL), (f32, GL), (f32, GL))", "spatial_split; synthesize_all;");
    assert!(matches!(imp.node, ImplNode::Loop(_)), "a loop over filter positions");
    assert!(contains(&imp, &|n| n.spec.logical().to_string().starts_with("MatmulAccum")));
    // Inside a full convolution: tile to single output pixels, then split.
    check_everywhere(
        "ConvAccum(1x4x2x3x3x3x3, (f32, GL), (f32, GL), (f32, GL))",
        "tile([1, 4, 2, 1, 1, 3, 3]); spatial_split; synthesize_all;",
    );
}

#[test]
fn broadcast_first_divides_by_a_broadcast_temporary() {
    let imp =
        check_everywhere("DivideVecScalar(4x16, scan=1, (f32, GL), (f32, GL))", "broadcast_first(L1); synthesize_all;");
    assert!(contains(&imp, &|n| n.spec.logical().to_string().starts_with("Broadcast")));
}

#[test]
fn softmax_decompositions_offline_and_online() {
    let softmax = "Softmax(2x16, scan=1, (f32, GL), (f32, GL))";
    // Offline, three passes: maximum, denominator, outputs.
    check_everywhere(softmax, "to_softmax_parts_recompute(L1, L1); synthesize_all;");
    // Denominator and unscaled exponentials in one pass, then a division.
    check_everywhere(softmax, "to_softmax_parts(GL); synthesize_all;");
    // Online max-and-denominator, split back into two passes.
    check_everywhere(
        "SoftmaxDenominatorAndMax(2x16, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        "to_max_and_denominator; synthesize_all;",
    );
    // Unscaled exponentials given a separately computed maximum.
    check_everywhere(
        "SoftmaxDenominatorAndUnscaled(2x16, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        "to_max_and_unscaled(L1); synthesize_all;",
    );
    // A long row split into chunks, the chunks on several threads, merged afterwards.
    let imp = check_everywhere(
        "SoftmaxDenominatorAndMax(1x64, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        "parallel_split(16, GL); subschedule([0]) { tile([1, 1, 16], parallel); } synthesize_all;",
    );
    assert!(contains(&imp, &|n| matches!(&n.node, ImplNode::Loop(l) if l.parallel)));
}

#[test]
fn relayout_and_upcasting_moves() {
    // Pack the rhs into 8-column panels, then multiply.
    check_everywhere(
        "Matmul(1x2x4x16, (f32, GL), (f32, GL), (f32, GL))",
        "move_param(1, GL, [0, 2, 1, 2 p8]); synthesize_all;",
    );
    // Transpose through L1.
    check_everywhere("Move(8x8, (f32, GL), (f32, GL))", "move_param(0, L1, col_major); synthesize_all;");
    // Widen bf16 inputs to f32 once, then multiply in f32.
    let imp = check_everywhere(
        "Matmul(1x2x4x8, (bf16, GL), (bf16, GL), (f32, GL))",
        "move_param(1, GL, row_major, f32); synthesize_all;",
    );
    let ImplNode::Alloc(alloc) = &imp.node else { panic!("a move at the root") };
    assert_eq!(alloc.tensor.dtype().name(), "f32");
}

/// Spread loops take one row of `b` (and one value of each row of `a`) from each band of `k`:
/// with several rows of `a`, a column-major `b` (the rows are then its columns), a spread loop
/// inside a tile of `k`, a tile of `k` inside a spread loop, and batches.
#[test]
fn spread_loops_read_one_row_from_each_band() {
    for (spec, schedule) in [
        ("Matmul(1x3x16x24, (f32, GL), (f32, GL), (f32, GL))", "to_accum; spread(4); synthesize_all;"),
        ("Matmul(1x1x32x64, (bf16, GL), (bf16, GL), (f32, GL))", "to_accum; spread(8); synthesize_all;"),
        ("Matmul(1x2x16x8, (f32, GL), (f32, GL, col_major), (f32, GL))", "to_accum; spread(2); synthesize_all;"),
        (
            "Matmul(1x2x32x16, (f32, GL), (f32, GL), (f32, GL))",
            "to_accum; tile([1, 2, 16, 16]); spread(4); synthesize_all;",
        ),
        (
            "Matmul(1x2x32x16, (f32, GL), (f32, GL), (f32, GL))",
            "to_accum; spread(8); tile([1, 2, 2, 16]); synthesize_all;",
        ),
        ("Matmul(3x2x8x8, (f32, GL), (f32, GL), (f32, GL))", "to_accum; spread(2); synthesize_all;"),
    ] {
        let imp = check_everywhere(spec, schedule);
        assert!(contains(&imp, &|node| matches!(&node.node, ImplNode::Loop(l) if l.spread)), "{schedule}:\n{imp}");
    }
}

/// A peel computes the first values of `k` into the output and accumulates the rest onto them:
/// at any size (the second stage starting at an offset that is no multiple of its own extent),
/// with a column-major `b`, batches, an operand already in registers and stages scheduled on
/// their own.
#[test]
fn peels_compute_the_first_values_then_accumulate() {
    for (spec, schedule) in [
        ("Matmul(1x3x8x16, (f32, GL), (f32, GL), (f32, GL))", "peel(4); synthesize_all;"),
        ("Matmul(1x3x7x16, (f32, GL), (f32, GL), (f32, GL))", "peel(3); synthesize_all;"),
        ("Matmul(1x3x7x16, (f32, GL), (f32, GL), (f32, GL))", "peel(1); synthesize_all;"),
        ("Matmul(1x2x9x8, (f32, GL), (f32, GL, col_major), (f32, GL))", "peel(5); synthesize_all;"),
        ("Matmul(3x2x6x8, (f32, GL), (f32, GL), (f32, GL))", "peel(2); synthesize_all;"),
        (
            "Matmul(1x2x16x8, (f32, GL), (f32, GL), (f32, GL))",
            "peel(4); subschedule([1]) { split(4); } subschedule([0]) { peel(2); } synthesize_all;",
        ),
    ] {
        let imp = check_everywhere(spec, schedule);
        assert!(!common::peeled_reductions(&imp).is_empty(), "{schedule}:\n{imp}");
    }
    // `b` in vector registers: the stages take the rows from the third on as a tile of them.
    let (spec, schedule) = (
        "Matmul(1x2x6x8, (f32, GL), (f32, L1), (f32, L1))",
        "move_param(1, VRF, row_major, v8); peel(2); synthesize_all;",
    );
    for id in [TargetId::X86Avx2, TargetId::X86Avx512] {
        let imp = scheduled(spec, schedule, id.target()).unwrap_or_else(|e| panic!("{schedule} ({id:?}): {e}"));
        check_impl(&imp, id.target());
    }
}

#[test]
fn inapplicable_rewrites_give_typed_reasons() {
    let avx2 = TargetId::X86Avx2.target();
    let err = |spec: &str, schedule: &str| match scheduled(spec, schedule, avx2) {
        Err(ScheduleError::Rewrite(e)) => e,
        other => panic!("{schedule} on {spec}: expected a rewrite error, got {other:?}"),
    };
    let matmul = "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))";
    assert!(matches!(
        err(
            "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)",
            "tile([1, 4, 8, 8], parallel); synthesize_all;"
        ),
        RewriteError::SerialOnly { .. }
    ));
    assert!(matches!(
        err("MatmulAccum(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))", "tile([1, 8, 4, 8], parallel); synthesize_all;"),
        RewriteError::ParallelReduction { dim: 2, .. }
    ));
    assert!(matches!(err(matmul, "spatial_split; synthesize_all;"), RewriteError::WrongPrimitive { .. }));
    // A spread loop needs an accumulating Matmul, bands that divide k, and k one plain dimension.
    assert!(matches!(err(matmul, "spread(2); synthesize_all;"), RewriteError::WrongPrimitive { .. }));
    for bands in [1, 3, 8] {
        let schedule = format!("to_accum; spread({bands}); synthesize_all;");
        assert!(matches!(err(matmul, &schedule), RewriteError::Shape { rewrite: "spread", .. }), "{schedule}");
    }
    assert!(matches!(
        err(
            "Matmul(1x1x8x32, (bf16, GL), (bf16, GL, [1, 2, 1 p2]), (f32, GL))",
            "to_accum; spread(2); synthesize_all;"
        ),
        RewriteError::TileInvalid { source: TensorSpecError::SpreadNeedsPlainDimension { dim: 1, .. }, .. }
    ));
    // A peel needs a Spec that does not accumulate yet, one reduction dimension, and values
    // left for both stages.
    assert!(matches!(
        err("MatmulAccum(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))", "peel(4); synthesize_all;"),
        RewriteError::PeelAccumulating { .. }
    ));
    for size in [0, 8, 9] {
        let schedule = format!("peel({size}); synthesize_all;");
        assert!(matches!(err(matmul, &schedule), RewriteError::PeelSize { extent: 8, .. }), "{schedule}");
    }
    assert!(matches!(
        err("Conv(1x1x2x3x3x2x2, (f32, GL), (f32, GL), (f32, GL))", "peel(1); synthesize_all;"),
        RewriteError::PeelReductions { count: 3, .. }
    ));
    assert!(matches!(err(matmul, "bufferize(0, L1); synthesize_all;"), RewriteError::WrongPrimitive { .. }));
    assert!(matches!(err(matmul, "broadcast_first(L1); synthesize_all;"), RewriteError::WrongPrimitive { .. }));
    assert!(matches!(
        err(
            "Matmul(1x8x8x8, (bf16, GL), (bf16, GL), (bf16, GL))",
            "move_param(2, GL, row_major, f32); synthesize_all;"
        ),
        RewriteError::UpcastWritten { .. }
    ));
    assert!(matches!(
        err("Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))", "move_param(0, GL, row_major, bf16); synthesize_all;"),
        RewriteError::NotUpcast { .. }
    ));
    assert!(matches!(
        err(
            "Compose([Matmul(1x2x2x2), Matmul(1x2x2x2) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
            "bufferize(1, L1); synthesize_all;"
        ),
        RewriteError::StageOutOfRange { .. }
    ));
    assert!(matches!(
        err(
            "SoftmaxDenominatorAndMax(1x1000, scan=1, (f32, GL), (f32, GL), (f32, GL))",
            "parallel_split(256, GL); synthesize_all;"
        ),
        RewriteError::Shape { .. }
    ));
    assert!(matches!(
        err("Softmax(4x32, scan=1, (f32, GL), (f32, GL))", "to_softmax_parts(VRF, row_major, v8); synthesize_all;"),
        RewriteError::TempInvalid { .. } | RewriteError::TempLayout { .. }
    ));
    // A portable target has no vector registers to put a temporary in.
    let portable = TargetId::Portable.target();
    let spec = Spec::parse_for("DivideVecScalar(4x16, scan=1, (f32, GL), (f32, GL))", portable).unwrap();
    assert!(matches!(
        run_schedule(spec, "broadcast_first(VRF, row_major, v4); synthesize_all;", portable),
        Err(ScheduleError::Rewrite(RewriteError::TempInvalid { .. }))
    ));
}
