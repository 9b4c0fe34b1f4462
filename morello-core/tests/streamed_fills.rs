//! Streamed fills: a hardware fill of a Matmul's rhs into L1 costs nothing when L2 can stream
//! it (a contiguous run of several rows of `k`, or a short piece of one row whose neighbours
//! are less than a page away, in a Spec held in L2; the loop that cuts `k` down to such pieces
//! pays L1's weight for their lines unless the rows follow each other), so the search runs
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
fn only_contiguous_tiles_of_the_rhs_stream() {
    let out = "(f32, VRF, v16)";
    assert_eq!(streamed_operands(&format!("MatmulAccum(1x6x2x64, (f32, GL), (f32, GL), {out})")), [false, true, false]);
    // One row: the loop that cut `k` down to it pays where the next row is not nearby
    // (`cost::row_pieces`).
    assert_eq!(streamed_operands(&format!("MatmulAccum(1x6x1x64, (f32, GL), (f32, GL), {out})")), [false, true, false]);
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
fn an_rhs_whose_rows_lie_whole_pages_apart_has_no_tile_that_streams() {
    let out = "(f32, GL)";
    let rhs_may_stream = |text: &str| may_stream_operand(text, 1);
    // Rows that follow each other, whole or in 64-column panels: a tile of several rows of
    // either is contiguous.
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL), {out})")));
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x256x128, (f32, GL), (f32, GL, [2, 1, 2 p64], c2), {out})")));
    // Pieces of the rows of a wider matrix, each run one row of `k`: they stream one row at a
    // time when the rows are not whole pages apart.
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL, row_major, c1), {out})")));
    assert!(!rhs_may_stream(&format!("MatmulAccum(1x6x256x64, (f32, GL), (f32, GL, row_major, c1, paged), {out})")));
    // One row: no loop over `k` is left to pay for it.
    assert!(rhs_may_stream(&format!("MatmulAccum(1x6x1x64, (f32, GL), (f32, GL), {out})")));
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
fn adjacent_rows_cost_less_than_near_rows_and_near_rows_less_than_rows_pages_apart() {
    // The same schedule (6×64 register tiles over all of `k`) on an rhs whose rows are
    // adjacent, on one whose rows are 1 KiB apart (a block of a 256-wide matrix) and on one
    // whose rows are whole pages apart: only the first two stream, and the second pays for
    // writing its lines into L1.
    let cost = |rhs: &str| {
        let text = format!("Matmul(1x24x256x64, (f32, GL), (f32, GL{rhs}), (f32, GL), serial)");
        let spec = Spec::parse_for(&text, &X86_AVX512).unwrap();
        let partial = PartialImpl::new(spec, &X86_AVX512).tile(&[1, 6, 256, 64]).unwrap();
        let imp = partial.synthesize_all(&mut Synthesizer::new(&X86_AVX512)).unwrap();
        (impl_cost(&imp, &X86_AVX512).unwrap().main, streamed_fills(&imp))
    };
    let (adjacent, streamed) = cost("");
    let (near, streamed_near) = cost(", row_major, c1");
    let (paged, _) = cost(", row_major, c1, paged");
    assert!(streamed > 0 && streamed_near > 0, "{streamed} and {streamed_near} streamed fills");
    assert!(adjacent < near, "adjacent rows {adjacent}, rows 1 KiB apart {near}");
    assert!(near < paged, "rows 1 KiB apart {near}, rows pages apart {paged}");
}

#[test]
fn short_pieces_of_rows_less_than_a_page_apart_are_read_over_the_whole_of_k() {
    // 8×512×512: `b`'s rows are 2 KiB apart, so the search runs 8×32 register tiles over all
    // 512 of `k`, reading a 128-byte piece of a row per step (`bench/README.md`).
    let spec = Spec::parse_for("Matmul(1x8x512x512, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX512).unwrap();
    let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
    assert_eq!(deepest_register_tile(&imp), 512, "{imp}");
    assert!(streamed_fills(&imp) > 0, "no streamed fill in\n{imp}");
    common::check_impl(&imp, &X86_AVX512);
}
