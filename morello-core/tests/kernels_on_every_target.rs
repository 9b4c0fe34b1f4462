//! Every microkernel, in isolation, agrees with the reference evaluator on every target this
//! machine can run and compiles for the others; every kernel and every rewrite is reachable
//! from the search.
//!
//! The Specs a kernel is tested on are not written by hand: synthesis runs from a handful of
//! root Specs on each target, and every Spec the search visited is offered to every kernel.
//! So a kernel counts as covered on a target only if the search actually reaches a Spec it
//! implements there. A kernel that no visited Spec on a target reaches must be rejected by
//! that target for a missing ISA feature (checked on a Spec another target reached). And no
//! kernel costs less than the lower bound the search prunes with.

mod common;

use common::{Verified, check_impl};
use morello_core::kernels::{KernelKind, KernelMismatch};
use morello_core::schedule::PartialImpl;
use morello_core::search::{Synthesizer, actions, spec_lower_bound};
use morello_core::spec::{LogicalSpec, Spec};
use morello_core::target::{TargetId, X86_AVX512};
use std::collections::{BTreeMap, BTreeSet};

/// Where the search starts. Small enough for a debug build, varied enough to reach every
/// kernel: matrix products in f32, integers and bf16 (including the `vdpbf16ps` pair layout),
/// relayouts, fills, broadcasts, divisions, maxima and the softmax family.
const ROOTS: &[&str] = &[
    "MatmulAccum(1x2x4x32, (f32, L1), (f32, L1), (f32, L1))",
    "MatmulAccum(1x2x4x32, (u16, L1), (u16, L1), (u16, L1))",
    "MatmulAccum(1x1x64x1, (f32, L1), (f32, L1), (f32, L1))",
    "MatmulAccum(1x1x64x1, (bf16, L1), (bf16, L1), (f32, L1))",
    "MatmulAccum(1x1x64x1, (f32, L1), (bf16, L1), (f32, L1))",
    "MatmulAccum(1x1x2x32, (bf16, L1), (bf16, L1), (f32, L1))",
    "MatmulAccum(1x2x8x16, (bf16, L1), (bf16, L1, [1, 2, 1 p2]), (f32, L1))",
    "Matmul(1x2x2x8, (u8, L1), (u8, L1), (u32, L1))",
    "Move(8x8, (f32, L1), (f32, L1, col_major))",
    "Move(2x16, (bf16, L1), (f32, L1))",
    "Move(4x16, (u8, GL), (u8, GL))",
    "FillZero(4x16, (f32, GL))",
    "FillNegInf(1x16, (f32, L1))",
    "FillMin(1x32, (u8, L1))",
    "OnePrefix(2x3, (f32, L1), (f32, L1))",
    "Broadcast(2x16, dim=1, (f32, L1), (f32, L1))",
    "DivideVec(32, (f32, L1), (f32, L1))",
    "DivideVecScalar(2x16, scan=1, (f32, L1), (f32, L1))",
    "MaxAccum(2x64, dim=1, (f32, L1), (f32, L1))",
    "MaxAccum(2x64, dim=1, (u8, L1), (u8, L1))",
    "Softmax(1x32, scan=1, (f32, L1), (f32, L1))",
    "SoftmaxComplete(1x32, scan=1, (f32, L1), (f32, L1), (f32, L1), (f32, L1))",
    "SoftmaxDenominatorAndMax(1x32, scan=1, (f32, L1), (f32, L1), (f32, L1))",
    "SoftmaxDenominatorAndMaxAccum(1x3, scan=1, (f32, L1), (f32, L1), (f32, L1))",
    "SoftmaxDenominatorAndMaxAccum(1x64, scan=1, (f32, L1), (f32, L1), (f32, L1))",
    "SoftmaxDenominatorAndMaxFromParts(1x32, scan=1, (f32, L1), (f32, L1), (f32, L1), (f32, L1))",
];

/// What the search reached on one target.
struct Explored {
    /// Per kernel, the visited Specs it implements, in a fixed order.
    kernels: BTreeMap<KernelKind, Vec<Spec>>,
}

