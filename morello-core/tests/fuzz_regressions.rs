//! Cases the differential fuzzer (`morello-db fuzz`, `morello_core::fuzz`) found failing, kept
//! as regression tests: each replays the reduced case (Spec, schedule steps, input seed) with
//! gcc and clang against the reference evaluator, or checks the invariant the failure broke.

use morello_core::fuzz::replay;
use morello_core::schedule::PartialImpl;
use morello_core::search::actions;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::TargetId;

/// `morello-db fuzz --target avx2 --seed 5 --cases 64`, case 0: a dot-product kernel read an
/// odd-even `lhs` (k stored as 0, 2, 4, 6, 1, 3, 5, 7) against a row-major `rhs`, pairing the
/// wrong values (expected 0.469, got 0.661).
#[test]
fn fuzz_avx2_seed_5_case_0() {
    replay(
        "(Matmul(1×4×8×1, (f32, GL, [1, 2 oe8]), (f32, GL, row_major), (f32, GL, row_major), serial), [64, 512, 32768, 1073741824])",
        &[],
        TargetId::X86Avx2,
        12205091865857794412,
    );
}

/// The same dot product with both operands interleaved alike still runs (and is right).
#[test]
fn dot_products_of_operands_interleaved_alike_are_right() {
    replay(
        "Matmul(1x4x8x1, (f32, GL, [1, 2 oe8]), (f32, GL, [2, 1 oe8]), (f32, GL), serial)",
        &[],
        TargetId::X86Avx2,
        7,
    );
}

/// Specs on which printing a rewrite as a schedule step lost something: tile sizes printed as
/// `8×4` (which the schedule parser does not read), and the contiguity of a move's destination
/// (`move_param(0, L1, [1, 2, 2 p8], f32)` replayed as a fully contiguous copy instead of the
/// cache fill of an operand with `c1`). Found by `morello-db fuzz --seed 1` and
/// `--seed 2026` (cases 342, 545, 979, 980, 1207, 1341 and 1504) on avx2 and avx512.
const PRINTED_STEP_SPECS: [&str; 8] = [
    "Matmul(1x8x4x4, (i16, GL), (i16, GL), (i16, GL), serial)",
    "MaxAccum(1x4x16, dim=2, (f32, GL, [1, 2, 2 p8], c1), (f32, L1, row_major), serial)",
    "Conv(1x1x1x1x2x4x4, (i32, GL, col_major), (i32, GL, [3, 2, 2 p2], c1), (i32, L1, row_major), serial)",
    "OnePrefix(8, (u8, L1, row_major), (u8, GL, [1, 1 p4], c1), serial)",
    "SoftmaxDenominatorAndMaxFromPartsAccum(8, scan=0, (f32, GL, row_major), (f32, GL, [0, 0 p2], c0), (f32, L1, row_major), (f32, L1, row_major), serial)",
    "SoftmaxDenominatorAndMaxAccum(4x16, scan=0, (bf16, L1, [1, 0 oe4]), (bf16, GL, [1, 1 p4], c1), (bf16, GL, row_major), serial)",
    "SoftmaxDenominatorAndUnscaled(1x1x4x5, scan=3, (bf16, GL, [3, 2, 2 p2], c0), (bf16, GL, row_major), (bf16, GL, row_major))",
    "ConvAccum(1x1x4x1x1x3x1, (bf16, GL, [2, 1, 1 p2], c1), (bf16, GL, row_major), (f32, RF), serial)",
];

/// Every rewrite the search may apply, printed as a schedule step, parses and applies to the
/// same implementation.
#[test]
fn every_rewrite_prints_as_a_schedule_step_that_replays() {
    for id in [TargetId::X86Avx2, TargetId::X86Avx512] {
        let target = id.target();
        for text in PRINTED_STEP_SPECS {
            let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
            let start = PartialImpl::new(spec.clone(), target);
            let at = start.root().spec.clone();
            let all = actions(&at, target);
            assert!(!all.is_empty(), "{text}: no rewrites");
            for action in all {
                let applied = start.clone().apply(&action).unwrap_or_else(|e| panic!("{text}: {action}: {e}"));
                let step = format!("{action}; synthesize_all;");
                let (replayed, _) = run_schedule(spec.clone(), &step, target)
                    .unwrap_or_else(|e| panic!("{text} on {id}: `{step}` does not replay: {e}"));
                assert_eq!(replayed.root(), applied.root(), "{text} on {id}: `{step}` replays differently");
            }
        }
    }
}

/// `morello-db fuzz --target avx2 --seed 2026 --cases 10000`, case 2885 (also on portable): an
/// attention-like Compose whose inner Matmul produced −∞ from an infinite input; the softmax
/// stage turned that element's infinite error bound into a NaN tolerance for a finite result
/// (expected -0.27022824, got -0.27022827, tolerance NaN). A bug of the reference's
/// tolerances, not of the kernel.
#[test]
fn fuzz_avx2_seed_2026_case_2885() {
    for target in [TargetId::X86Avx2, TargetId::Portable] {
        replay(
            "(Compose([Matmul(1×4×3×2), Softmax(1×4×3, scan=2) -> f32, Matmul(1×4×1×3) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL), serial), [64, 512, 32768, 1073741824])",
            &[],
            target,
            3463431146807863772,
        );
    }
}

/// `morello-db fuzz --seed 2026 --cases 10000`, case 6525 on avx2 and avx512: a Max over a
/// dimension of size 1 whose input held a NaN. Kernels compute Max as an initialization to −∞
/// and MaxAccum, which skips NaNs, and wrote −∞; the reference started from the first value
/// and expected NaN. The reference now starts from −∞ as the rewrite does.
#[test]
fn fuzz_avx2_seed_2026_case_6525() {
    for target in [TargetId::X86Avx2, TargetId::X86Avx512, TargetId::Portable] {
        replay(
            "(Max(1×1×2×7, dim=1, (f32, GL), (f32, GL), serial), [64, 512, 32768, 1073741824])",
            &[],
            target,
            10637780820382708258,
        );
    }
}
