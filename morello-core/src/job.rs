//! A kernel declaration elaborated: what remains to synthesize once its schedule is applied
//! ([`crate::syntax::KernelDecl::elaborate`]).
//!
//! Parsing leaves a [`crate::syntax::KernelDecl`] with its source tokens, for errors; elaborating
//! it applies the schedule once and yields a [`SynthesisJob`], which holds only Specs and the
//! partial implementation, so build scripts can synthesize several kernels at once on other
//! threads.

use crate::imp::Impl;
use crate::schedule::{PartialImpl, ScheduleError};
use crate::search::Synthesizer;
use crate::spec::Spec;

/// The synthesis left for one kernel.
#[derive(Clone, Debug)]
pub enum SynthesisJob {
    /// No schedule: the whole Spec.
    Whole(Spec),
    /// A schedule ending in `synthesize_all`: the Specs it left unscheduled.
    Leaves(PartialImpl),
}

impl SynthesisJob {
    /// The Specs this job searches for.
    pub fn specs(&self) -> Vec<&Spec> {
        match self {
            SynthesisJob::Whole(spec) => vec![spec],
            SynthesisJob::Leaves(partial) => partial.root().unscheduled(),
        }
    }

    /// Whether two jobs search for a Spec in common (at any memory limits), and so are best
    /// run by one synthesizer, which solves it once.
    pub fn shares_work_with(&self, other: &SynthesisJob) -> bool {
        let theirs = other.specs();
        self.specs().iter().any(|mine| theirs.iter().any(|t| t.logical() == mine.logical()))
    }

    /// The complete implementation, synthesizing with `synth`.
    pub fn run(self, synth: &mut Synthesizer) -> Result<Impl, ScheduleError> {
        match self {
            SynthesisJob::Whole(spec) => synth.synthesize(&spec).map_err(ScheduleError::from),
            SynthesisJob::Leaves(partial) => partial.synthesize_all(synth),
        }
    }
}
