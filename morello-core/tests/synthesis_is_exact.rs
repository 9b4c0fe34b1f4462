//! Synthesis finds the same optimum as exhaustive search, and what it returns costs what it
//! claims and fits its limits.

mod common;

use common::limits::{sampled_boxes, solve_small_specs};
use morello_core::cost::{impl_cost, residency};
use morello_core::level::Level;
use morello_core::rewrite::Action;
use morello_core::search::{Synthesizer, actions, exhaustive, spec_lower_bound};
use morello_core::spec::Spec;
use morello_core::target::{Cache, Residency, StreamCost, Target, X86_AVX2, X86_AVX512};
use proptest::prelude::*;

/// What [`check_on`] found for one Spec.
struct Checked {
    /// The optimal main cost, `None` if the Spec has no implementation.
    optimum: Option<u64>,
    /// How many complete implementations were enumerated, if that was feasible.
    enumerated: Option<usize>,
}

/// Checks one Spec against both reference searches (tree enumeration only when small enough).
fn check(text: &str) -> Checked {
    check_on(text, &X86_AVX2)
}

/// [`check`] on `target`.
fn check_on(text: &str, target: &'static Target) -> Checked {
    let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
    let reference = exhaustive::optimal_cost(&spec, target).map(|c| c.main);
    let mut synth = Synthesizer::new(target);
    let found = synth.optimal_cost(&spec).map(|c| c.main);
    assert_eq!(found, reference, "optimum of {spec} on {}", target.name);
    let enumerated = exhaustive::all_impls(&spec, target, 30_000);
    if let Some(impls) = &enumerated {
        let minimum = impls.iter().map(|i| impl_cost(i, target).expect("complete").main).min();
        assert_eq!(found, minimum, "minimum over all {} implementations of {spec}", impls.len());
    }
    if let Some(cost) = found {
        let imp = synth.synthesize(&spec).expect("satisfiable");
        let recomputed = impl_cost(&imp, target).expect("complete");
        assert_eq!(recomputed.main, cost, "the returned implementation of {spec} costs what was claimed");
        assert!(recomputed.peak.fits_within(spec.limits()), "{spec} peaks at {}", recomputed.peak);
    } else {
        assert!(synth.synthesize(&spec).is_err());
    }
    Checked { optimum: found, enumerated: enumerated.map(|i| i.len()) }
}

#[test]
fn tiny_specs_match_full_enumeration() {
    for text in [
        "(MatmulAccum(1x1x1x2, (f32, L1), (f32, L1), (f32, L1)), [8, 64, 256, 0])",
        "(Matmul(1x1x2x1, (u32, L1), (u32, L1), (u32, RF)), [12, 0, 256, 0])",
        "(Matmul(1x2x1x2, (f32, L1), (f32, L1), (f32, RF)), [16, 0, 64, 0])",
        "(Matmul(1x1x2x2, (f32, L1), (f32, L1), (f32, L1)), [4, 32, 64, 0])",
        "(Move(2x2, (f32, L1), (f32, L1, col_major)), [8, 32, 64, 0])",
        "(FillZero(1x4, (f32, GL)), [8, 32, 64, 128])",
    ] {
        let count = check(text).enumerated.unwrap_or_else(|| panic!("{text}: too many implementations to enumerate"));
        assert!(count > 1, "{text}: only {count} implementation(s), nothing to compare");
    }
}

#[test]
fn small_specs_match_exhaustive_dynamic_programming() {
    let _ = check("(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 256, 512])");
    let _ = check("(MatmulAccum(1x2x1x8, (f32, L1), (f32, L1), (f32, VRF, row_major, v8)), [16, 64, 512, 1024])");
    let _ = check("(Matmul(1x3x2x3, (u32, GL), (u32, GL), (u32, GL)), [16, 64, 256, 512])");
    let _ = check("(Move(2x8, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])");
    let _ = check("(Move(1x2x8, (f32, GL), (f32, GL, [0, 2, 1, 2 p4])), [16, 64, 256, 1024])");
    let _ = check("(Matmul(1x4x4x4, (f32, L1), (f32, L1), (f32, L1)), [32, 128, 1024, 0])");
}

