//! The schedule language: Halide-style rewrite steps written inside `kernel!` and `schedule!`.
//!
//! ```text
//! tile([1, 1, 1, 16]);                   // loop over tiles (sizes per Spec dimension)
//! tile([1, 64, 1, 512], parallel);       // ... with iterations on several threads
//! split(4);                              // tile the reduction dimension
//! move_param(2, VRF, row_major, v8);     // move operand 2 (layout, vN and dtype optional)
//! move_param(0, L1, row_major, f32);     // ... widening a bf16 input to f32
//! to_accum;                              // zero the output, then accumulate
//! peel(128);                             // the first 128 of the reduction, then accumulate
//! select(BroadcastVecMultAdd);           // use a microkernel
//! bufferize(0, L1, row_major);           // split a Compose through a temporary
//! spatial_split;                         // a 1×1-output ConvAccum as a loop of Matmuls
//! broadcast_first(VRF, row_major, v8);   // DivideVecScalar via a broadcast temporary
//! to_softmax_parts(RF);                  // Softmax → denominator and unscaled, then divide
//! to_softmax_parts_recompute(RF, (L1, row_major));
//! to_max_and_denominator;                // online max+denominator → two passes
//! to_max_and_unscaled(RF);
//! parallel_split(256, L1);               // long softmax rows in chunks merged afterwards
//! subschedule([1]) { select(VectorAssign); }
//! synthesize_all;                        // synthesize every Spec left (last step only)
//! ```
//!
//! A destination for a temporary is `LEVEL[, layout][, vN]`; where a step takes two, each is
//! a bare level or parenthesized.

mod apply;
mod text;
mod written;

pub use apply::{apply_schedule, run_schedule};
pub use text::ParseScheduleError;
pub use written::Written;

use super::operand::parse_physical_layout;
use super::{Errors, parse_name, parse_number, prefixed_number, unknown};
use crate::dtype::Dtype;
use crate::kernels::KernelKind;
use crate::level::Level;
use crate::rewrite::{REWRITE_NAMES, Rewrite, TempDest};
use crate::spec::LayoutDecl;
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

/// Where a step puts a tensor: a level, an optional layout, vector size and dtype, each with
/// its tokens.
#[derive(Clone, Debug)]
pub struct Destination {
    /// The level.
    pub level: (Level, Span),
    /// The layout, if given.
    pub layout: Option<(LayoutDecl, TokenStream)>,
    /// The vector size, if given.
    pub vector_size: Option<(u32, Span)>,
    /// The dtype, if given (moves only).
    pub dtype: Option<(Dtype, Span)>,
    /// How many innermost physical dimensions are contiguous (`c1`), if given (moves only;
    /// all of them otherwise).
    pub contig: Option<(u8, Span)>,
    /// All its tokens.
    pub tokens: TokenStream,
}

impl Destination {
    /// As a temporary's destination (row-major unless a layout is given).
    pub fn temp(&self) -> TempDest {
        TempDest {
            level: self.level.0,
            layout: self.layout.as_ref().map_or(LayoutDecl::RowMajor, |l| l.0.clone()),
            vector_size: self.vector_size.map(|v| v.0),
        }
    }
}

