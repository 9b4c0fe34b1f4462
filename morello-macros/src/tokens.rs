//! Turning compile-time values back into Rust tokens.

use morello_core::layout::{PhysDim, PhysKind};
use morello_core::spec::{LayoutDecl, Spec};
use proc_macro2::TokenStream;
use quote::quote;

/// An expression that evaluates to `spec` at run time. The text was produced by the printer
/// and validated by the parser, so parsing it again cannot fail.
pub fn spec_value(spec: &Spec) -> TokenStream {
    let text = spec.to_string();
    quote! {
        ::morello_core::spec::Spec::parse_for(#text, &::morello_core::target::X86_AVX2)
            .expect("morello: a Spec validated at compile time parses at run time")
    }
}

/// An expression for a `LayoutDecl`.
pub fn layout_decl(decl: &LayoutDecl) -> TokenStream {
    match decl {
        LayoutDecl::RowMajor => quote!(::morello_core::spec::LayoutDecl::RowMajor),
        LayoutDecl::ColMajor => quote!(::morello_core::spec::LayoutDecl::ColMajor),
        LayoutDecl::Physical(dims) => {
            let dims = dims.iter().map(|PhysDim { logical, kind }| {
                let kind = match kind {
                    PhysKind::Dynamic => quote!(::morello_core::layout::PhysKind::Dynamic),
                    PhysKind::Packed(s) => quote!(::morello_core::layout::PhysKind::Packed(#s)),
                    PhysKind::OddEven(s) => quote!(::morello_core::layout::PhysKind::OddEven(#s)),
                };
                quote!(::morello_core::layout::PhysDim { logical: #logical, kind: #kind })
            });
            quote!(::morello_core::spec::LayoutDecl::Physical(::std::vec![#(#dims),*]))
        }
    }
}
