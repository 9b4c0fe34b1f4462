//! A serial loop pays for reading its body's data from memory once per tile of each operand it
//! moves to (`cost::loop_cache_fill`): what consecutive iterations keep stays in L2. So a
//! vector-matrix product that walks blocks of whole rows of its matrix reads its output from
//! memory once, and the search uses that to keep the output in L2 while it streams the matrix.

mod common;

use morello_core::cost::{cache_fill, impl_cost, loop_cache_fill, residency, restarted_lines};
use morello_core::imp::ImplNode;
use morello_core::level::Level;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::{Residency, TargetId};

#[test]
fn blocks_of_whole_rows_fill_the_output_once() {
    let target = TargetId::X86Avx512.target();
    let spec = Spec::parse_for("Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial)", target).unwrap();
    let (partial, _) = run_schedule(spec, "to_accum; tile([1, 1, 8, 16384]); synthesize_all;", target).unwrap();
    let imp = partial.synthesize_all(&mut Synthesizer::new(target)).unwrap();
    // The schedule's loop: the zeroing of `c` comes first.
    let mut found = None;
    imp.visit(&mut |node| {
        if let ImplNode::Loop(l) = &node.node
            && l.tile[..] == [1, 1, 8, 16384]
        {
            found = Some(node.clone());
        }
    });
    let rows = found.unwrap_or_else(|| panic!("no loop over blocks of 8 rows in:\n{imp}"));
    let ImplNode::Loop(l) = &rows.node else { unreachable!() };
    let (spec, body) = (rows.spec.logical(), l.body.spec.logical());
    assert_eq!(residency(body, target), Residency::L2);
    assert_eq!(residency(spec, target), Residency::Memory, "64 MiB of `b`");
    let fill = loop_cache_fill(spec, &l.tile, body, Residency::Memory, target);
    // The 256 blocks each fill 8 rows of `b` and 8 values of `a`; the 64 KiB of `c` once, each
    // line paying memory's weight beyond a held line's.
    let c_lines = 16384 * 4 / 64;
    let extra = target.level(Level::GL).line_cost - target.least_line_cost(Level::GL, Residency::L2);
    assert_eq!(fill, 256 * cache_fill(body, Residency::Memory, target) - 255 * c_lines * extra);
    // Each block starts 8 streams, one per row, that no earlier block led into: a page of each
    // row goes unprefetched (`restarted_lines`; a spread loop would continue its streams).
    // Otherwise the loop costs its iterations and the fills.
    let restarts = restarted_lines(&rows.spec, &l.tile, target);
    assert_eq!(restarts, 8 * 64);
    let iteration =
        impl_cost(&l.body, target).unwrap().main + restarts * target.unprefetched_line_cost(Residency::Memory);
    assert_eq!(impl_cost(&rows, target).unwrap().main, 256 * iteration + fill);
    common::check_impl(&imp, target);
}

#[test]
fn the_search_streams_the_bf16_matrix_with_the_output_held_in_l2() {
    let target = TargetId::X86Avx512.target();
    let spec = Spec::parse_for("Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial)", target).unwrap();
    let imp = Synthesizer::new(target).synthesize(&spec).unwrap();
    // Some loop walks blocks of whole rows of `b`, no more at once than the prefetcher
    // follows: it keeps all of `c`. Charged a fill of `c` on every iteration, the search read
    // 32 whole rows at a time and each in 8 KiB pieces, 8 rows side by side, with a strip of
    // `c` in L1, a kernel that ran slower than this one.
    let streams = target.streams.prefetch_streams;
    let mut whole_rows = false;
    imp.visit(&mut |node| {
        if let ImplNode::Loop(l) = &node.node {
            whole_rows |= l.tile.len() == 4 && l.tile[3] == 16384 && l.tile[2] <= streams;
        }
    });
    assert!(whole_rows, "{imp}");
}
