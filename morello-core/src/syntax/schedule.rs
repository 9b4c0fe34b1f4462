//! The schedule language: Halide-style rewrite steps written inside `kernel!` and `schedule!`.
//!
//! ```text
//! tile([1, 1, 1, 16]);                 // loop over tiles (sizes per Spec dimension)
//! split(4);                            // tile the reduction dimension
//! move_param(2, VRF, row_major, v8);   // move operand 2 (layout and vN optional)
//! to_accum;                            // zero the output, then accumulate
//! select(BroadcastVecMultAdd);         // use a microkernel
//! subschedule([1]) { select(VectorAssign); }
//! synthesize_all;                      // synthesize every Spec left (last step only)
//! ```

use super::operand::parse_physical_layout;
use super::{Errors, parse_name, parse_number, prefixed_number, unknown};
use crate::kernels::KernelKind;
use crate::level::Level;
use crate::rewrite::RewriteError;
use crate::schedule::{PartialImpl, ScheduleError};
use crate::spec::{LayoutDecl, Spec};
use crate::target::Target;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt;
use syn::parse::ParseStream;
use syn::{Token, bracketed, parenthesized};

/// A parsed schedule.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One schedule step and where it was written.
#[derive(Clone, Debug)]
pub struct Step {
    /// The step's name token.
    pub name: syn::Ident,
    /// What it does.
    pub kind: StepKind,
}

/// The schedule steps.
#[derive(Clone, Debug)]
pub enum StepKind {
    /// `tile([..])`.
    Tile {
        /// Tile size per Spec dimension, with each size's span.
        sizes: Vec<(u32, Span)>,
    },
    /// `split(k)`.
    Split {
        /// The reduction tile size.
        k: (u32, Span),
    },
    /// `move_param(i, LEVEL[, layout][, vN])`.
    MoveParam {
        /// Operand index.
        operand: (usize, Span),
        /// Destination level.
        level: (Level, Span),
        /// Destination layout, if given.
        layout: Option<(LayoutDecl, TokenStream)>,
        /// Vector size, if given.
        vector_size: Option<(u32, Span)>,
    },
    /// `to_accum`.
    ToAccum,
    /// `select(Kernel)`.
    Select {
        /// The kernel.
        kernel: (KernelKind, Span),
    },
    /// `subschedule([path]) { steps }`.
    Subschedule {
        /// The path, each element with its span.
        path: Vec<(usize, Span)>,
        /// The path's tokens.
        path_tokens: TokenStream,
        /// Steps applied to the Spec the path names.
        body: Schedule,
    },
    /// `synthesize_all`.
    SynthesizeAll,
}

/// Kernel names used in the paper, and what they are called here.
const PAPER_KERNEL_NAMES: [(&str, &str); 2] = [("VectorMove", "VectorAssign"), ("ValueMove", "ValueAssign")];

const STEP_NAMES: [&str; 7] = ["tile", "split", "move_param", "to_accum", "select", "subschedule", "synthesize_all"];

/// Parses schedule steps until the end of `input`.
pub fn parse_schedule(input: ParseStream) -> syn::Result<Schedule> {
    let mut steps = Vec::new();
    let mut errors = Errors::default();
    while !input.is_empty() {
        let name: syn::Ident =
            input.parse().map_err(|e| syn::Error::new(e.span(), "expected a schedule step such as `tile([...])`"))?;
        let args = if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            Some(content.parse::<TokenStream>()?)
        } else {
            None
        };
        let block = if name == "subschedule" && input.peek(syn::token::Brace) {
            let content;
            syn::braced!(content in input);
            Some(content.parse::<TokenStream>()?)
        } else {
            None
        };
        let ends_with_block = block.is_some();
        match parse_step(&name, args, block) {
            Ok(kind) => steps.push(Step { name: name.clone(), kind }),
            Err(e) => errors.push(e),
        }
        if ends_with_block {
            let _ = input.parse::<Option<Token![;]>>()?;
        } else if !input.is_empty() {
            input
                .parse::<Token![;]>()
                .map_err(|e| syn::Error::new(e.span(), format!("expected `;` after `{name}`")))?;
        }
    }
    for (i, step) in steps.iter().enumerate() {
        if matches!(step.kind, StepKind::SynthesizeAll) && i + 1 != steps.len() {
            errors.push(syn::Error::new(step.name.span(), "`synthesize_all` must be the last step"));
        }
    }
    errors.finish()?;
    Ok(Schedule { steps })
}