fn explore(id: TargetId) -> Explored {
    let target = id.target();
    let mut synth = Synthesizer::new(target);
    for root in ROOTS {
        let spec = Spec::parse_for(root, target).unwrap_or_else(|e| panic!("{root}: {e}"));
        assert!(synth.optimal_cost(&spec).is_some(), "{root} has an implementation on {}", target.name);
    }
    let visited: BTreeSet<LogicalSpec> = synth.memo().iter().map(|(logical, _)| logical.clone()).collect();
    let mut kernels: BTreeMap<KernelKind, Vec<Spec>> = BTreeMap::new();
    for logical in visited {
        let spec = Spec::new(logical, target.max_limits());
        for &kernel in KernelKind::ALL {
            if kernel.applies(spec.logical(), target).is_ok() {
                // The search prunes with lower bounds; one above a kernel's cost loses optima.
                let (cost, bound) = (kernel.cost(spec.logical(), target), spec_lower_bound(spec.logical(), target));
                assert!(cost >= bound, "{kernel} costs {cost} on {spec} ({}), below the bound {bound}", target.name);
                kernels.entry(kernel).or_default().push(spec.clone());
            }
        }
    }
    Explored { kernels }
}

/// Up to two Specs per kernel: the smallest and the largest it was offered.
fn samples(specs: &[Spec]) -> Vec<&Spec> {
    let smallest = specs.iter().min_by_key(|s| s.logical().volume()).expect("non-empty");
    let largest = specs.iter().max_by_key(|s| s.logical().volume()).expect("non-empty");
    if smallest == largest { vec![smallest] } else { vec![smallest, largest] }
}

#[test]
fn every_kernel_matches_the_reference_on_every_target() {
    let explored: Vec<(TargetId, Explored)> = TargetId::ALL.iter().map(|&id| (id, explore(id))).collect();
    let unreached: Vec<KernelKind> = KernelKind::ALL
        .iter()
        .copied()
        .filter(|k| explored.iter().all(|(_, found)| !found.kernels.contains_key(k)))
        .collect();
    assert!(unreached.is_empty(), "the search reaches these kernels on no target: {unreached:?}");
    let mut report = String::new();
    for &kernel in KernelKind::ALL {
        let mut line = format!("{:<44}", kernel.name());
        for (id, found) in &explored {
            let target = id.target();
            // Specs the search reached on this target, else ones it reached on another
            // target that this one accepts too (the search may prune a kernel's Specs on one
            // target where a cheaper kernel exists).
            let specs: Vec<Spec> = found.kernels.get(&kernel).cloned().unwrap_or_else(|| {
                explored
                    .iter()
                    .filter_map(|(_, other)| other.kernels.get(&kernel))
                    .flatten()
                    .filter(|s| Spec::parse_for(&s.to_string(), target).is_ok())
                    .filter(|s| kernel.applies(s.logical(), target).is_ok())
                    .map(|s| s.with_limits(target.max_limits()))
                    .collect()
            });
            let status = if specs.is_empty() {
                let elsewhere =
                    explored.iter().find_map(|(_, other)| other.kernels.get(&kernel)).expect("reached on some target");
                let reason = kernel.applies(elsewhere[0].logical(), target);
                assert!(
                    matches!(reason, Err(KernelMismatch::Target { .. })),
                    "{kernel} applies to no Spec on {} though the target does not rule it out: {reason:?}",
                    target.name
                );
                "n/a (target lacks a feature)"
            } else {
                let mut verified = Verified::Ran;
                for spec in samples(&specs) {
                    let imp = PartialImpl::new(spec.clone(), target)
                        .select(kernel)
                        .unwrap_or_else(|e| panic!("select({kernel}) on {spec} ({}): {e}", target.name))
                        .into_impl();
                    verified = check_impl(&imp, target);
                }
                match verified {
                    Verified::Ran => "ran",
                    Verified::Compiled => "compiled",
                }
            };
            line.push_str(&format!(" {}: {status:<30}", id.name()));
        }
        report.push_str(line.trim_end());
        report.push('\n');
    }
    eprintln!("kernel coverage (ran = verified against the reference evaluator):\n{report}");
}

