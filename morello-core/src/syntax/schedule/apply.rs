//! Applying parsed schedules: at compile time with spanned errors, or at run time.

use super::written::At;
use super::{Schedule, Step, StepKind};
use crate::schedule::{PartialImpl, ScheduleError};
use crate::spec::Spec;
use crate::target::Target;

type StepResult = Result<PartialImpl, (ScheduleError, At)>;

/// Applies the steps of `schedule` to `spec`, except a final `synthesize_all` (which the caller
/// performs). Returns the partial implementation and whether `synthesize_all` was requested.
/// Errors carry the span of the offending argument.
pub fn apply_schedule(spec: Spec, schedule: &Schedule, target: &'static Target) -> syn::Result<(PartialImpl, bool)> {
    apply_steps(spec, schedule, target).map_err(|(e, at)| match at {
        At::Span(span) => syn::Error::new(span, e),
        At::Tokens(tokens) => syn::Error::new_spanned(tokens, e),
    })
}

/// Parses `schedule` (schedule-language text, as [`Schedule`]'s `Display` prints it) and applies
/// it to `spec` on `target`, except a final `synthesize_all`; returns the partial
/// implementation and whether `synthesize_all` was requested. This is what `schedule!` runs.
pub fn run_schedule(spec: Spec, schedule: &str, target: &'static Target) -> Result<(PartialImpl, bool), ScheduleError> {
    let parsed: Schedule = schedule.parse().map_err(ScheduleError::Syntax)?;
    apply_steps(spec, &parsed, target).map_err(|(e, _)| e)
}

#[expect(clippy::result_large_err, reason = "errors are rare and end the schedule; the span travels with them")]
fn apply_steps(
    spec: Spec,
    schedule: &Schedule,
    target: &'static Target,
) -> Result<(PartialImpl, bool), (ScheduleError, At)> {
    let mut partial = PartialImpl::new(spec, target);
    let mut synthesize = false;
    for step in &schedule.steps {
        if matches!(step.kind, StepKind::SynthesizeAll) {
            synthesize = true;
            continue;
        }
        partial = apply_step(partial, step)?;
    }
    Ok((partial, synthesize))
}

#[expect(clippy::result_large_err, reason = "errors are rare and end the schedule; the span travels with them")]
fn apply_step(partial: PartialImpl, step: &Step) -> StepResult {
    let name = step.name.span();
    let at_name = |e: ScheduleError| (e, At::Span(name));
    match &step.kind {
        StepKind::Rewrite(rewrite) => partial.apply_plain(&rewrite.plain()).map_err(|e| {
            let at = rewrite.locate(&e).unwrap_or(At::Span(name));
            (e, at)
        }),
        StepKind::Split { k } => partial.split(k.0).map_err(|e| match e {
            ScheduleError::Rewrite(_) => (e, At::Span(k.1)),
            _ => at_name(e),
        }),
        StepKind::Subschedule { path, path_tokens, body } => {
            let indices: Vec<usize> = path.iter().map(|p| p.0).collect();
            let spec = partial.spec_at(&indices).map_err(|e| match &e {
                ScheduleError::Path { position, .. } => match path.get(*position) {
                    Some((_, span)) => (e.clone(), At::Span(*span)),
                    None => (e, At::Tokens(path_tokens.clone())),
                },
                _ => at_name(e),
            })?;
            let mut sub = PartialImpl::new(spec, partial.target());
            for s in &body.steps {
                sub = apply_step(sub, s)?;
            }
            partial.subschedule(&indices, |_| Ok(sub)).map_err(at_name)
        }
        StepKind::SynthesizeAll => Ok(partial),
    }
}