/// The bound counts what a Matmul's inputs in L1 or global memory cost on their way out of L1
/// (`search::l1_reads`): on AVX2 a move into registers pays 2 per line and 1 per vector, a
/// broadcast's scalar a quarter of a unit per value, a dot product 2 per line (only along a
/// contiguous `k`), `MultAdd` 2 per value; nothing for an input that an output in registers
/// lets the broadcasts take as scalars. An rhs in global memory may reach L1 for free, in a
/// Spec held in L2 (a streamed fill, `cost::streamed_line_weight`). The search agrees with the
/// reference on such Specs in f32, bf16 and u8, with the output in L1, in global memory and in
/// registers along `n` and along `m`, on AVX2 and AVX-512, and the bound is below the optimum.
/// Checks `text` (a satisfiable Spec with limits) against both reference searches, and that
/// its lower bound is at most its optimum on `target`.
fn check_bound_below_optimum(text: &str, target: &'static Target) {
    let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
    let optimum = check_on(text, target).optimum.unwrap_or_else(|| panic!("{text} is satisfiable"));
    let bound = spec_lower_bound(spec.logical(), target);
    assert!(bound <= optimum, "{text}: bound {bound} above the optimum {optimum} on {}", target.name);
}

#[test]
fn l1_read_bounds_match_exhaustive_dynamic_programming() {
    let limits = "[16, 256, 512, 1024]";
    for (text, target) in [
        ("MatmulAccum(1x1x4x16, (f32, GL), (f32, GL), (f32, L1))", &X86_AVX2),
        ("MatmulAccum(1x2x2x16, (f32, GL), (f32, GL), (f32, GL))", &X86_AVX2),
        ("MatmulAccum(1x4x2x8, (f32, GL), (f32, GL), (f32, L1))", &X86_AVX2),
        ("MatmulAccum(1x1x8x8, (f32, GL), (f32, GL, col_major), (f32, L1))", &X86_AVX2),
        ("MatmulAccum(1x2x4x16, (f32, GL), (f32, GL), (f32, VRF, row_major, v8))", &X86_AVX2),
        ("MatmulAccum(1x8x4x2, (f32, GL), (f32, GL), (f32, VRF, col_major, v8))", &X86_AVX2),
        ("MatmulAccum(1x1x2x32, (bf16, GL), (bf16, GL), (f32, L1))", &X86_AVX2),
        ("MatmulAccum(1x1x2x64, (u8, GL), (u8, GL), (u8, L1))", &X86_AVX2),
        ("MatmulAccum(1x2x4x16, (f32, GL), (f32, GL), (f32, VRF, row_major, v16))", &X86_AVX512),
        ("MatmulAccum(1x1x2x32, (f32, GL), (f32, GL), (f32, L1))", &X86_AVX512),
        ("MatmulAccum(1x2x4x16, (f32, L1), (f32, L1), (f32, VRF, row_major, v8))", &X86_AVX2),
        ("MatmulAccum(1x1x16x1, (f32, L1), (f32, L1), (f32, L1))", &X86_AVX2),
        ("Matmul(1x2x2x8, (f32, L1), (f32, L1), (f32, L1))", &X86_AVX2),
        ("Matmul(1x2x2x16, (f32, L1), (f32, L1), (f32, L1))", &X86_AVX512),
    ] {
        check_bound_below_optimum(&format!("({text}, {limits})"), target);
    }
}

/// The search peels Matmuls in memory whose panels of `b` do not fit L1
/// (`search::enumerate`): on a copy of AVX2 with 1 KiB of L1, those with `k` over 8 (128-byte
/// rows) that do not accumulate. The search agrees with the reference where peels are in the
/// space.
#[test]
fn peeled_reductions_match_exhaustive_dynamic_programming() {
    let mut levels = X86_AVX2.levels;
    levels[Level::L1.index()].capacity_bytes = 1024;
    let target: &'static Target = Box::leak(Box::new(Target { levels, ..X86_AVX2 }));
    for text in [
        "(Matmul(1x2x32x8, (f32, GL), (f32, GL), (f32, GL)), [16, 128, 1024, 4096])",
        "(Matmul(1x1x64x8, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 1024, 4096])",
    ] {
        let spec = Spec::parse_for(text, target).unwrap();
        let peels = actions(&spec, target).into_iter().filter(|a| matches!(a, Action::Peel { .. })).count();
        assert_eq!(peels, 1, "{text}: the search does not peel it");
        assert!(check_on(text, target).optimum.is_some(), "{text} is satisfiable");
    }
}

