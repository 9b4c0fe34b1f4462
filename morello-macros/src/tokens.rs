//! Turning compile-time values back into Rust tokens.

use morello_core::layout::PhysDim;
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
            let dims = dims.iter().map(|PhysDim { logical, strip }| {
                let strip = match strip {
                    Some(s) => quote!(::core::option::Option::Some(#s)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(::morello_core::layout::PhysDim { logical: #logical, strip: #strip })
            });
            quote!(::morello_core::spec::LayoutDecl::Physical(::std::vec![#(#dims),*]))
        }
    }
}
