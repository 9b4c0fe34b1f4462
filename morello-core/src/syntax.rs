//! The Spec notation and the schedule language, parsed from Rust tokens.
//!
//! The same parser serves the `spec!`, `schedule!` and `kernel!` macros (whose errors point at
//! the offending token) and build scripts (which report file, line and column), so both agree
//! on what is valid.
//!
//! Spec notation (paper §2.2), as written inside macros:
//!
//! ```text
//! (MatmulAccum(1x4x128x16, (bf16, L1, row_major), (bf16, L1, col_major, c0),
//!              (f32, VRF, row_major, v8), serial), [64, 1024, 32768, 1073741824])
//! Softmax(8x512, scan=1, (f32, GL), (f32, GL))
//! Conv(1x8x4x30x30x3x3, (f32, GL), (f32, GL), (f32, GL))
//! Move(1x64x64, (bf16, GL), (f32, GL, [0, 2, 1, 2 oe16]))
//! Compose([Softmax(1x64x128, scan=2), Matmul(1x64x32x128) -> f32], (f32, GL), (f32, GL), (f32, GL))
//! ```
//!
//! * A primitive, its shape (`1x4x16`, or `1×4×16` in strings, or `[1, 4, 16]`) and, for the
//!   families that have one, its dimension parameter (`dim=N` for Broadcast and Max, `scan=N` for
//!   DivideVecScalar and the softmax family).
//! * One operand per parameter: `(dtype, level[, layout][, vN][, cN][, paged])`, optionally starting with
//!   its own shape, which must agree with the Spec. Layouts are `row_major`, `col_major`, or
//!   physical dimensions slowest first where a dimension may carry a packed strip `p16` or an
//!   odd-even strip `oe16`. `vN` is the lanes per vector register (VRF only); `cN` says only the
//!   innermost N physical dimensions are known to be adjacent (counted as written; `row_major`
//!   and `col_major` stand for the dimensions larger than 1). `paged` says the runs of such an
//!   operand start a whole number of pages apart ([`crate::tensor::TensorSpec::paged`]).
//! * `serial`: the implementation may use one thread only.
//! * Memory limits in bytes per level (RF, VRF, L1, GL), defaulting to the target's capacity.
//!   Register levels count whole registers; L1 and GL limits are powers of two. Limits above the
//!   target's capacity are kept as written and treated as the capacity when implementing.
//! * `#[target(avx2)]`, `#[target(avx512)]` or `#[target(portable)]` before a `kernel!`
//!   declaration (or inside `spec!`/`schedule!`) picks the target; AVX2 is the default.
//! * `Compose([head, ..., innermost -> dtype], operands...)`: stages from the outermost (which
//!   runs last) to the innermost, each non-head stage with its output dtype; the operands are
//!   the head's inputs after its first, then each middle stage's, then all of the innermost
//!   stage's inputs, then the output.

mod kernel;
mod nesting;
mod operand;
mod schedule;
mod spec;
mod target_attr;

pub use kernel::{KernelDecl, elaborate_kernels, parse_kernel_decls};
pub use nesting::{MAX_NESTING, check_nesting};
pub use schedule::{
    Destination, ParseScheduleError, Schedule, Step, StepKind, apply_schedule, parse_schedule, run_schedule,
};
pub use spec::{ParseSpecError, parse_spec};
pub use target_attr::{DEFAULT_TARGET, take_target_attribute};

pub use crate::text_error::ParseTextError;

use proc_macro2::Span;
use syn::parse::ParseStream;

/// Accumulates errors so a user sees every independent problem at once.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(e) => e.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// `name` followed by the closest candidate, if one is close enough: for "did you mean" hints.
pub(crate) fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// An "unknown X" error listing the valid names, with a suggestion when one is close.
pub(crate) fn unknown<'a>(
    span: Span,
    what: &str,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> syn::Error {
    let list: Vec<&str> = candidates.clone().into_iter().collect();
    let hint = match suggestion(name, candidates) {
        Some(s) => format!("; did you mean `{s}`?"),
        None => format!("; expected one of: {}", list.join(", ")),
    };
    syn::Error::new(span, format!("unknown {what} `{name}`{hint}"))
}

/// An identifier naming one of `names` (looked up with `lookup`). An unknown name is recorded
/// in `errors` (with a suggestion) and returned as `None`, so parsing can continue.
pub(crate) fn parse_name<'a, T>(
    input: ParseStream,
    (noun, example): (&str, &str),
    lookup: impl Fn(&str) -> Option<T>,
    names: impl IntoIterator<Item = &'a str> + Clone,
    errors: &mut Errors,
) -> syn::Result<(Option<T>, syn::Ident)> {
    let ident: syn::Ident =
        input.parse().map_err(|e| syn::Error::new(e.span(), format!("expected a {noun} such as `{example}`")))?;
    let value = lookup(&ident.to_string());
    if value.is_none() {
        errors.push(unknown(ident.span(), noun, &ident.to_string(), names));
    }
    Ok((value, ident))
}

/// A non-negative integer literal (no suffix).
pub(crate) fn parse_number(input: ParseStream, what: &str) -> syn::Result<(u64, Span)> {
    let lit: syn::LitInt =
        input.parse().map_err(|e| syn::Error::new(e.span(), format!("expected {what} (a number)")))?;
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(lit.span(), format!("expected {what} (a plain number)")));
    }
    let value = lit.base10_parse::<u64>().map_err(|e| syn::Error::new(lit.span(), e))?;
    Ok((value, lit.span()))
}

/// A number embedded in an identifier with a one-letter prefix, such as `v8` or `c0`. Digits
/// beyond `u64` give `u64::MAX`, so callers report them as too large.
pub(crate) fn prefixed_number(ident: &syn::Ident, prefix: char) -> Option<u64> {
    let s = ident.to_string();
    let rest = s.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(rest.parse().unwrap_or(u64::MAX))
}

/// Converts a span to "line:column" (1-based) when locations are available.
pub fn span_location(span: Span) -> (usize, usize) {
    let start = span.start();
    (start.line, start.column + 1)
}
