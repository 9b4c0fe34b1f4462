//! Phase 3: each kernel's schedule applied (their errors need no search), and what is left to
//! synthesize grouped by target.

use super::scan::Scanned;
use crate::diagnostic::{BuildError, Diagnostics};
use morello_core::job::SynthesisJob;
use morello_core::target::Target;
use std::collections::BTreeMap;

/// The synthesis jobs of one target.
pub struct TargetPlan {
    /// The target.
    pub target: &'static Target,
    /// The kernels (indices into [`Scanned::kernels`]), one per job.
    pub kernels: Vec<usize>,
    /// What to synthesize for each.
    pub jobs: Vec<SynthesisJob>,
}

/// The plans, by target name.
pub fn plan(scanned: &Scanned) -> Result<BTreeMap<&'static str, TargetPlan>, BuildError> {
    let mut problems = Diagnostics::default();
    let mut plans: BTreeMap<&'static str, TargetPlan> = BTreeMap::new();
    for (index, kernel) in scanned.kernels.iter().enumerate() {
        let target = kernel.decl.target;
        match kernel.decl.elaborate() {
            Ok(job) => {
                let plan = plans.entry(target.name).or_insert_with(|| TargetPlan {
                    target,
                    kernels: Vec::new(),
                    jobs: Vec::new(),
                });
                plan.kernels.push(index);
                plan.jobs.push(job);
            }
            Err(e) => scanned.report(kernel, &e, &mut problems),
        }
    }
    problems.finish(plans)
}