fn parse_step(name: &syn::Ident, args: Option<TokenStream>, block: Option<TokenStream>) -> syn::Result<StepKind> {
    use syn::parse::Parser;
    let args = args.unwrap_or_default();
    let no_args = |kind: StepKind| {
        if args.is_empty() {
            Ok(kind)
        } else {
            Err(syn::Error::new_spanned(&args, format!("`{name}` takes no arguments")))
        }
    };
    match name.to_string().as_str() {
        "tile" => (|input: ParseStream| {
            let sizes = parse_sizes(input)?;
            ensure_empty(input)?;
            Ok(StepKind::Tile { sizes })
        })
        .parse2(args),
        "split" => (|input: ParseStream| {
            let (k, span) = parse_number(input, "the reduction tile size")?;
            ensure_empty(input)?;
            Ok(StepKind::Split { k: (u32::try_from(k).map_err(|_| syn::Error::new(span, "too large"))?, span) })
        })
        .parse2(args),
        "move_param" => parse_move_param.parse2(args),
        "to_accum" => no_args(StepKind::ToAccum),
        "synthesize_all" => no_args(StepKind::SynthesizeAll),
        "select" => (|input: ParseStream| {
            let ident: syn::Ident = input.parse().map_err(|e| syn::Error::new(e.span(), "expected a kernel name"))?;
            ensure_empty(input)?;
            let name = ident.to_string();
            match KernelKind::from_name(&name) {
                Some(k) => Ok(StepKind::Select { kernel: (k, ident.span()) }),
                None => match PAPER_KERNEL_NAMES.iter().find(|(paper, _)| *paper == name) {
                    Some((_, ours)) => Err(syn::Error::new(
                        ident.span(),
                        format!("unknown kernel `{name}`; the paper's `{name}` is called `{ours}` here"),
                    )),
                    None => Err(unknown(ident.span(), "kernel", &name, KernelKind::ALL.iter().map(|k| k.name()))),
                },
            }
        })
        .parse2(args),
        "subschedule" => {
            let Some(block) = block else {
                return Err(syn::Error::new(name.span(), "expected `subschedule([path]) { steps }`"));
            };
            let path_tokens = args.clone();
            let path = (|input: ParseStream| {
                let content;
                bracketed!(content in input);
                let mut path = Vec::new();
                while !content.is_empty() {
                    let (i, span) = parse_number(&content, "a child index")?;
                    path.push((i as usize, span));
                    if !content.is_empty() {
                        content.parse::<Token![,]>()?;
                    }
                }
                ensure_empty(input)?;
                Ok(path)
            })
            .parse2(args)
            .map_err(|e| syn::Error::new(e.span(), format!("{e}; expected a path such as `[1]`")))?;
            let body = parse_schedule.parse2(block)?;
            if let Some(s) = body.steps.iter().find(|s| matches!(s.kind, StepKind::SynthesizeAll)) {
                return Err(syn::Error::new(
                    s.name.span(),
                    "`synthesize_all` applies to the whole kernel; use it as the last top-level step",
                ));
            }
            Ok(StepKind::Subschedule { path, path_tokens, body })
        }
        other => Err(unknown(name.span(), "schedule step", other, STEP_NAMES)),
    }
}

fn ensure_empty(input: ParseStream) -> syn::Result<()> {
    if input.is_empty() { Ok(()) } else { Err(input.error("unexpected extra argument")) }
}

/// `[1, 1, 1, 16]` or `1x1x1x16`.
fn parse_sizes(input: ParseStream) -> syn::Result<Vec<(u32, Span)>> {
    if input.peek(syn::token::Bracket) {
        let content;
        bracketed!(content in input);
        let mut sizes = Vec::new();
        while !content.is_empty() {
            let (v, span) = parse_number(&content, "a tile size")?;
            sizes.push((u32::try_from(v).map_err(|_| syn::Error::new(span, "tile size too large"))?, span));
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        return Ok(sizes);
    }
    let lit: syn::LitInt =
        input.parse().map_err(|e| syn::Error::new(e.span(), "expected tile sizes such as `[1, 1, 1, 16]`"))?;
    let text = lit.to_string();
    text.split('x')
        .map(|p| p.parse::<u32>().map(|v| (v, lit.span())))
        .collect::<Result<_, _>>()
        .map_err(|_| syn::Error::new(lit.span(), "expected tile sizes such as `[1, 1, 1, 16]` or `1x1x1x16`"))
}

fn parse_move_param(input: ParseStream) -> syn::Result<StepKind> {
    let (operand, operand_span) = parse_number(input, "an operand index")?;
    input.parse::<Token![,]>().map_err(|e| syn::Error::new(e.span(), "expected `,` and a destination level"))?;
    let mut errors = Errors::default();
    let (level, level_ident) =
        parse_name(input, ("memory level", "L1"), Level::from_name, Level::ALL.map(Level::name), &mut errors)?;
    errors.finish()?;
    let level = level.expect("unknown levels are reported as errors");
    let (mut layout, mut vector_size) = (None, None);
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.peek(syn::token::Bracket) {
            let (dims, tokens) = parse_physical_layout(input)?;
            layout = Some((LayoutDecl::Physical(dims), tokens));
            continue;
        }
        let ident: syn::Ident = input.parse()?;
        match ident.to_string().as_str() {
            "row_major" => layout = Some((LayoutDecl::RowMajor, ident.to_token_stream())),
            "col_major" => layout = Some((LayoutDecl::ColMajor, ident.to_token_stream())),
            _ => match prefixed_number(&ident, 'v') {
                Some(v) => vector_size = Some((v as u32, ident.span())),
                None => {
                    return Err(unknown(
                        ident.span(),
                        "move_param argument",
                        &ident.to_string(),
                        ["row_major", "col_major", "v8"],
                    ));
                }
            },
        }
    }
    Ok(StepKind::MoveParam {
        operand: (operand as usize, operand_span),
        level: (level, level_ident.span()),
        layout,
        vector_size,
    })
}