/// The lower bounds on moves depend on the target's line weights and vector width (see
/// `search::bounds`), and AVX-512's differ from AVX2's (L1 lines weigh 1, registers are 64
/// bytes), so moves to and from global memory, a cast and a relayout are checked there too.
#[test]
fn avx512_moves_and_products_match_exhaustive_dynamic_programming() {
    for text in [
        "(Move(2x16, (f32, GL), (f32, GL, col_major)), [16, 256, 512, 1024])",
        "(Move(2x16, (f32, L1), (f32, GL)), [16, 256, 512, 1024])",
        "(Move(1x32, (bf16, GL), (f32, L1)), [16, 256, 512, 1024])",
        "(Move(4x4, (f32, L1), (f32, L1, col_major)), [16, 256, 512, 1024])",
        "(Matmul(1x1x2x16, (f32, GL), (f32, GL), (f32, GL)), [16, 256, 512, 1024])",
        "(Matmul(1x1x2x32, (bf16, GL), (bf16, GL), (f32, GL)), [16, 256, 512, 1024])",
        "(MatmulAccum(1x2x1x16, (f32, L1), (f32, GL), (f32, L1)), [16, 256, 512, 1024])",
    ] {
        let _ = check_on(text, &X86_AVX512);
    }
}

/// The lower bounds of Matmuls whose output is in vector registers count products in that
/// output's vector size, those of Matmuls that do not accumulate count zeroing their output,
/// and those of fills count every element (see `search::bounds`); a permute between vector
/// registers may cost nothing.
#[test]
fn register_outputs_fills_and_register_permutes_match_exhaustive_dynamic_programming() {
    for text in [
        "(MatmulAccum(1x1x4x8, (f32, L1), (f32, L1), (f32, VRF, row_major, v4)), [16, 256, 512, 1024])",
        "(Matmul(1x2x2x8, (f32, L1), (f32, L1), (f32, VRF, row_major, v8)), [16, 512, 512, 1024])",
        "(Matmul(1x2x2x16, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 512, 1024])",
        "(FillZero(4x16, (f32, L1)), [16, 256, 512, 1024])",
        "(FillZero(2x8, (f32, VRF, row_major, v4)), [16, 256, 512, 1024])",
        "(Move(2x2x4, (f32, VRF, row_major, v4), (f32, VRF, [1, 0, 2], v4)), [16, 256, 512, 1024])",
    ] {
        let _ = check_on(text, &X86_AVX512);
    }
}

/// The prefetch-stream term (`cost::scattered_lines`) charges loops over operands with rows of
/// a page or more, which no Spec small enough for exhaustive search has on the real targets. On
/// a copy of AVX2 whose prefetchers follow one stream and whose pages are 8 bytes, it charges
/// loops of small Specs, and synthesis, whose lower bounds include it, must still find the
/// exhaustive optimum. The copy also has 64 bytes of L1, so that these Specs are not held in L1
/// whole (`morello_core::residency`) and loop over global memory.
#[test]
fn small_specs_match_exhaustive_search_when_loops_pay_for_streams() {
    let mut levels = X86_AVX2.levels;
    levels[Level::L1.index()].capacity_bytes = 64;
    let without_streams: &'static Target = Box::leak(Box::new(Target { levels, ..X86_AVX2 }));
    let streams = StreamCost { page_bytes: 8, stream_bytes: 16, prefetch_streams: 1, extra_percent: 50 };
    let target: &'static Target = Box::leak(Box::new(Target { levels, streams, ..X86_AVX2 }));
    let mut changed = 0;
    for text in [
        "(Move(2x8, (f32, GL), (f32, GL, col_major)), [16, 64, 64, 512])",
        "(Move(4x8, (f32, GL), (f32, GL, col_major)), [16, 64, 64, 512])",
        "(Move(4x8, (f32, GL), (f32, GL, col_major)), [16, 64, 32, 512])",
    ] {
        let with_streams = check_on(text, target).optimum;
        let spec = Spec::parse_for(text, without_streams).unwrap();
        let without = Synthesizer::new(without_streams).optimal_cost(&spec).map(|c| c.main);
        changed += usize::from(with_streams != without);
    }
    assert!(changed > 0, "the term changed no optimum: these Specs do not exercise it");
}

