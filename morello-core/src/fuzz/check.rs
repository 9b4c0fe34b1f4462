//! Checking cases: batches compiled with every compiler and instrumentation, each kernel run
//! on its case's arguments and compared with the reference; one case alone for reductions and
//! regression tests.

use super::batch::{self, Instrument};
use super::{CaseText, FailedCase, Failure, FuzzOptions, Ready, panic_message, reference_run};
use crate::codegen::{CKernel, emit_c};
use crate::harness::{CCompiler, HarnessError, cpu_supports};
use crate::primitive::Direction;
use crate::reference::{HostTensor, Tolerances, compare};
use crate::schedule::PartialImpl;
use crate::search::Synthesizer;
use crate::spec::Spec;
use crate::syntax::run_schedule;
use crate::target::{Target, TargetId};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Compiles the batch with every compiler and instrumentation and runs it; returns the
/// failures.
pub(super) fn check_batch(
    ready: &[Ready],
    options: &FuzzOptions,
    instruments: &[(CCompiler, Instrument)],
    runnable: bool,
) -> Vec<FailedCase> {
    let target = options.target.target();
    let mut failed: Vec<FailedCase> = Vec::new();
    let mut is_failed = vec![false; ready.len()];
    for (cc, instrument) in instruments {
        if *instrument != Instrument::None && !runnable {
            continue;
        }
        let members: Vec<usize> = (0..ready.len())
            .filter(|&i| !is_failed[i] && (*instrument != Instrument::Thread || ready[i].kernel.parallel))
            .collect();
        for (i, failure) in run_members(ready, &members, cc, *instrument, target, runnable) {
            if !is_failed[i] {
                is_failed[i] = true;
                failed.push(FailedCase { index: ready[i].index, case: ready[i].text.clone(), failure, reduced: None });
            }
        }
    }
    failed
}

/// Builds one program of `members` (splitting out kernels that do not compile) and runs each.
fn run_members(
    ready: &[Ready],
    members: &[usize],
    cc: &CCompiler,
    instrument: Instrument,
    target: &Target,
    runnable: bool,
) -> Vec<(usize, Failure)> {
    if members.is_empty() {
        return Vec::new();
    }
    let kernels: Vec<(&CKernel, &[HostTensor])> =
        members.iter().map(|&i| (&ready[i].kernel, ready[i].args.as_slice())).collect();
    let program = match batch::compile(&kernels, cc, target, instrument) {
        Ok(program) => program,
        Err(e) if members.len() == 1 => {
            return vec![(
                members[0],
                Failure::Compile { compiler: cc.program.clone(), detail: first_lines(&e.to_string()) },
            )];
        }
        Err(_) => {
            // Find the kernels that do not compile by halves.
            let (left, right) = members.split_at(members.len() / 2);
            let mut out = run_members(ready, left, cc, instrument, target, runnable);
            out.extend(run_members(ready, right, cc, instrument, target, runnable));
            return out;
        }
    };
    if !runnable {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (slot, &i) in members.iter().enumerate() {
        let case = &ready[i];
        let mut args = case.args.clone();
        if let Err(failure) = run_and_compare(&program, slot, &mut args, case, cc) {
            out.push((i, failure));
        }
    }
    out
}

/// Runs kernel `slot` of `program` on the case's arguments and compares with the reference.
fn run_and_compare(
    program: &batch::Program,
    slot: usize,
    args: &mut [HostTensor],
    case: &Ready,
    cc: &CCompiler,
) -> Result<(), Failure> {
    let instrument = program.instrument().name();
    match program.run(slot, args) {
        Ok(()) => {}
        Err(HarnessError::Run { status, stderr }) => {
            return Err(Failure::Run {
                compiler: cc.program.clone(),
                instrument,
                detail: format!("{status}: {}", first_lines(&stderr)),
            });
        }
        Err(e) => {
            return Err(Failure::Run { compiler: cc.program.clone(), instrument, detail: first_lines(&e.to_string()) });
        }
    }
    compare_outputs(&case.spec, &case.args, &case.expected, args, &case.tolerances)
        .map_err(|detail| Failure::Mismatch { compiler: cc.program.clone(), instrument, detail })
}

/// Written operands agree with the reference; inputs are unchanged.
fn compare_outputs(
    spec: &Spec,
    before: &[HostTensor],
    expected: &[HostTensor],
    actual: &[HostTensor],
    tolerances: &Tolerances,
) -> Result<(), String> {
    for (i, (b, a)) in before.iter().zip(actual).enumerate() {
        if spec.logical().direction(i) == Direction::In && b.bytes() != a.bytes() {
            return Err(format!("the kernel changed its input `{}`", spec.logical().operand_name(i)));
        }
    }
    compare(spec.logical(), expected, actual, tolerances).map_err(|m| m.to_string())
}

/// Checks one case alone: synthesizes it (a fresh search), compiles it with each of
/// `compilers`, runs it when the CPU can and compares with the reference.
pub fn check_case(
    case: &CaseText,
    target: TargetId,
    compilers: &[CCompiler],
    instrument: Instrument,
) -> Result<(), Failure> {
    let target = target.target();
    let spec =
        Spec::parse_for(&case.spec, target).map_err(|e| Failure::Compiler { detail: format!("the Spec: {e}") })?;
    let mut synth = Synthesizer::new(target);
    let imp = catch_unwind(AssertUnwindSafe(|| {
        run_schedule(spec, &case.schedule(), target)
            .and_then(|(partial, _): (PartialImpl, bool)| partial.synthesize_all(&mut synth))
    }))
    .map_err(|p| Failure::Compiler { detail: panic_message(&p) })?
    .map_err(|e| Failure::Compiler { detail: e.to_string() })?;
    let kernel = catch_unwind(AssertUnwindSafe(|| emit_c(&imp, "fuzz_case", target)))
        .map_err(|p| Failure::Compiler { detail: panic_message(&p) })?
        .map_err(|e| Failure::Compiler { detail: e.to_string() })?;
    let (args, expected, tolerances) = reference_run(&imp, case.input_seed)
        .map_err(|p| Failure::Compiler { detail: format!("the reference panicked: {p}") })?;
    let ready = Ready { index: 0, text: case.clone(), kernel, spec: imp.spec.clone(), args, expected, tolerances };
    let runnable = cpu_supports(target);
    for cc in compilers {
        if let Some((_, failure)) =
            run_members(std::slice::from_ref(&ready), &[0], cc, instrument, target, runnable).pop()
        {
            return Err(failure);
        }
    }
    Ok(())
}

/// Replays a case in a regression test: checks it with gcc and, when installed, clang
/// (required when `MORELLO_REQUIRE_CLANG` is set), and panics with the failure.
pub fn replay(spec: &str, schedule_steps: &[&str], target: TargetId, input_seed: u64) {
    let mut compilers = vec![CCompiler::gcc()];
    let clang = CCompiler::clang();
    if clang.is_available() {
        compilers.push(clang);
    } else {
        assert!(
            std::env::var_os("MORELLO_REQUIRE_CLANG").is_none(),
            "MORELLO_REQUIRE_CLANG is set but clang is not installed"
        );
    }
    let case =
        CaseText { spec: spec.to_owned(), steps: schedule_steps.iter().map(|s| (*s).to_owned()).collect(), input_seed };
    if let Err(failure) = check_case(&case, target, &compilers, Instrument::None) {
        panic!("{spec} with `{}`: {failure}", case.schedule());
    }
}

/// The first lines of a long message.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(12).collect();
    lines.join("\n")
}