#[test]
fn every_rewrite_is_reachable_from_the_search() {
    let every = [
        "tile",
        "move_param",
        "to_accum",
        "select",
        "bufferize",
        "spatial_split",
        "broadcast_first",
        "to_softmax_parts",
        "to_softmax_parts_recompute",
        "to_max_and_denominator",
        "to_max_and_unscaled",
        "parallel_split",
        "spread",
    ];
    let mut synth = Synthesizer::new(&X86_AVX512);
    let mut reached = BTreeSet::new();
    // Roots whose search trees contain every rewrite: a Compose (bufferize), a Conv (spatial
    // split), a DivideVecScalar (broadcast-first), a long, non-serial softmax (every softmax
    // decomposition including the parallel split), and a vector-matrix product over rows of
    // 16 KiB (spread loops).
    for root in [
        "Compose([Matmul(1x2x2x2), Matmul(1x2x2x2) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        "ConvAccum(1x1x1x3x3x2x2, (f32, GL), (f32, GL), (f32, GL))",
        "DivideVecScalar(1x8, scan=1, (f32, GL), (f32, GL))",
        "Softmax(1x4096, scan=1, (f32, GL), (f32, GL))",
        "MatmulAccum(1x1x4x4096, (f32, GL), (f32, GL), (f32, GL), serial)",
    ] {
        let spec = Spec::parse_for(root, &X86_AVX512).unwrap_or_else(|e| panic!("{root}: {e}"));
        for action in actions(&spec, &X86_AVX512) {
            if action.apply(&spec, &X86_AVX512).is_ok() {
                reached.insert(action.name());
            }
        }
        // The decompositions' children, one level down (max-and-denominator and the parallel
        // split apply to the parts a softmax decomposes into).
        let visited: Vec<LogicalSpec> = {
            let _ = synth.optimal_cost(&spec);
            synth.memo().iter().map(|(l, _)| l.clone()).collect()
        };
        for logical in visited {
            let spec = Spec::new(logical, X86_AVX512.max_limits());
            for action in actions(&spec, &X86_AVX512) {
                if !reached.contains(action.name()) && action.apply(&spec, &X86_AVX512).is_ok() {
                    reached.insert(action.name());
                }
            }
        }
    }
    let missing: Vec<&str> = every.iter().copied().filter(|r| !reached.contains(r)).collect();
    assert!(missing.is_empty(), "rewrites the search never applies: {missing:?}");
}

#[test]
fn merging_empty_softmax_chunks_stays_finite() {
    use morello_core::harness::{cpu_supports, run_kernel};
    use morello_core::reference::{HostTensor, Value, compare, evaluate};
    use morello_core::target::X86_AVX2;
    if !cpu_supports(&X86_AVX2) {
        eprintln!("note: this CPU cannot run AVX2 kernels; skipped");
        return;
    }
    // Chunks that saw only −∞ (or nothing) have maximum −∞ and denominator 0. Merged into an
    // empty running result they must leave it empty, not NaN; merged into a running (1, 2)
    // they must leave it unchanged.
    let text = "SoftmaxDenominatorAndMaxFromPartsAccum(1x16, scan=1, (f32, VRF, row_major, v8), \
                (f32, VRF, row_major, v8), (f32, RF), (f32, RF))";
    let spec = Spec::parse_for(text, &X86_AVX2).unwrap();
    let kernel = KernelKind::VectorSoftmaxDenominatorAndMaxFromParts;
    let imp = PartialImpl::new(spec.clone(), &X86_AVX2).select(kernel).unwrap().into_impl();
    let c = morello_core::codegen::emit_c(&imp, "merge", &X86_AVX2).unwrap();
    for (running_max, running_denom) in [(f64::NEG_INFINITY, 0.0), (1.0, 2.0)] {
        let mut inputs: Vec<HostTensor> = spec.operands().iter().map(|t| HostTensor::random(t, 1)).collect();
        for (i, value) in [f64::NEG_INFINITY, 0.0, running_max, running_denom].into_iter().enumerate() {
            inputs[i].fill(Value::Float(value));
        }
        let mut expected = inputs.clone();
        let tolerances = evaluate(spec.logical(), &mut expected);
        assert_eq!(expected[2].get(&[0, 0]).as_f64(), running_max, "the reference keeps the maximum");
        assert_eq!(expected[3].get(&[0, 0]).as_f64(), running_denom, "the reference keeps the denominator");
        for cc in common::compilers() {
            let mut actual = inputs.clone();
            run_kernel(&c, &mut actual, &cc, &X86_AVX2).unwrap();
            assert_eq!(actual[2].get(&[0, 0]).as_f64(), running_max, "{kernel} ({}): maximum", cc.program);
            assert_eq!(actual[3].get(&[0, 0]).as_f64(), running_denom, "{kernel} ({}): denominator", cc.program);
            compare(spec.logical(), &expected, &actual, &tolerances).unwrap_or_else(|m| panic!("{}: {m}", cc.program));
        }
    }
}
