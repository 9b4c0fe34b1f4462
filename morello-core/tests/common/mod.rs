//! Shared by the integration tests: the compilers to use and the check of one implementation
//! against the reference evaluator (for tests that run generated C), and limit sampling.
//!
//! clang is used when installed; set `MORELLO_REQUIRE_CLANG=1` (as CI does) to make its absence
//! a failure.

#![allow(dead_code, reason = "each test binary uses a different part of this module")]

pub mod kernel_tiles;
pub mod limits;

use morello_core::codegen::emit_c;
use morello_core::harness::{CCompiler, compile_only, cpu_supports, run_kernel_on_each};
use morello_core::imp::{Impl, ImplNode};
use morello_core::primitive::{Direction, Primitive};
use morello_core::reference::{HostTensor, Value, compare, evaluate};
use morello_core::schedule::ScheduleError;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::Target;

/// gcc, and clang when installed (or required).
pub fn compilers() -> Vec<CCompiler> {
    let gcc = CCompiler::gcc();
    assert!(gcc.is_available(), "gcc is required to test generated C");
    let mut out = vec![gcc];
    let clang = CCompiler::clang();
    if clang.is_available() {
        out.push(clang);
    } else if std::env::var_os("MORELLO_REQUIRE_CLANG").is_some() {
        panic!("MORELLO_REQUIRE_CLANG is set but clang is not installed");
    } else {
        eprintln!("note: clang not found; generated C checked with gcc only");
    }
    out
}

/// Random inputs for `spec` from `seed`, with every output poisoned (NaN or a fixed pattern)
/// so that a kernel which forgets to write an element is caught.
pub fn poisoned_inputs(spec: &Spec, seed: u64) -> Vec<HostTensor> {
    let mut inputs: Vec<HostTensor> =
        spec.operands().iter().zip(seed * 10..).map(|(t, s)| HostTensor::random(t, s)).collect();
    for (i, t) in inputs.iter_mut().enumerate() {
        if spec.logical().direction(i) == Direction::Out {
            t.fill(if t.dtype().is_float() { Value::Float(f64::NAN) } else { Value::Int(0x5a5a_5a5a) });
        }
    }
    inputs
}

/// How an implementation was verified.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verified {
    /// Run with every compiler and compared with the reference evaluator.
    Ran,
    /// Compiled with every compiler; this CPU cannot run the target.
    Compiled,
}

/// Emits `imp` for `target`, checks the C is deterministic, and — when this CPU can run the
/// target — runs it with every compiler on two sets of random inputs (outputs poisoned),
/// comparing against the reference evaluator. Otherwise it only compiles it. Panics with the
/// C source on any failure.
/// Applies `schedule` (which ends with `synthesize_all`) to `spec` on `target` and synthesizes
/// what it leaves.
pub fn scheduled(spec: &str, schedule: &str, target: &'static Target) -> Result<Impl, ScheduleError> {
    let spec = Spec::parse_for(spec, target).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let (partial, synthesize) = run_schedule(spec, schedule, target)?;
    assert!(synthesize, "the schedule ends with synthesize_all");
    partial.synthesize_all(&mut Synthesizer::new(target))
}

pub fn check_impl(imp: &Impl, target: &'static Target) -> Verified {
    let spec = &imp.spec;
    let kernel = emit_c(imp, "kernel_under_test", target).expect("complete implementation");
    assert_eq!(kernel, emit_c(imp, "kernel_under_test", target).unwrap(), "emission is deterministic");
    let runnable = cpu_supports(target);
    let inputs: Vec<Vec<HostTensor>> = [1u64, 2].iter().map(|&seed| poisoned_inputs(spec, seed)).collect();
    let expected: Vec<_> = inputs
        .iter()
        .map(|inputs| {
            let mut expected = inputs.clone();
            let tolerances = evaluate(spec.logical(), &mut expected);
            (expected, tolerances)
        })
        .collect();
    for cc in compilers() {
        if !runnable {
            compile_only(&kernel, &cc, target)
                .unwrap_or_else(|e| panic!("{spec} on {}: {e}\n{}", target.name, kernel.source));
            continue;
        }
        let mut runs = inputs.clone();
        run_kernel_on_each(&kernel, &mut runs, &cc, target)
            .unwrap_or_else(|e| panic!("{spec} on {}: {e}\n{}", target.name, kernel.source));
        for (actual, (expected, tolerances)) in runs.iter().zip(&expected) {
            if let Err(m) = compare(spec.logical(), expected, actual, tolerances) {
                panic!("{spec} on {} compiled with {}: {m}\n{}", target.name, cc.program, kernel.source);
            }
        }
    }
    if runnable { Verified::Ran } else { Verified::Compiled }
}

/// The first stage's share of the reduction in every peel of `imp` (a block of a
/// non-accumulating Matmul, then an accumulating one), in tree order.
pub fn peeled_reductions(imp: &Impl) -> Vec<u32> {
    let mut sizes = Vec::new();
    imp.visit(&mut |node| {
        if let ImplNode::Block(b) = &node.node
            && let [first, rest] = b.stages.as_slice()
            && first.spec.primitive() == Some(Primitive::Matmul { accum: false })
            && rest.spec.primitive() == Some(Primitive::Matmul { accum: true })
        {
            sizes.push(first.spec.shape()[2]);
        }
    });
    sizes
}
