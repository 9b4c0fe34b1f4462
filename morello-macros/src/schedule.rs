//! `schedule!`: a schedule checked at compile time and applied to a Spec at run time.

use crate::tokens::{spec_value, target_value};
use morello_core::syntax::{StepKind, apply_schedule, parse_schedule, parse_spec, take_target_attribute};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::parse::{ParseStream, Parser};

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    morello_core::syntax::check_nesting(&input)?;
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
    let (target, spec_tokens) = (|input: ParseStream| {
        let mut attrs = input.call(syn::Attribute::parse_outer)?;
        let target = take_target_attribute(&mut attrs)?;
        Ok((target, input.parse::<TokenStream>()?))
    })
    .parse2(trees.into_iter().collect())?;
    let schedule = parse_schedule.parse2(block.stream())?;

    // A Spec written in Spec notation is checked together with the schedule now.
    let literal = (|input: ParseStream| {
        let spec = parse_spec(input, target)?;
        if !input.is_empty() {
            return Err(input.error("not a Spec"));
        }
        Ok(spec)
    })
    .parse2(spec_tokens.clone());
    let spec_expr = match literal {
        Ok(spec) => {
            apply_schedule(spec.clone(), &schedule, target)?;
            spec_value(&spec, target)
        }
        Err(_) => quote!(::core::clone::Clone::clone(&(#spec_tokens))),
    };
    let synthesize = matches!(schedule.steps.last().map(|s| &s.kind), Some(StepKind::SynthesizeAll));
    let text = schedule.to_string();
    let target = target_value(target);
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
            let (p, _) = ::morello_core::syntax::run_schedule(spec, #text, #target)?;
            #finish
        })()
    })
}
