//! Applying parsed schedules: at compile time with spanned errors, or at run time.

use super::{Destination, Schedule, Step, StepKind};
use crate::rewrite::RewriteError;
use crate::schedule::{PartialImpl, ScheduleError};
use crate::spec::Spec;
use crate::target::Target;
use proc_macro2::{Span, TokenStream};

/// Where in the schedule's text an error belongs.
enum At {
    Span(Span),
    Tokens(TokenStream),
}

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

/// Where an error about a temporary's destination belongs, if at the destination.
fn dest_span(dest: &Destination, e: &ScheduleError) -> Option<At> {
    match e {
        ScheduleError::Rewrite(RewriteError::TempLayout { .. }) => match &dest.layout {
            Some((_, tokens)) => Some(At::Tokens(tokens.clone())),
            None => Some(At::Tokens(dest.tokens.clone())),
        },
        ScheduleError::Rewrite(RewriteError::TempInvalid { .. } | RewriteError::OutOfMemory { .. }) => {
            Some(At::Tokens(dest.tokens.clone()))
        }
        _ => None,
    }
}

#[expect(clippy::result_large_err, reason = "errors are rare and end the schedule; the span travels with them")]
fn apply_step(partial: PartialImpl, step: &Step) -> StepResult {
    let name = step.name.span();
    let at_name = |e: ScheduleError| (e, At::Span(name));
    fn at_dest(dest: &Destination, name: Span) -> impl Fn(ScheduleError) -> (ScheduleError, At) + '_ {
        move |e: ScheduleError| match dest_span(dest, &e) {
            Some(at) => (e, at),
            None => (e, At::Span(name)),
        }
    }
    match &step.kind {
        StepKind::Tile { sizes, parallel } => {
            let tile: Vec<u32> = sizes.iter().map(|s| s.0).collect();
            let all = || {
                let mut ts = TokenStream::new();
                for (_, span) in sizes {
                    ts.extend(quote::quote_spanned!(*span=> x));
                }
                ts
            };
            let result = if parallel.is_some() { partial.parallel_tile(&tile) } else { partial.tile(&tile) };
            result.map_err(|e| match &e {
                ScheduleError::Rewrite(
                    RewriteError::TileLarger { dim, .. }
                    | RewriteError::TileZero { dim, .. }
                    | RewriteError::ReductionNeedsAccum { dim, .. }
                    | RewriteError::ParallelReduction { dim, .. },
                ) => (e.clone(), At::Span(sizes[*dim].1)),
                ScheduleError::Rewrite(RewriteError::SerialOnly { .. } | RewriteError::ParallelInRegisters { .. }) => {
                    (e, At::Span(parallel.unwrap_or(name)))
                }
                ScheduleError::Rewrite(_) => (e, At::Tokens(all())),
                _ => at_name(e),
            })
        }
        StepKind::Split { k } => partial.split(k.0).map_err(|e| match e {
            ScheduleError::Rewrite(_) => (e, At::Span(k.1)),
            _ => at_name(e),
        }),
        StepKind::Spread { bands } => partial.spread(bands.0).map_err(|e| match e {
            ScheduleError::Rewrite(RewriteError::Shape { .. }) => (e, At::Span(bands.1)),
            _ => at_name(e),
        }),
        StepKind::MoveParam { operand, dest } => partial
            .cast(
                operand.0,
                dest.dtype.map(|d| d.0),
                dest.level.0,
                dest.layout.as_ref().map(|l| l.0.clone()),
                dest.vector_size.map(|v| v.0),
                dest.contig.map(|c| c.0),
            )
            .map_err(|e| {
                let at = match &e {
                    ScheduleError::Rewrite(RewriteError::OperandOutOfRange { .. }) => At::Span(operand.1),
                    ScheduleError::Rewrite(
                        RewriteError::NotUpcast { .. } | RewriteError::UpcastWritten { .. } | RewriteError::Dtypes(_),
                    ) => At::Span(dest.dtype.map_or(dest.level.1, |d| d.1)),
                    ScheduleError::Rewrite(RewriteError::MoveInvalid { .. }) => match (&dest.vector_size, &dest.layout)
                    {
                        (Some(v), _) => At::Span(v.1),
                        (None, Some(l)) => At::Tokens(l.1.clone()),
                        _ => At::Span(dest.level.1),
                    },
                    ScheduleError::Layout(_) => match &dest.layout {
                        Some(l) => At::Tokens(l.1.clone()),
                        None => At::Span(dest.level.1),
                    },
                    ScheduleError::Rewrite(_) => At::Span(dest.level.1),
                    _ => At::Span(name),
                };
                (e, at)
            }),
        StepKind::ToAccum => partial.to_accum().map_err(at_name),
        StepKind::Peel { size } => partial.peel(size.0).map_err(|e| match e {
            ScheduleError::Rewrite(RewriteError::PeelSize { .. }) => (e, At::Span(size.1)),
            _ => at_name(e),
        }),
        StepKind::Select { kernel } => partial.select(kernel.0).map_err(|e| match e {
            ScheduleError::Rewrite(_) => (e, At::Span(kernel.1)),
            _ => at_name(e),
        }),
        StepKind::Bufferize { index, dest } => partial.bufferize(index.0, dest.temp()).map_err(|e| match e {
            ScheduleError::Rewrite(RewriteError::StageOutOfRange { .. }) => (e, At::Span(index.1)),
            e => at_dest(dest, name)(e),
        }),
        StepKind::SpatialSplit => partial.spatial_split().map_err(at_name),
        StepKind::BroadcastFirst { dest } => partial.broadcast_first(dest.temp()).map_err(at_dest(dest, name)),
        StepKind::ToSoftmaxParts { denom } => partial.to_softmax_parts(denom.temp()).map_err(at_dest(denom, name)),
        StepKind::ToSoftmaxPartsRecompute { max, denom } => {
            partial.to_softmax_parts_recompute(max.temp(), denom.temp()).map_err(|e| {
                let which = match &e {
                    ScheduleError::Rewrite(
                        RewriteError::TempInvalid { what, .. } | RewriteError::TempLayout { what, .. },
                    ) if *what == "denominator" => denom,
                    _ => max,
                };
                at_dest(which, name)(e)
            })
        }
        StepKind::ToMaxAndDenominator => partial.to_max_and_denominator().map_err(at_name),
        StepKind::ToMaxAndUnscaled { max } => partial.to_max_and_unscaled(max.temp()).map_err(at_dest(max, name)),
        StepKind::ParallelSplit { chunk, partials } => {
            partial.parallel_split(chunk.0, partials.temp()).map_err(|e| match e {
                ScheduleError::Rewrite(RewriteError::Shape { .. }) => (e, At::Span(chunk.1)),
                e => at_dest(partials, name)(e),
            })
        }
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
