//! The Spec notation and the schedule language, parsed from Rust tokens.
//!
//! The same parser serves the `spec!`, `schedule!` and `kernel!` macros (whose errors point at
//! the offending token) and build scripts (which report file, line and column), so both agree
//! on what is valid.
//!
//! Spec notation (paper §2.2), as written inside macros:
//!
//! ```text
//! (MatmulAccum(1x4x128x16, (f32, L1, row_major), (f32, L1, col_major, c0),
//!              (f32, VRF, row_major, v8), serial), [64, 512, 32768, 1073741824])
//! ```
//!
//! Shapes are written `1x4x16` (or `1×4×16` in strings). Operands are `(dtype, level)` with an
//! optional layout (`row_major`, `col_major`, or physical dimensions such as
//! `[0, 2, 1, 2 p16]`), vector size `vN` and contiguity `cN`; an operand may start with its own
//! shape, which must agree with the Spec. Memory limits are bytes per level (RF, VRF, L1, GL)
//! and default to the target's capacity.

mod kernel;
mod schedule;
mod spec;

pub use kernel::{KernelDecl, parse_kernel_decls};
pub use schedule::{Schedule, Step, StepKind, apply_schedule, parse_schedule};
pub use spec::{ParseSpecError, parse_spec};

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

/// A number embedded in an identifier with a one-letter prefix, such as `v8` or `c0`.
pub(crate) fn prefixed_number(ident: &syn::Ident, prefix: char) -> Option<u64> {
    let s = ident.to_string();
    let rest = s.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// Converts a span to "line:column" (1-based) when locations are available.
pub fn span_location(span: Span) -> (usize, usize) {
    let start = span.start();
    (start.line, start.column + 1)
}
