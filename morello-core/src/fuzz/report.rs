//! What a fuzzing run found: case counts per primitive, dtype, layout, level and feature, and
//! every failure with a ready regression test.

use super::generate::Labels;
use super::{FailedCase, FuzzOptions};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// Cases per label, in each category.
#[derive(Clone, Debug, Default)]
pub struct Counts(pub BTreeMap<&'static str, BTreeMap<String, u64>>);

impl Counts {
    fn add(&mut self, category: &'static str, label: &str) {
        *self.0.entry(category).or_default().entry(label.to_owned()).or_default() += 1;
    }
}

/// Where a run's time went.
#[derive(Clone, Copy, Debug, Default)]
pub struct Time {
    /// Drawing, synthesizing, emitting C and evaluating the reference.
    pub synthesis: Duration,
    /// Compiling the batches and running the kernels.
    pub compile_and_run: Duration,
    /// Reducing failures.
    pub reduction: Duration,
}

/// The result of a fuzzing run.
#[derive(Clone, Debug)]
pub struct FuzzReport {
    /// The target's name.
    pub target: &'static str,
    /// The seed.
    pub seed: u64,
    /// Cases checked.
    pub cases: u64,
    /// Whether this CPU ran the kernels (otherwise they were only compiled).
    pub ran: bool,
    /// The target's features this CPU lacks.
    pub missing_features: Vec<&'static str>,
    /// Compiler and instrumentation of every build (`gcc plain`, `clang address,undefined`).
    pub instruments: Vec<String>,
    /// Cases per primitive, dtype, layout family, level and feature.
    pub counts: Counts,
    /// Failing cases.
    pub failures: Vec<FailedCase>,
    /// Draws whose Spec has no implementation at its limits (drawn again).
    pub unimplementable: u64,
    /// Draws whose search went over its budget of Specs (drawn again).
    pub over_budget: u64,
    /// The Specs of those draws.
    pub over_budget_specs: Vec<String>,
    /// The budget.
    pub max_specs: u64,
    /// Spec texts the parser refused (drawn again).
    pub refused_specs: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Where it went.
    pub time: Time,
}

impl FuzzReport {
    pub(super) fn new(options: &FuzzOptions, ran: bool, missing_features: Vec<&'static str>) -> Self {
        FuzzReport {
            target: options.target.target().name,
            seed: options.seed,
            cases: 0,
            ran,
            missing_features,
            instruments: Vec::new(),
            counts: Counts::default(),
            failures: Vec::new(),
            unimplementable: 0,
            over_budget: 0,
            over_budget_specs: Vec::new(),
            max_specs: options.max_specs,
            refused_specs: 0,
            elapsed: Duration::ZERO,
            time: Time::default(),
        }
    }

    pub(super) fn count(&mut self, labels: &Labels) {
        self.cases += 1;
        self.counts.add("primitive", &labels.primitive);
        self.counts.add("dtype", &labels.dtypes);
        for l in &labels.layouts {
            self.counts.add("layout", l);
        }
        for l in &labels.levels {
            self.counts.add("level", l);
        }
        for f in &labels.features {
            self.counts.add("feature", f);
        }
    }

    /// The report as text: `N cases, M mismatches`, where the kernels ran, what was drawn
    /// again, and the counts per family.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let checked = self.cases + self.failures.iter().filter(|f| !self.counted(f)).count() as u64;
        let _ = writeln!(s, "{checked} cases, {} mismatches", self.failures.len());
        let _ = writeln!(s, "target {}, seed {}; built with: {}", self.target, self.seed, self.instruments.join(", "));
        if self.ran {
            let _ = writeln!(s, "every kernel was compiled and run on this CPU");
        } else if self.missing_features.is_empty() {
            let _ = writeln!(s, "kernels were compiled, not run (asked to compile only)");
        } else {
            let _ = writeln!(s, "kernels were compiled, not run: this CPU lacks {}", self.missing_features.join(", "));
        }
        let _ = writeln!(
            s,
            "drawn again: {} Specs the parser refused, {} with no implementation at their limits, {} over the search budget ({} Specs)",
            self.refused_specs, self.unimplementable, self.over_budget, self.max_specs
        );
        for spec in self.over_budget_specs.iter().take(5) {
            let _ = writeln!(s, "  over the budget: {spec}");
        }
        let _ = writeln!(
            s,
            "time: {:.1} s ({:.1} s synthesis and reference, {:.1} s compiling and running, {:.1} s reducing failures)",
            self.elapsed.as_secs_f64(),
            self.time.synthesis.as_secs_f64(),
            self.time.compile_and_run.as_secs_f64(),
            self.time.reduction.as_secs_f64()
        );
        for (category, labels) in &self.counts.0 {
            let mut sorted: Vec<(&String, &u64)> = labels.iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let items: Vec<String> = sorted.iter().map(|(l, n)| format!("{l} {n}")).collect();
            let _ = writeln!(s, "{category}: {}", items.join(", "));
        }
        s
    }

    /// Whether a failure's case was counted (it failed after being prepared).
    fn counted(&self, failed: &FailedCase) -> bool {
        !matches!(failed.failure, super::Failure::Compiler { .. } | super::Failure::ScheduleText { .. })
    }
}

/// A regression test reproducing `failed` (its reduced form when there is one), ready to paste
/// into `morello-core/tests/fuzz_regressions.rs`.
pub fn regression_test(failed: &FailedCase, options: &FuzzOptions) -> String {
    let (case, failure) = match &failed.reduced {
        Some((case, failure)) => (case, failure),
        None => (&failed.case, &failed.failure),
    };
    let target = options.target;
    let steps: Vec<String> = case.steps.iter().map(|s| format!("{s:?}")).collect();
    let first_line = failure.to_string().lines().next().unwrap_or_default().to_owned();
    format!(
        "/// `morello-db fuzz --target {target} --seed {seed} --cases {cases}`, case {index}: {first_line}\n\
         #[test]\n\
         fn fuzz_{target}_seed_{seed}_case_{index}() {{\n    \
         morello_core::fuzz::replay(\n        {spec:?},\n        &[{steps}],\n        TargetId::{variant:?},\n        {input_seed},\n    );\n}}\n",
        target = target.target().short_name,
        seed = options.seed,
        cases = options.cases,
        index = failed.index,
        spec = case.spec,
        steps = steps.join(", "),
        variant = target,
        input_seed = case.input_seed,
    )
}