/// The cache terms (`morello_core::cost::residency` and the fills) keep synthesis exact: on a
/// copy of AVX2 whose L2 holds 256 bytes (so small Specs are held in L2 and larger ones are
/// not, and the search crosses that line) and whose L1 holds 64 bytes (so they loop over
/// global memory rather than being held in L1 whole), synthesis still matches exhaustive
/// search, and the term changes some optimum against the same copy without L2 or L3.
#[test]
fn small_specs_match_exhaustive_search_across_the_l2_line() {
    let target = with_caches(Some(256), None);
    let without = with_caches(None, None);
    let changed = exact_across_cache_lines(target, without);
    assert!(changed > 0, "the term changed no optimum: these Specs do not exercise it");
}

/// The same with an L3 too: L2 holds 128 bytes and L3 256, so the Specs below are held in
/// neither, their tiles cross into L3 and then into L2, and first reads telescope across both
/// lines; the L3 changes some optimum against the same copy without it.
#[test]
fn small_specs_match_exhaustive_search_across_the_l2_and_l3_lines() {
    let target = with_caches(Some(128), Some(256));
    let without_l3 = with_caches(Some(128), None);
    let changed = exact_across_cache_lines(target, without_l3);
    assert!(changed > 0, "the L3 changed no optimum: these Specs do not exercise it");
}

/// A copy of AVX2 with 64 bytes of L1 and the given L2 and L3 capacities.
fn with_caches(l2: Option<u64>, l3: Option<u64>) -> &'static Target {
    let mut levels = X86_AVX2.levels;
    levels[Level::L1.index()].capacity_bytes = 64;
    let cache = |capacity_bytes, of: Option<Cache>| of.map(|c| Cache { capacity_bytes, ..c });
    let l2 = l2.and_then(|c| cache(c, X86_AVX2.l2));
    let l3 = l3.and_then(|c| cache(c, X86_AVX2.l3));
    Box::leak(Box::new(Target { levels, l2, l3, ..X86_AVX2 }))
}

/// Checks synthesis against exhaustive search on `target` for Specs no cache of it holds,
/// and counts those whose optimum differs on `other`.
fn exact_across_cache_lines(target: &'static Target, other: &'static Target) -> usize {
    let mut changed = 0;
    for text in [
        "(Move(4x16, (f32, GL), (f32, GL, col_major)), [16, 64, 64, 1024])",
        "(Move(8x8, (f32, GL), (f32, GL, col_major)), [16, 64, 32, 1024])",
        "(Matmul(1x2x4x16, (f32, GL), (f32, GL), (f32, GL)), [16, 128, 64, 1024])",
        "(MatmulAccum(1x4x4x8, (f32, GL), (f32, GL), (f32, GL)), [16, 128, 64, 1024])",
    ] {
        let spec = Spec::parse_for(text, target).unwrap();
        assert_eq!(residency(spec.logical(), target), Residency::Memory, "{text}");
        let optimum = check_on(text, target).optimum;
        let elsewhere = Synthesizer::new(other).optimal_cost(&spec).map(|c| c.main);
        changed += usize::from(optimum != elsewhere);
    }
    changed
}

#[test]
fn unsatisfiable_specs_are_reported() {
    // A non-accumulating Matmul whose output lives in VRF cannot even be zeroed piecewise.
    let _ = check("(Matmul(1x2x2x8, (f32, L1), (f32, L1), (f32, VRF, row_major, v8)), [16, 64, 512, 0])");
    // Not enough L1 to bring any GL data in.
    let _ = check("(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 32, 1024])");
}

#[test]
fn a_shared_memo_gives_the_same_answers_as_fresh_ones() {
    let texts = [
        "(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 4096, 65536])",
        "(Matmul(1x2x4x4, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 2048, 65536])",
        "(MatmulAccum(1x4x2x4, (f32, L1), (f32, GL), (f32, L1)), [32, 256, 4096, 65536])",
        "(Move(4x8, (f32, GL), (f32, GL, col_major)), [64, 512, 4096, 65536])",
    ];
    let mut shared = Synthesizer::new(&X86_AVX2);
    for text in texts {
        let spec: Spec = text.parse().unwrap();
        let fresh = Synthesizer::new(&X86_AVX2).optimal_cost(&spec).map(|c| c.main);
        assert_eq!(shared.optimal_cost(&spec).map(|c| c.main), fresh, "{spec}");
    }
}

