//! The cost model's prefetch-stream term steers the search: a vector-matrix product too large
//! for the caches is synthesized to read its matrix a few rows at a time, the program that
//! sweeps column strips over all rows pays for every line of the matrix, and a matrix packed in
//! panels is read one panel after another.

use morello_core::cost::{impl_cost, loop_cache_fill, residency, scattered_lines};
use morello_core::imp::{Impl, ImplNode};
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::{Residency, Target, TargetId};

/// The gemma.cpp shape of the benchmark: a 128 MiB f32 matrix.
const VECMAT_F32: &str = "Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial)";
const VECMAT_BF16: &str = "Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial)";

fn avx512() -> &'static Target {
    TargetId::X86Avx512.target()
}

/// The most lines any loop of `imp` makes the prefetcher miss per iteration.
fn worst_scattered_lines(imp: &Impl, target: &Target) -> u64 {
    let mut worst = 0;
    imp.visit(&mut |node| {
        if let ImplNode::Loop(l) = &node.node {
            worst = worst.max(scattered_lines(&node.spec, &l.tile, target));
        }
    });
    worst
}

#[test]
fn the_search_reads_a_large_matrix_a_few_rows_at_a_time() {
    let target = avx512();
    for text in [VECMAT_F32, VECMAT_BF16] {
        let spec = Spec::parse_for(text, target).unwrap();
        let imp = Synthesizer::new(target).synthesize(&spec).unwrap();
        // No loop continues more rows than the prefetchers follow: each pays at most the first
        // line of each of its rows, never all of their lines.
        let worst = worst_scattered_lines(&imp, target);
        assert!(worst <= u64::from(target.streams.prefetch_streams), "{text}: {worst} lines:\n{imp}");
    }
}

#[test]
fn a_matrix_in_panels_is_read_one_panel_after_another() {
    let target = avx512();
    let text = "Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [2, 1, 2 p256, 1 p2]), (f32, GL), serial)";
    let spec = Spec::parse_for(text, target).unwrap();
    let imp = Synthesizer::new(target).synthesize(&spec).unwrap();
    assert_eq!(worst_scattered_lines(&imp, target), 0, "{imp}");
    // Reading 16 rows of 8 panels at a time instead (the order this Spec was synthesized in
    // before the term counted panels) pays the first line of each of the 8 pieces.
    let (partial, _) = run_schedule(
        spec,
        "tile([1, 1, 2048, 2048]); move_param(0, L1); to_accum; tile([1, 1, 16, 2048]); synthesize_all;",
        target,
    )
    .unwrap();
    let interleaved = partial.synthesize_all(&mut Synthesizer::new(target)).unwrap();
    assert_eq!(worst_scattered_lines(&interleaved, target), 8, "{interleaved}");
    assert!(impl_cost(&interleaved, target).unwrap().main > impl_cost(&imp, target).unwrap().main);
}

#[test]
fn column_strips_over_all_rows_pay_for_every_line() {
    let target = avx512();
    let spec = Spec::parse_for(VECMAT_F32, target).unwrap();
    let (partial, _) = run_schedule(spec.clone(), "tile([1, 1, 2048, 128]); synthesize_all;", target).unwrap();
    let strips = partial.synthesize_all(&mut Synthesizer::new(target)).unwrap();
    let ImplNode::Loop(l) = &strips.node else { panic!("the schedule starts with a loop:\n{strips}") };
    // 128 strips of 2048 runs of 512 bytes, each run 8 lines that arrive unprefetched. A strip
    // (1 MiB of `b` and the vector) is held in L3, not in L2; the matrix is held nowhere, so
    // the loop also pays each strip's first reads from memory.
    let body_spec = l.body.spec.logical();
    assert_eq!(residency(body_spec, target), Residency::L3);
    assert_eq!(residency(spec.logical(), target), Residency::Memory);
    let body = impl_cost(&l.body, target).unwrap().main;
    let per_strip = body + 2048 * 8 * target.unprefetched_line_cost(Residency::Memory);
    let first_reads = loop_cache_fill(spec.logical(), &l.tile, body_spec, Residency::Memory, target);
    assert!(first_reads > 0);
    assert_eq!(impl_cost(&strips, target).unwrap().main, 128 * per_strip + first_reads);
    let searched = Synthesizer::new(target).synthesize(&spec).unwrap();
    assert!(impl_cost(&searched, target).unwrap().main < 128 * per_strip + first_reads);
}
