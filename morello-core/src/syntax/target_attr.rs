//! `#[target(avx512)]`: which target a `kernel!` (or `spec!`, `schedule!`) is for.

use super::unknown;
use crate::target::{Target, TargetId, X86_AVX2};

/// The target every declaration without `#[target(...)]` is for.
pub const DEFAULT_TARGET: &Target = &X86_AVX2;

/// Removes a `#[target(name)]` attribute from `attrs` and returns the target it names
/// (`avx2`, `avx512` or `portable`), or the default target without one.
pub fn take_target_attribute(attrs: &mut Vec<syn::Attribute>) -> syn::Result<&'static Target> {
    let mut found: Option<(&'static Target, proc_macro2::Span)> = None;
    let mut error: Option<syn::Error> = None;
    attrs.retain(|attr| {
        if !attr.path().is_ident("target") {
            return true;
        }
        let parsed = attr.parse_args::<syn::Ident>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a target name: `#[target(avx2)]`, `#[target(avx512)]` or `#[target(portable)]`",
            )
        });
        let result = parsed.and_then(|ident| {
            let name = ident.to_string();
            match TargetId::from_name(&name) {
                Some(id) if found.is_none() => {
                    found = Some((id.target(), ident.span()));
                    Ok(())
                }
                Some(_) => Err(syn::Error::new(ident.span(), "only one `#[target(...)]` is allowed")),
                None => Err(unknown(ident.span(), "target", &name, TargetId::ALL.map(|t| t.target().short_name))),
            }
        });
        if let Err(e) = result {
            match &mut error {
                Some(first) => first.combine(e),
                None => error = Some(e),
            }
        }
        false
    });
    if let Some(e) = error {
        return Err(e);
    }
    Ok(found.map_or(DEFAULT_TARGET, |(t, _)| t))
}
