//! Differential fuzzing: random Specs and partial schedules, synthesized, compiled with every C
//! compiler, run on random inputs with the dtypes' edge values and compared with the reference
//! evaluator.
//!
//! A run draws `cases` cases from a seed ([`generate`]): a Spec over any primitive or a
//! Compose pipeline, with random dtypes, layouts, levels, vector sizes, contiguity and limits,
//! and up to three random rewrites applied by hand; the search completes the rest. Each case's
//! kernel is compiled (many cases per compiler call, see [`batch`]) and — when this CPU has the
//! target's features — run on random inputs ([`values`]); what it writes must agree with
//! [`crate::reference::evaluate`] within the reference's tolerances, and its inputs must be
//! left as they were. With `sanitize`, every kernel is also run under AddressSanitizer and
//! UndefinedBehaviorSanitizer, and kernels with parallel loops under ThreadSanitizer.
//!
//! Every failure is reduced to a smaller Spec and schedule that still fail, and
//! printed as a ready regression test calling [`replay`].

pub mod batch;
mod check;
pub mod generate;
mod reduce;
mod report;
pub mod rng;
pub mod values;

pub use check::{check_case, replay};
pub use report::{Counts, FuzzReport, Time};

use crate::codegen::{CKernel, emit_c};
use crate::harness::{CCompiler, cpu_supports, missing_cpu_features};
use crate::imp::Impl;
use crate::reference::{HostTensor, Tolerances, evaluate};
use crate::schedule::ScheduleError;
use crate::search::{SynthesisError, Synthesizer};
use crate::spec::Spec;
use crate::syntax::run_schedule;
use crate::target::{Target, TargetId};
use batch::Instrument;
use generate::{DrawStats, Drawn};
use rng::FuzzRng;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// What a fuzzing run does.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// Cases to check (cases whose Spec has no implementation are drawn again, not counted).
    pub cases: u64,
    /// The run's seed: the same seed, target and options give the same cases.
    pub seed: u64,
    /// The target kernels are synthesized and compiled for.
    pub target: TargetId,
    /// The compilers every kernel is compiled with.
    pub compilers: Vec<CCompiler>,
    /// Also run every kernel under AddressSanitizer and UndefinedBehaviorSanitizer, and
    /// kernels with parallel loops under ThreadSanitizer (with compilers that support them).
    pub sanitize: bool,
    /// Kernels compiled into one program.
    pub batch: usize,
    /// How many Specs the search of one case may solve before the case is drawn again (a
    /// budget in work rather than time, so a seed gives the same cases on any machine).
    pub max_specs: u64,
    /// Whether failures are reduced to smaller cases (slow when there are many).
    pub reduce: bool,
    /// Only compile the kernels, even where this CPU could run them.
    pub compile_only: bool,
}

impl FuzzOptions {
    /// Options for `cases` cases from `seed` on `target`, compiled with gcc and, when
    /// installed, clang.
    pub fn new(cases: u64, seed: u64, target: TargetId) -> Self {
        let compilers = [CCompiler::gcc(), CCompiler::clang()].into_iter().filter(CCompiler::is_available).collect();
        FuzzOptions {
            cases,
            seed,
            target,
            compilers,
            sanitize: false,
            batch: 64,
            max_specs: 50_000,
            reduce: true,
            compile_only: false,
        }
    }
}

/// One way a case failed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Failure {
    /// What the kernel wrote disagrees with the reference, or it changed an input.
    Mismatch {
        /// The compiler.
        compiler: String,
        /// How the program was instrumented.
        instrument: &'static str,
        /// The first difference.
        detail: String,
    },
    /// The compiler rejected the generated C.
    Compile {
        /// The compiler.
        compiler: String,
        /// Its diagnostics (the first lines).
        detail: String,
    },
    /// The kernel crashed, or a sanitizer reported an error.
    Run {
        /// The compiler.
        compiler: String,
        /// How the program was instrumented.
        instrument: &'static str,
        /// The exit status and the first lines of standard error.
        detail: String,
    },
    /// Synthesis or code generation panicked, or failed for a Spec it should implement.
    Compiler {
        /// The panic's or error's message.
        detail: String,
    },
    /// The schedule, printed and parsed back, did not give the same implementation.
    ScheduleText {
        /// What differed.
        detail: String,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Mismatch { compiler, instrument, detail } => {
                write!(f, "wrong result ({compiler}, {instrument}): {detail}")
            }
            Failure::Compile { compiler, detail } => write!(f, "{compiler} rejected the C: {detail}"),
            Failure::Run { compiler, instrument, detail } => {
                write!(f, "run failed ({compiler}, {instrument}): {detail}")
            }
            Failure::Compiler { detail } => write!(f, "synthesis or code generation failed: {detail}"),
            Failure::ScheduleText { detail } => write!(f, "the printed schedule does not replay: {detail}"),
        }
    }
}