/// Every sampled memo box holds the exhaustive optimum at limits inside it.
#[test]
fn every_memo_box_answers_every_limit_inside_it() {
    let mut synth = Synthesizer::new(&X86_AVX2);
    solve_small_specs(&mut synth);
    for (spec, entry) in sampled_boxes(&synth, &X86_AVX2, 0x2545_f491_4f6c_dd1d) {
        let claimed = entry.decision.as_ref().map(|d| d.cost.main);
        let exhaustive = exhaustive::optimal_cost(&spec, &X86_AVX2).map(|c| c.main);
        assert_eq!(claimed, exhaustive, "the box [{}, {}] of {spec} is wrong", entry.lower, entry.upper);
        if let Some(cost) = claimed {
            let imp = synth.synthesize(&spec).expect("satisfiable");
            let recomputed = impl_cost(&imp, &X86_AVX2).unwrap();
            assert_eq!(recomputed.main, cost, "{spec}");
            assert!(recomputed.peak.fits_within(spec.limits()), "{spec} peaks at {}", recomputed.peak);
        }
    }
}

fn small_spec() -> impl Strategy<Value = String> {
    let dim = 1u32..=4;
    let level = prop::sample::select(vec!["GL", "L1"]);
    let dtype = prop::sample::select(vec!["f32", "u32"]);
    let limits = (
        prop::sample::select(vec![0u64, 8, 16, 32]),
        prop::sample::select(vec![0u64, 32, 64, 128]),
        prop::sample::select(vec![0u64, 64, 128, 256, 512]),
        prop::sample::select(vec![0u64, 128, 512, 2048]),
    );
    let primitive = prop::sample::select(vec!["Matmul", "MatmulAccum", "Move"]);
    (primitive, [dim.clone(), dim.clone(), dim.clone(), dim], [level.clone(), level.clone(), level], dtype, limits)
        .prop_map(|(p, d, l, t, (rf, vrf, l1, gl))| {
            let limits = format!("[{rf}, {vrf}, {l1}, {gl}]");
            if p == "Move" {
                format!("({p}({}x{}, ({t}, {}), ({t}, {}, col_major)), {limits})", d[0], d[1], l[0], l[1])
            } else {
                format!(
                    "({p}(1x{}x{}x{}, ({t}, {}), ({t}, {}), ({t}, {})), {limits})",
                    d[0], d[1], d[2], l[0], l[1], l[2]
                )
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_small_specs_match_exhaustive_search(text in small_spec()) {
        let _ = check(&text);
    }
}

/// A Conv's bound counts its multiply-adds as the Matmul kernels' after the spatial split
/// (no kernel implements a Conv). The search agrees with the reference on small Convs in f32
/// and bf16, accumulating or not, with the output in memory or in registers, on AVX2 and
/// AVX-512, and the bound is below the optimum.
#[test]
fn conv_bounds_match_exhaustive_dynamic_programming() {
    let limits = "[16, 256, 512, 1024]";
    for (text, target) in [
        ("Conv(1x1x2x2x2x2x2, (f32, GL), (f32, GL), (f32, GL))", &X86_AVX2),
        ("ConvAccum(1x2x2x1x2x2x1, (f32, L1), (f32, L1), (f32, L1))", &X86_AVX2),
        ("ConvAccum(1x8x1x1x1x2x1, (f32, L1), (f32, L1), (f32, VRF, row_major, v8))", &X86_AVX2),
        ("ConvAccum(1x1x2x2x1x2x2, (bf16, GL), (bf16, GL), (f32, L1))", &X86_AVX2),
        ("Conv(1x16x1x1x2x1x2, (f32, GL), (f32, GL), (f32, GL))", &X86_AVX512),
        ("ConvAccum(1x16x2x1x1x2x1, (f32, L1), (f32, L1), (f32, L1))", &X86_AVX512),
    ] {
        check_bound_below_optimum(&format!("({text}, {limits})"), target);
    }
}
