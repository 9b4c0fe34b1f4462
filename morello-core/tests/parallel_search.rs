//! A search on several threads returns what a search on one thread does: the same optimum, the
//! same implementation and the same C; every box it records holds the exhaustive optimum; and
//! its kernels compute what their Specs say.

mod common;

use common::limits::{sampled_boxes, solve_small_specs};
use morello_core::codegen::emit_c;
use morello_core::cost::impl_cost;
use morello_core::imp::Impl;
use morello_core::search::{Synthesizer, exhaustive};
use morello_core::spec::Spec;
use morello_core::target::{Target, X86_AVX2, X86_AVX512};

/// `text` synthesized with `threads` threads by a fresh synthesizer.
fn synthesize(text: &str, target: &'static Target, threads: usize) -> Impl {
    let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut synth = Synthesizer::new(target);
    synth.set_threads(threads);
    synth.synthesize(&spec).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Synthesizes each Spec on 1, 2 and 3 threads: the implementations and their C are identical,
/// and the kernel found on several threads agrees with the reference evaluator.
fn check_same_on_threads(texts: &[&str], target: &'static Target) {
    for text in texts {
        let alone = synthesize(text, target, 1);
        let c_alone = emit_c(&alone, "kernel", target).expect("complete").source;
        for threads in [2, 3] {
            let together = synthesize(text, target, threads);
            assert_eq!(
                impl_cost(&together, target),
                impl_cost(&alone, target),
                "{text} costs differently on {threads} threads"
            );
            assert_eq!(together, alone, "{text} is implemented differently on {threads} threads");
            let c_together = emit_c(&together, "kernel", target).expect("complete").source;
            assert_eq!(c_together, c_alone, "{text} emits different C on {threads} threads");
        }
        common::check_impl(&alone, target);
    }
}

#[test]
fn matmuls_are_implemented_alike_on_any_number_of_threads() {
    check_same_on_threads(
        &[
            "Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL), serial)",
            "Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL), serial)",
            "Matmul(1x12x20x8, (u32, GL), (u32, GL), (u32, GL))",
            "Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL))",
        ],
        &X86_AVX2,
    );
    check_same_on_threads(
        &[
            "Matmul(1x48x48x48, (f32, GL), (f32, GL), (f32, GL), serial)",
            "Matmul(1x2x32x16, (bf16, GL), (bf16, GL, col_major), (f32, GL), serial)",
        ],
        &X86_AVX512,
    );
}

#[test]
fn other_primitives_are_implemented_alike_on_any_number_of_threads() {
    check_same_on_threads(
        &[
            "Softmax(4x64, scan=1, (f32, GL), (f32, GL))",
            "Move(16x32, (f32, GL, row_major), (f32, GL, col_major))",
            "Conv(1x1x2x3x3x2x2, (f32, GL), (f32, GL), (f32, GL), serial)",
        ],
        &X86_AVX2,
    );
}

/// The optimum on several threads equals exhaustive search's, at tight limits too.
#[test]
fn optima_on_two_threads_match_exhaustive_search() {
    for text in [
        "(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 4096, 65536])",
        "(Matmul(1x2x4x4, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 2048, 65536])",
        "(MatmulAccum(1x4x2x4, (f32, L1), (f32, GL), (f32, L1)), [32, 256, 4096, 65536])",
        "(Move(4x8, (f32, GL), (f32, GL, col_major)), [64, 512, 4096, 65536])",
        "(Matmul(1x2x4x8, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 64, 1024])",
    ] {
        let spec: Spec = text.parse().unwrap();
        let mut synth = Synthesizer::new(&X86_AVX2);
        synth.set_threads(2);
        let found = synth.optimal_cost(&spec).map(|c| c.main);
        let reference = exhaustive::optimal_cost(&spec, &X86_AVX2).map(|c| c.main);
        assert_eq!(found, reference, "{spec}");
    }
}

/// Every sampled box that a search on two threads recorded holds the exhaustive optimum.
#[test]
fn every_box_of_a_two_thread_search_answers_every_limit_inside_it() {
    let mut synth = Synthesizer::new(&X86_AVX2);
    synth.set_threads(2);
    solve_small_specs(&mut synth);
    for (spec, entry) in sampled_boxes(&synth, &X86_AVX2, 0x9e37_79b9_7f4a_7c15) {
        let claimed = entry.decision.as_ref().map(|d| d.cost.main);
        let exhaustive = exhaustive::optimal_cost(&spec, &X86_AVX2).map(|c| c.main);
        assert_eq!(claimed, exhaustive, "the box [{}, {}] of {spec} is wrong", entry.lower, entry.upper);
    }
}

/// A deadline stops every thread, and a new search from the database it left still finds the
/// optimum: nothing a cut-short thread saw was recorded as proved.
#[test]
fn a_deadline_on_several_threads_leaves_only_exact_results() {
    let text = "Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL), serial)";
    let spec = Spec::parse_for(text, &X86_AVX2).unwrap();
    let expected = Synthesizer::new(&X86_AVX2).optimal_cost(&spec).map(|c| c.main);
    let mut synth = Synthesizer::new(&X86_AVX2);
    synth.set_threads(2);
    synth.set_deadline(std::time::Instant::now() + std::time::Duration::from_millis(30));
    assert!(synth.optimal_cost(&spec).is_none() && synth.timed_out(), "30 ms is too short to search {text}");
    let db = synth.into_database();
    assert!(!db.is_empty(), "nothing was solved before the deadline");
    let mut from_partial = Synthesizer::with_database(db);
    from_partial.set_threads(2);
    assert_eq!(from_partial.optimal_cost(&spec).map(|c| c.main), expected);
}