/// A failing case, with the smallest failing case reduction found.
#[derive(Clone, Debug)]
pub struct FailedCase {
    /// The case's number in the run.
    pub index: u64,
    /// The case: Spec text, schedule steps and input seed.
    pub case: CaseText,
    /// How it failed.
    pub failure: Failure,
    /// The reduced case, and how it fails.
    pub reduced: Option<(CaseText, Failure)>,
}

/// A case as text: enough to replay it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CaseText {
    /// The Spec, with its limits.
    pub spec: String,
    /// Rewrites applied before the search completes the rest, in schedule syntax.
    pub steps: Vec<String>,
    /// The seed of its inputs.
    pub input_seed: u64,
}

impl CaseText {
    /// The schedule: the steps, then `synthesize_all`.
    pub fn schedule(&self) -> String {
        let mut s: String = self.steps.iter().map(|step| format!("{step}; ")).collect();
        s.push_str("synthesize_all;");
        s
    }
}

/// A case ready to run: its kernel, arguments and expected results.
struct Ready {
    index: u64,
    text: CaseText,
    kernel: CKernel,
    spec: Spec,
    args: Vec<HostTensor>,
    expected: Vec<HostTensor>,
    tolerances: Tolerances,
}

/// Runs a fuzzing campaign, writing progress and failures (with their regression tests) to
/// `log`, and returns the report.
pub fn run(options: &FuzzOptions, log: &mut dyn Write) -> FuzzReport {
    let target = options.target.target();
    let runnable = cpu_supports(target) && !options.compile_only;
    let mut report = FuzzReport::new(options, runnable, missing_cpu_features(target));
    let instruments = instruments(options, log);
    report.instruments = instruments.iter().map(|(c, i)| format!("{} {}", c.program, i.name())).collect();
    let started = Instant::now();
    let mut synth = Synthesizer::new(target);
    let mut stats = DrawStats::default();
    let mut next = 0u64;
    while next < options.cases {
        let mut ready = Vec::new();
        while ready.len() < options.batch && next < options.cases {
            let began = Instant::now();
            let prepared = prepare(next, options, &mut synth, &mut stats, &mut report);
            report.time.synthesis += began.elapsed();
            match prepared {
                Ok(case) => ready.push(case),
                Err(failed) => report_failure(*failed, options, &mut report, log),
            }
            next += 1;
        }
        let began = Instant::now();
        let failures = check::check_batch(&ready, options, &instruments, runnable);
        report.time.compile_and_run += began.elapsed();
        for failed in failures {
            report_failure(failed, options, &mut report, log);
        }
        let _ = writeln!(
            log,
            "fuzz {}: {next}/{} cases, {} failing, {:.1} s",
            target.name,
            options.cases,
            report.failures.len(),
            started.elapsed().as_secs_f64()
        );
    }
    report.refused_specs = stats.refused_specs;
    report.elapsed = started.elapsed();
    report
}

/// The compilers and instrumentations every batch is built with.
fn instruments(options: &FuzzOptions, log: &mut dyn Write) -> Vec<(CCompiler, Instrument)> {
    let mut out = Vec::new();
    for cc in &options.compilers {
        out.push((cc.clone(), Instrument::None));
        if options.sanitize {
            for instrument in [Instrument::AddressUndefined, Instrument::Thread] {
                if batch::instrument_works(cc, instrument) {
                    out.push((cc.clone(), instrument));
                } else {
                    let _ =
                        writeln!(log, "note: {} cannot build {} programs here; skipped", cc.program, instrument.name());
                }
            }
        }
    }
    out
}