/// Applies the steps of `schedule` to `spec`, except a final `synthesize_all` (which the caller
/// performs). Returns the partial implementation and whether `synthesize_all` was requested.
/// Errors carry the span of the offending argument.
pub fn apply_schedule(spec: Spec, schedule: &Schedule, target: &'static Target) -> syn::Result<(PartialImpl, bool)> {
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

fn apply_step(partial: PartialImpl, step: &Step) -> syn::Result<PartialImpl> {
    let at_name = |e: ScheduleError| syn::Error::new(step.name.span(), e);
    match &step.kind {
        StepKind::Tile { sizes } => {
            let tile: Vec<u32> = sizes.iter().map(|s| s.0).collect();
            let all = || {
                let mut ts = TokenStream::new();
                for (_, span) in sizes {
                    ts.extend(quote::quote_spanned!(*span=> x));
                }
                ts
            };
            partial.tile(&tile).map_err(|e| match &e {
                ScheduleError::Rewrite(
                    RewriteError::TileLarger { dim, .. }
                    | RewriteError::TileZero { dim, .. }
                    | RewriteError::ReductionNeedsAccum { dim, .. },
                ) => syn::Error::new(sizes[*dim].1, e),
                ScheduleError::Rewrite(_) => syn::Error::new_spanned(all(), e),
                _ => at_name(e),
            })
        }
        StepKind::Split { k } => partial.split(k.0).map_err(|e| match e {
            ScheduleError::Rewrite(_) => syn::Error::new(k.1, e),
            _ => at_name(e),
        }),
        StepKind::MoveParam { operand, level, layout, vector_size } => partial
            .move_param(operand.0, level.0, layout.as_ref().map(|l| l.0.clone()), vector_size.map(|v| v.0))
            .map_err(|e| match &e {
                ScheduleError::Rewrite(RewriteError::OperandOutOfRange { .. }) => syn::Error::new(operand.1, e),
                ScheduleError::Rewrite(RewriteError::MoveInvalid { .. }) => match (vector_size, layout) {
                    (Some(v), _) => syn::Error::new(v.1, e),
                    (None, Some(l)) => syn::Error::new_spanned(&l.1, e),
                    _ => syn::Error::new(level.1, e),
                },
                ScheduleError::Layout(_) => match layout {
                    Some(l) => syn::Error::new_spanned(&l.1, e),
                    None => syn::Error::new(level.1, e),
                },
                ScheduleError::Rewrite(_) => syn::Error::new(level.1, e),
                _ => at_name(e),
            }),
        StepKind::ToAccum => partial.to_accum().map_err(at_name),
        StepKind::Select { kernel } => partial.select(kernel.0).map_err(|e| match e {
            ScheduleError::Rewrite(_) => syn::Error::new(kernel.1, e),
            _ => at_name(e),
        }),
        StepKind::Subschedule { path, path_tokens, body } => {
            let indices: Vec<usize> = path.iter().map(|p| p.0).collect();
            let spec = partial.spec_at(&indices).map_err(|e| match &e {
                ScheduleError::Path { position, .. } => match path.get(*position) {
                    Some((_, span)) => syn::Error::new(*span, e),
                    None => syn::Error::new_spanned(path_tokens, e),
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

impl fmt::Display for Schedule {
    /// Canonical text of the schedule (used in symbol hashes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            StepKind::Tile { sizes } => {
                let s: Vec<String> = sizes.iter().map(|(v, _)| v.to_string()).collect();
                write!(f, "tile([{}]);", s.join(", "))
            }
            StepKind::Split { k } => write!(f, "split({});", k.0),
            StepKind::MoveParam { operand, level, layout, vector_size } => {
                write!(f, "move_param({}, {}", operand.0, level.0)?;
                if let Some((l, _)) = layout {
                    write!(f, ", {l}")?;
                }
                if let Some((v, _)) = vector_size {
                    write!(f, ", v{v}")?;
                }
                f.write_str(");")
            }
            StepKind::ToAccum => f.write_str("to_accum;"),
            StepKind::Select { kernel } => write!(f, "select({});", kernel.0),
            StepKind::Subschedule { path, body, .. } => {
                let p: Vec<String> = path.iter().map(|(i, _)| i.to_string()).collect();
                write!(f, "subschedule([{}]) {{ {body} }}", p.join(", "))
            }
            StepKind::SynthesizeAll => f.write_str("synthesize_all;"),
        }
    }
}
