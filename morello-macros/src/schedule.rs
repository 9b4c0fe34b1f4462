//! `schedule!`: a schedule compiled into calls on `morello_core::schedule::PartialImpl`.

use crate::tokens::{layout_decl, spec_value};
use morello_core::syntax::{Schedule, StepKind, apply_schedule, parse_schedule, parse_spec};
use morello_core::target::X86_AVX2;
use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::parse::Parser;

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let mut trees: Vec<TokenTree> = input.into_iter().collect();
    let Some(TokenTree::Group(block)) =
        trees.pop().filter(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace))
    else {
        return Err(syn::Error::new(proc_macro2::Span::call_site(), "expected `schedule!(spec, { steps })`"));
    };
    match trees.pop() {
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
        _ => return Err(syn::Error::new(block.span(), "expected `,` before the `{ steps }` block")),
    }
    let spec_tokens: TokenStream = trees.into_iter().collect();
    let schedule = parse_schedule.parse2(block.stream())?;

    // A Spec written in Spec notation is checked together with the schedule now.
    let literal = (|input: syn::parse::ParseStream| {
        let spec = parse_spec(input, &X86_AVX2)?;
        if !input.is_empty() {
            return Err(input.error("not a Spec"));
        }
        Ok(spec)
    })
    .parse2(spec_tokens.clone());
    let spec_expr = match literal {
        Ok(spec) => {
            apply_schedule(spec.clone(), &schedule, &X86_AVX2)?;
            spec_value(&spec)
        }
        Err(_) => quote!(::core::clone::Clone::clone(&(#spec_tokens))),
    };
    let synthesize = matches!(schedule.steps.last().map(|s| &s.kind), Some(StepKind::SynthesizeAll));
    let steps = steps(&schedule);
    let (ret, finish) = if synthesize {
        (
            quote!(::morello_core::imp::Impl),
            quote! {
                let mut synth = ::morello_core::search::Synthesizer::new(p.target());
                p.synthesize_all(&mut synth)
            },
        )
    } else {
        (quote!(::morello_core::schedule::PartialImpl), quote!(::core::result::Result::Ok(p)))
    };
    Ok(quote! {
        (|| -> ::core::result::Result<#ret, ::morello_core::schedule::ScheduleError> {
            let spec: ::morello_core::spec::Spec = #spec_expr;
            let p = ::morello_core::schedule::PartialImpl::new(spec, &::morello_core::target::X86_AVX2);
            #steps
            #finish
        })()
    })
}

fn steps(schedule: &Schedule) -> TokenStream {
    let mut out = TokenStream::new();
    for step in &schedule.steps {
        out.extend(match &step.kind {
            StepKind::Tile { sizes } => {
                let sizes = sizes.iter().map(|s| s.0);
                quote!(let p = p.tile(&[#(#sizes),*])?;)
            }
            StepKind::Split { k } => {
                let k = k.0;
                quote!(let p = p.split(#k)?;)
            }
            StepKind::MoveParam { operand, level, layout, vector_size } => {
                let operand = operand.0;
                let level = format_ident!("{}", level.0.name());
                let layout = match layout {
                    Some((l, _)) => {
                        let l = layout_decl(l);
                        quote!(::core::option::Option::Some(#l))
                    }
                    None => quote!(::core::option::Option::None),
                };
                let vs = match vector_size {
                    Some((v, _)) => quote!(::core::option::Option::Some(#v)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(let p = p.move_param(#operand, ::morello_core::level::Level::#level, #layout, #vs)?;)
            }
            StepKind::ToAccum => quote!(let p = p.to_accum()?;),
            StepKind::Select { kernel } => {
                let k = format_ident!("{}", kernel.0.name());
                quote!(let p = p.select(::morello_core::kernels::KernelKind::#k)?;)
            }
            StepKind::Subschedule { path, body, .. } => {
                let path = path.iter().map(|p| p.0);
                let inner = steps(body);
                quote! {
                    let p = p.subschedule(&[#(#path),*], |p| {
                        #inner
                        ::core::result::Result::Ok(p)
                    })?;
                }
            }
            StepKind::SynthesizeAll => TokenStream::new(),
        });
    }
    out
}
