//! Streamed fills: a hardware fill of a Matmul's rhs into L1 costs nothing when L2 can stream
//! it (a contiguous run of several rows of `k`, in a Spec held in L2), so the search runs
//! register tiles over the whole of `k` where the rhs is laid out for that, and the kernels it
//! builds agree with the reference evaluator.

mod common;

use morello_core::cost::{impl_cost, may_stream, residency, streamed_fill};
use morello_core::imp::{Impl, ImplNode};
use morello_core::level::Level;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::X86_AVX512;

/// Which operands of the Spec `text` a hardware fill would stream.
fn streamed_operands(text: &str) -> Vec<bool> {
    let t = &X86_AVX512;
    let spec = Spec::parse_for(text, t).unwrap();
    let held = residency(spec.logical(), t);
    (0..3).map(|i| streamed_fill(spec.logical(), i, held, t)).collect()
}

/// The hardware fills in `imp` that stream.
fn streamed_fills(imp: &Impl) -> usize {
    let t = &X86_AVX512;
    let mut count = 0;
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(a) = &node.node
            && a.cache_miss
            && streamed_fill(node.spec.logical(), a.operand, residency(node.spec.logical(), t), t)
        {
            count += 1;
        }
    });
    count
}

/// The largest `k` over which `imp` sums a tile of the output held in vector registers.
fn deepest_register_tile(imp: &Impl) -> u32 {
    let mut deepest = 0;
    imp.visit(&mut |node| {
        if node.spec.operands().last().is_some_and(|c| c.level() == Level::VRF) {
            deepest = deepest.max(node.spec.shape()[2]);
        }
    });
    deepest
}

#[test]
fn only_contiguous_runs_of_several_rows_of_the_rhs_stream() {
    let out = "(f32, VRF, v16)";
    assert_eq!(streamed_operands(&format!("MatmulAccum(1x6x2x64, (f32, GL), (f32, GL), {out})")), [false, true, false]);
    // One row: nothing says the next one follows it in memory.
    assert_eq!(streamed_operands(&format!("MatmulAccum(1x6x1x64, (f32, GL), (f32, GL), {out})")), [false; 3]);
    // Rows of a wider matrix, not adjacent.
    let rows_apart = format!("MatmulAccum(1x6x2x64, (f32, GL), (f32, GL, row_major, c1), {out})");
    assert_eq!(streamed_operands(&rows_apart), [false; 3]);
    // The rhs already in L1: there is nothing to fill.
    assert_eq!(streamed_operands(&format!("MatmulAccum(1x6x2x64, (f32, GL), (f32, L1), {out})")), [false; 3]);
    // A Spec whose data does not fit in L2 (an rhs of 2 MiB) reads it from further out.
    let too_big = format!("MatmulAccum(1x6x8192x64, (f32, GL), (f32, GL), {out})");
    assert_eq!(streamed_operands(&too_big), [false; 3]);
}

/// Whether the bounds let some sub-Spec of the Spec `text` stream its operand `operand`.
fn may_stream_operand(text: &str, operand: usize) -> bool {
    let spec = Spec::parse_for(text, &X86_AVX512).unwrap();
    let logical = spec.logical();
    may_stream(logical.primitive().unwrap(), operand, &logical.operands()[operand])
}

#[test]
fn an_rhs_whose_runs_are_pieces_of_single_rows_has_no_tile_that_streams() {
    let out = "(f32, GL)";
    let rhs_may_stream = |text: &str| may_stream_operand(text, 1);
    // Rows that follow each other, whole or in 64-column panels: a tile of several rows of
    // either is contiguous.
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL), {out})")));
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x256x128, (f32, GL), (f32, GL, [2, 1, 2 p64], c2), {out})")));
    // Pieces of the rows of a wider matrix: each run is one row of `k`.
    assert!(!rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL, row_major, c1), {out})")));
    assert!(!rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL, row_major, c1, paged), {out})")));
    // One row: a tile of it has a single value of `k`.
    assert!(!rhs_may_stream(&format!("MatmulAccum(1x6x1x64, (f32, GL), (f32, GL), {out})")));
    // Only the rhs of a Matmul streams.
    assert!(!may_stream_operand(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL), {out})"), 0));
}

#[test]
fn a_contiguous_rhs_is_read_over_the_whole_of_k_and_the_kernel_matches_the_reference() {
    // `peeled_reductions.rs`'s Spec with an rhs whose rows follow each other.
    let spec = Spec::parse_for("Matmul(1x24x256x64, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX512).unwrap();
    let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
    assert!(streamed_fills(&imp) > 0, "no streamed fill in\n{imp}");
    assert_eq!(deepest_register_tile(&imp), 256, "{imp}");
    assert!(common::peeled_reductions(&imp).is_empty(), "a peel in\n{imp}");
    common::check_impl(&imp, &X86_AVX512);
}

#[test]
fn a_streamed_rhs_costs_less_than_the_same_plan_over_rows_apart() {
    // The same schedule (6×64 register tiles over all of `k`) on an rhs whose rows are
    // adjacent and on one whose are not: only the first streams.
    let cost = |rhs: &str| {
        let text = format!("Matmul(1x24x256x64, (f32, GL), (f32, GL{rhs}), (f32, GL), serial)");
        let spec = Spec::parse_for(&text, &X86_AVX512).unwrap();
        let partial = PartialImpl::new(spec, &X86_AVX512).tile(&[1, 6, 256, 64]).unwrap();
        let imp = partial.synthesize_all(&mut Synthesizer::new(&X86_AVX512)).unwrap();
        (impl_cost(&imp, &X86_AVX512).unwrap().main, streamed_fills(&imp))
    };
    let (adjacent, streamed) = cost("");
    let (apart, not_streamed) = cost(", row_major, c1");
    assert!(streamed > 0 && not_streamed == 0, "{streamed} and {not_streamed} streamed fills");
    assert!(adjacent < apart, "adjacent rows {adjacent}, rows apart {apart}");
}