/// The schedule steps.
#[derive(Clone, Debug)]
pub enum StepKind {
    /// A rewrite (see the [rewrite table](crate::rewrite::table)).
    Rewrite(Box<Rewrite<Written>>),
    /// `split(k)`: a tile of the reduction dimensions to `k`, the others whole.
    Split {
        /// The reduction tile size.
        k: (u32, Span),
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

/// The steps that are not rewrites.
const OTHER_STEP_NAMES: [&str; 3] = ["split", "subschedule", "synthesize_all"];

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
    match name.to_string().as_str() {
        "split" => (|input: ParseStream| {
            let k = parse_u32(input, "the reduction tile size")?;
            ensure_empty(input)?;
            Ok(StepKind::Split { k })
        })
        .parse2(args),
        "synthesize_all" if args.is_empty() => Ok(StepKind::SynthesizeAll),
        "synthesize_all" => Err(syn::Error::new_spanned(&args, "`synthesize_all` takes no arguments")),
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
                    path.push(parse_index(&content, "a child index")?);
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
        other => match written::parse_rewrite(name, args) {
            Some(rewrite) => rewrite.map(|r| StepKind::Rewrite(Box::new(r))),
            None => {
                Err(unknown(name.span(), "schedule step", other, REWRITE_NAMES.iter().copied().chain(OTHER_STEP_NAMES)))
            }
        },
    }
}

/// A kernel's name.
fn parse_kernel(input: ParseStream) -> syn::Result<(KernelKind, Span)> {
    let ident: syn::Ident = input.parse().map_err(|e| syn::Error::new(e.span(), "expected a kernel name"))?;
    let name = ident.to_string();
    match KernelKind::from_name(&name) {
        Some(k) => Ok((k, ident.span())),
        None => match PAPER_KERNEL_NAMES.iter().find(|(paper, _)| *paper == name) {
            Some((_, ours)) => Err(syn::Error::new(
                ident.span(),
                format!("unknown kernel `{name}`; the paper's `{name}` is called `{ours}` here"),
            )),
            None => Err(unknown(ident.span(), "kernel", &name, KernelKind::ALL.iter().map(|k| k.name()))),
        },
    }
}

fn ensure_empty(input: ParseStream) -> syn::Result<()> {
    if input.is_empty() { Ok(()) } else { Err(input.error("unexpected extra argument")) }
}

/// A position (an operand, stage or child index).
fn parse_index(input: ParseStream, what: &str) -> syn::Result<(usize, Span)> {
    let (v, span) = parse_number(input, what)?;
    Ok((usize::try_from(v).map_err(|_| syn::Error::new(span, "index too large"))?, span))
}

fn parse_u32(input: ParseStream, what: &str) -> syn::Result<(u32, Span)> {
    let (v, span) = parse_number(input, what)?;
    Ok((u32::try_from(v).map_err(|_| syn::Error::new(span, "too large"))?, span))
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

/// `LEVEL[, layout][, vN][, dtype]` up to the end of `input` (a dtype only if `with_dtype`).
fn parse_destination(input: ParseStream, with_dtype: bool) -> syn::Result<Destination> {
    let tokens: TokenStream = input.fork().parse()?;
    let mut errors = Errors::default();
    let (level, level_ident) =
        parse_name(input, ("memory level", "L1"), Level::from_name, Level::ALL.map(Level::name), &mut errors)?;
    errors.finish()?;
    let level = level.expect("unknown levels are reported as errors");
    let mut dest = Destination {
        level: (level, level_ident.span()),
        layout: None,
        vector_size: None,
        dtype: None,
        contig: None,
        tokens,
    };
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.peek(syn::token::Bracket) {
            let (dims, tokens) = parse_physical_layout(input)?;
            dest.layout = Some((LayoutDecl::Physical(dims), tokens));
            continue;
        }
        let ident: syn::Ident = input.parse()?;
        let name = ident.to_string();
        match name.as_str() {
            "row_major" => dest.layout = Some((LayoutDecl::RowMajor, ident.to_token_stream())),
            "col_major" => dest.layout = Some((LayoutDecl::ColMajor, ident.to_token_stream())),
            _ => match (prefixed_number(&ident, 'v'), Dtype::from_name(&name)) {
                (Some(v), _) => {
                    let v = u32::try_from(v).map_err(|_| syn::Error::new(ident.span(), "vector size too large"))?;
                    dest.vector_size = Some((v, ident.span()));
                }
                (None, None) if with_dtype && prefixed_number(&ident, 'c').is_some() => {
                    let c = prefixed_number(&ident, 'c').and_then(|c| u8::try_from(c).ok());
                    let c = c.ok_or_else(|| syn::Error::new(ident.span(), "contiguity too large"))?;
                    dest.contig = Some((c, ident.span()));
                }
                (None, Some(d)) if with_dtype => dest.dtype = Some((d, ident.span())),
                _ => {
                    let mut expected = vec!["row_major", "col_major", "v8"];
                    if with_dtype {
                        expected.push("f32");
                    }
                    return Err(unknown(ident.span(), "destination argument", &name, expected));
                }
            },
        }
    }
    Ok(dest)
}

/// A destination that is a bare level or `(LEVEL, layout, vN)`.
fn parse_grouped_destination(input: ParseStream) -> syn::Result<Destination> {
    use syn::parse::Parser;
    if input.peek(syn::token::Paren) {
        let content;
        parenthesized!(content in input);
        let inner: TokenStream = content.parse()?;
        return (|i: ParseStream| parse_destination(i, false)).parse2(inner);
    }
    let level: syn::Ident = input.parse()?;
    (|i: ParseStream| parse_destination(i, false)).parse2(level.to_token_stream())
}

impl fmt::Display for Schedule {
    /// Canonical text of the schedule (used in symbol hashes, and parsed back at run time).
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

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.level.0)?;
        if let Some((l, _)) = &self.layout {
            write!(f, ", {l}")?;
        }
        if let Some((v, _)) = self.vector_size {
            write!(f, ", v{v}")?;
        }
        if let Some((d, _)) = self.dtype {
            write!(f, ", {d}")?;
        }
        if let Some((c, _)) = self.contig {
            write!(f, ", c{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            StepKind::Rewrite(rewrite) => write!(f, "{rewrite};"),
            StepKind::Split { k } => write!(f, "split({});", k.0),
            StepKind::Subschedule { path, body, .. } => {
                let p: Vec<String> = path.iter().map(|(i, _)| i.to_string()).collect();
                write!(f, "subschedule([{}]) {{ {body} }}", p.join(", "))
            }
            StepKind::SynthesizeAll => f.write_str("synthesize_all;"),
        }
    }
}
