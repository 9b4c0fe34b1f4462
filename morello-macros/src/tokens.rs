//! Turning compile-time values back into Rust tokens.

use morello_core::spec::Spec;
use morello_core::target::Target;
use proc_macro2::TokenStream;
use quote::quote;

/// An expression that evaluates to `spec` (for `target`) at run time. The text was produced
/// by the printer and validated by the parser, so parsing it again cannot fail.
pub fn spec_value(spec: &Spec, target: &Target) -> TokenStream {
    let text = spec.to_string();
    let target = target_value(target);
    quote! {
        ::morello_core::spec::Spec::parse_for(#text, #target)
            .expect("morello: a Spec validated at compile time parses at run time")
    }
}

/// An expression for `&'static Target`.
pub fn target_value(target: &Target) -> TokenStream {
    let name = target.name;
    quote! {
        ::morello_core::target::TargetId::from_name(#name).expect("morello: a known target").target()
    }
}
