//! Procedural macros of Morello: `spec!`, `schedule!` and `kernel!`.
//!
//! All three parse the paper's notation with `morello-core`'s parser at compile time, so
//! mistakes are reported as compile errors on the offending token. None of them synthesizes
//! code or touches files: `kernel!` only declares the compiled kernel and its safe wrappers;
//! `morello-build`, run from `build.rs`, compiles the kernel itself.

#![warn(missing_docs)]
mod kernel;
mod schedule;
mod tokens;

use proc_macro::TokenStream;

/// Declares fixed-shape kernels compiled by `morello-build` and generates safe wrappers.
///
/// ```ignore
/// // Needs a crate whose build.rs runs morello_build on this file.
/// morello::kernel! {
///     /// 64×64×64 f32 matrix multiplication.
///     pub fn matmul64(Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL)));
/// }
/// ```
///
/// Each kernel `name` becomes `name(...)`, which panics on wrong slice lengths or an
/// unsupported CPU, and `try_name(...)`, which returns `Err` instead. Inputs are `&[T]`,
/// outputs `&mut [T]`, each the operand's buffer in its declared layout.
#[proc_macro]
pub fn kernel(input: TokenStream) -> TokenStream {
    kernel::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Checks Spec notation at compile time and evaluates to a `morello_core::spec::Spec`.
/// `#[target(avx512)]` (or `portable`) before the Spec validates it for another target.
///
/// ```
/// let spec = morello_macros::spec!(Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL)));
/// assert_eq!(spec.shape(), &[1, 16, 16, 16]);
/// ```
#[proc_macro]
pub fn spec(input: TokenStream) -> TokenStream {
    let input: proc_macro2::TokenStream = input.into();
    if let Err(e) = morello_core::syntax::check_nesting(&input) {
        return e.into_compile_error().into();
    }
    let parsed = syn::parse::Parser::parse2(
        |stream: syn::parse::ParseStream| {
            let mut attrs = stream.call(syn::Attribute::parse_outer)?;
            let target = morello_core::syntax::take_target_attribute(&mut attrs)?;
            let spec = morello_core::syntax::parse_spec(stream, target)?;
            if !stream.is_empty() {
                return Err(stream.error("unexpected tokens after the Spec"));
            }
            Ok((spec, target))
        },
        input,
    );
    match parsed {
        Ok((spec, target)) => tokens::spec_value(&spec, target).into(),
        Err(e) => e.into_compile_error().into(),
    }
}

/// Applies a schedule to a Spec at run time, checked at compile time.
///
/// `schedule!(spec, { steps })` evaluates to `Result<PartialImpl, ScheduleError>`, or to
/// `Result<Impl, ScheduleError>` when the last step is `synthesize_all`. When `spec` is
/// written in Spec notation, every step is also checked against it at compile time.
///
/// ```
/// let imp = morello_macros::schedule!(MatmulAccum(1x1x4x16, (f32, L1), (f32, L1), (f32, L1)), {
///     move_param(2, VRF, row_major, v8);
///     synthesize_all;
/// })
/// .unwrap();
/// assert!(imp.is_complete());
/// ```
#[proc_macro]
pub fn schedule(input: TokenStream) -> TokenStream {
    schedule::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