/// Draws case `index`, synthesizes it and computes its expected results. Cases with no
/// implementation (or over the search budget) are drawn again from the same generator.
fn prepare(
    index: u64,
    options: &FuzzOptions,
    synth: &mut Synthesizer,
    stats: &mut DrawStats,
    report: &mut FuzzReport,
) -> Result<Ready, Box<FailedCase>> {
    let target = options.target.target();
    let mut rng = FuzzRng::for_case(options.seed, index);
    loop {
        let drawn = generate::draw(&mut rng, target, stats);
        let text = CaseText { spec: drawn.spec.to_string(), steps: drawn.steps.clone(), input_seed: rng.next_u64() };
        let fail = |failure| Box::new(FailedCase { index, case: text.clone(), failure, reduced: None });
        if let Err(failure) = check_schedule_text(&drawn, target) {
            return Err(fail(failure));
        }
        synth.set_spec_limit(synth.stats().specs_solved + options.max_specs);
        let outcome = catch_unwind(AssertUnwindSafe(|| drawn.partial.clone().synthesize_all(synth)));
        let imp = match outcome {
            Ok(Ok(imp)) => imp,
            Ok(Err(ScheduleError::Synthesis(SynthesisError::Unsatisfiable { .. }))) => {
                report.unimplementable += 1;
                continue;
            }
            Ok(Err(ScheduleError::Synthesis(SynthesisError::DeadlinePassed { .. }))) => {
                report.over_budget += 1;
                report.over_budget_specs.push(text.spec.clone());
                *synth = Synthesizer::new(target);
                continue;
            }
            Ok(Err(e)) => return Err(fail(Failure::Compiler { detail: e.to_string() })),
            Err(panic) => {
                *synth = Synthesizer::new(target);
                return Err(fail(Failure::Compiler { detail: panic_message(&panic) }));
            }
        };
        let symbol = format!("fuzz_case_{index}");
        let kernel = match catch_unwind(AssertUnwindSafe(|| emit_c(&imp, &symbol, target))) {
            Ok(Ok(kernel)) => kernel,
            Ok(Err(e)) => return Err(fail(Failure::Compiler { detail: e.to_string() })),
            Err(panic) => return Err(fail(Failure::Compiler { detail: panic_message(&panic) })),
        };
        let (args, expected, tolerances) = match reference_run(&imp, text.input_seed) {
            Ok(run) => run,
            Err(panic) => return Err(fail(Failure::Compiler { detail: format!("the reference panicked: {panic}") })),
        };
        let mut labels = drawn.labels.clone();
        if kernel.parallel {
            labels.features.push("parallel loops");
        }
        report.count(&labels);
        return Ok(Ready { index, text, kernel, spec: imp.spec.clone(), args, expected, tolerances });
    }
}

/// Random arguments from `seed` and what the reference computes from them.
fn reference_run(imp: &Impl, seed: u64) -> Result<(Vec<HostTensor>, Vec<HostTensor>, Tolerances), String> {
    let mut rng = FuzzRng::new(seed);
    let edge_in = *rng.pick(&[0u64, 0, 16, 64, 256]);
    let args = values::random_arguments(&imp.spec, &mut rng, edge_in);
    let mut expected = args.clone();
    let tolerances = catch_unwind(AssertUnwindSafe(|| evaluate(imp.spec.logical(), &mut expected)))
        .map_err(|p| panic_message(&p))?;
    Ok((args, expected, tolerances))
}

/// The printed schedule, parsed and applied again, gives the same partial implementation.
fn check_schedule_text(drawn: &Drawn, target: &'static Target) -> Result<(), Failure> {
    if drawn.steps.is_empty() {
        return Ok(());
    }
    let text = CaseText { spec: String::new(), steps: drawn.steps.clone(), input_seed: 0 }.schedule();
    match run_schedule(drawn.spec.clone(), &text, target) {
        Ok((partial, _)) if partial.root() == drawn.partial.root() => Ok(()),
        Ok(_) => Err(Failure::ScheduleText { detail: format!("`{text}` gives another implementation") }),
        Err(e) => Err(Failure::ScheduleText { detail: format!("`{text}`: {e}") }),
    }
}

/// Records a failure: reduces it (when asked), prints it with its regression test.
fn report_failure(mut failed: FailedCase, options: &FuzzOptions, report: &mut FuzzReport, log: &mut dyn Write) {
    let _ = writeln!(
        log,
        "case {} FAILED: {}\n  Spec: {}\n  schedule: {}",
        failed.index,
        failed.failure,
        failed.case.spec,
        failed.case.schedule()
    );
    if options.reduce {
        let began = Instant::now();
        failed.reduced = reduce::reduce(&failed, options);
        report.time.reduction += began.elapsed();
    }
    let _ = writeln!(log, "{}", report::regression_test(&failed, options));
    report.failures.push(failed);
}

/// A panic's message.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_owned()
    }
}
