//! `kernel!` declarations: `#[doc] [#[target(name)]] pub fn name(Spec) [schedule { steps }]`.

use super::Errors;
use super::schedule::{Schedule, apply_schedule, parse_schedule};
use super::spec::parse_spec;
use crate::job::SynthesisJob;
use crate::schedule::ScheduleError;
use crate::spec::Spec;
use crate::target::Target;
use proc_macro2::TokenStream;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Token, parenthesized};

/// One kernel declared with `kernel!`.
#[derive(Clone)]
pub struct KernelDecl {
    /// Attributes (doc comments) to put on the generated wrapper.
    pub attrs: Vec<syn::Attribute>,
    /// Visibility of the generated wrappers.
    pub vis: syn::Visibility,
    /// The kernel's name.
    pub name: syn::Ident,
    /// The Spec it implements.
    pub spec: Spec,
    /// The Spec's tokens (for error spans).
    pub spec_tokens: TokenStream,
    /// The `schedule` keyword and steps, if the kernel is scheduled by hand.
    pub schedule: Option<(syn::Ident, Schedule)>,
    /// The target it is compiled for.
    pub target: &'static Target,
}

/// Parses the contents of a `kernel!` invocation: one or more declarations. A declaration
/// with an error does not hide the ones after it: parsing resumes at the next declaration and
/// the errors of every bad declaration are returned together.
pub fn parse_kernel_decls(tokens: TokenStream) -> syn::Result<Vec<KernelDecl>> {
    super::check_nesting(&tokens)?;
    (|input: ParseStream| {
        let mut decls = Vec::new();
        let mut errors = Errors::default();
        while !input.is_empty() {
            let fork = input.fork();
            match parse_decl(&fork) {
                Ok(decl) => {
                    input.advance_to(&fork);
                    decls.push(decl);
                }
                Err(e) => {
                    errors.push(e);
                    skip_declaration(input)?;
                }
            }
        }
        errors.finish()?;
        if decls.is_empty() {
            return Err(input.error("expected a kernel such as `pub fn name(Matmul(...));`"));
        }
        Ok(decls)
    })
    .parse2(tokens)
}

/// Skips the declaration at the start of `input` after an error in it: its attributes,
/// visibility and `fn`, then everything up to and including a `;` or a `{ ... }` schedule
/// body (and a `;` after it), or up to the `#`, `pub` or `fn` that starts the next one.
fn skip_declaration(input: ParseStream) -> syn::Result<()> {
    let mut in_body = false;
    // After `#` or `pub`, a `[...]` or `(...)` still belongs to the attributes or visibility.
    let mut group_may_follow = false;
    while !input.is_empty() {
        let starts_declaration = input.peek(Token![#]) || input.peek(Token![pub]) || input.peek(Token![fn]);
        if in_body && starts_declaration {
            return Ok(());
        }
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            return Ok(());
        }
        if input.peek(syn::token::Brace) {
            input.parse::<proc_macro2::Group>()?;
            let _ = input.parse::<Option<Token![;]>>()?;
            return Ok(());
        }
        let group = input.peek(syn::token::Bracket) || input.peek(syn::token::Paren);
        in_body |= !(starts_declaration || (group_may_follow && group));
        group_may_follow = input.peek(Token![#]) || input.peek(Token![pub]);
        input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

fn parse_decl(input: ParseStream) -> syn::Result<KernelDecl> {
    let mut attrs = input.call(syn::Attribute::parse_outer)?;
    let target = super::take_target_attribute(&mut attrs)?;
    let vis: syn::Visibility = input.parse()?;
    input.parse::<Token![fn]>().map_err(|e| syn::Error::new(e.span(), "expected `fn name(Spec)`"))?;
    let name: syn::Ident = input.parse()?;
    let content;
    parenthesized!(content in input);
    let spec_tokens: TokenStream = content.fork().parse()?;
    // The Spec and the schedule are checked independently, so both report their errors.
    let spec = parse_spec(&content, target).and_then(|spec| {
        if content.is_empty() { Ok(spec) } else { Err(content.error("unexpected tokens after the Spec")) }
    });
    let schedule = if input.peek(syn::Ident) && input.fork().parse::<syn::Ident>()? == "schedule" {
        let keyword: syn::Ident = input.parse()?;
        let body;
        syn::braced!(body in input);
        Some(parse_schedule(&body).map(|s| (keyword, s)))
    } else {
        None
    };
    let _ = input.parse::<Option<Token![;]>>()?;
    let (spec, schedule) = match (spec, schedule.transpose()) {
        (Ok(spec), Ok(schedule)) => (spec, schedule),
        (Err(mut e), Err(second)) => {
            e.combine(second);
            return Err(e);
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    Ok(KernelDecl { attrs, vis, name, spec, spec_tokens, schedule, target })
}

/// Elaborates every declaration ([`KernelDecl::elaborate`]), returning the errors of all of
/// them together.
pub fn elaborate_kernels(decls: &[KernelDecl]) -> syn::Result<Vec<SynthesisJob>> {
    let mut jobs = Vec::new();
    let mut errors = Errors::default();
    for decl in decls {
        match decl.elaborate() {
            Ok(job) => jobs.push(job),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    Ok(jobs)
}

impl KernelDecl {
    /// Elaborates the declaration, which parsing does not: applies the schedule, if any (once;
    /// errors at the offending step's tokens), checks that it leaves nothing unscheduled unless
    /// it ends with `synthesize_all`, and returns what is left to synthesize: the whole Spec
    /// when the kernel has no schedule, else every Spec the schedule left. The job holds no
    /// tokens, so it may run on another thread; [`KernelDecl::synthesis_error`] turns its
    /// failure into an error at the right token.
    pub fn elaborate(&self) -> syn::Result<SynthesisJob> {
        let Some((keyword, schedule)) = &self.schedule else { return Ok(SynthesisJob::Whole(self.spec.clone())) };
        let (partial, synthesize) = apply_schedule(self.spec.clone(), schedule, self.target)?;
        let remaining = partial.root().unscheduled();
        if !synthesize && let Some(first) = remaining.first() {
            return Err(syn::Error::new(
                keyword.span(),
                format!(
                    "this schedule leaves {} Spec(s) unscheduled (first: {first}); end it with \
                     `synthesize_all;` or schedule them with `subschedule`",
                    remaining.len()
                ),
            ));
        }
        Ok(SynthesisJob::Leaves(partial))
    }

    /// A failure of this kernel's [`SynthesisJob`], on the schedule keyword if it has a
    /// schedule and on the Spec otherwise.
    pub fn synthesis_error(&self, error: ScheduleError) -> syn::Error {
        match &self.schedule {
            None => syn::Error::new_spanned(&self.spec_tokens, error),
            Some((keyword, _)) => syn::Error::new(keyword.span(), error),
        }
    }

    /// The exported C symbol for this kernel in package `package`: the same in the macro and
    /// in the build script, and different whenever anything that affects the code changes.
    pub fn symbol(&self, package: &str) -> String {
        let schedule = self.schedule.as_ref().map(|(_, s)| s.to_string()).unwrap_or_default();
        crate::symbol::kernel_symbol(package, &self.plain_name(), &self.spec, &schedule, self.target)
    }

    /// The kernel's name without any `r#` prefix.
    pub fn plain_name(&self) -> String {
        use syn::ext::IdentExt;
        self.name.unraw().to_string()
    }
}

impl std::fmt::Debug for KernelDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelDecl")
            .field("name", &self.name.to_string())
            .field("spec", &self.spec.to_string())
            .field("schedule", &self.schedule.as_ref().map(|(_, s)| s.to_string()))
            .field("target", &self.target.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    /// The messages of `text`'s errors, each with the text at the error's start.
    fn errors(text: &str) -> Vec<(String, String)> {
        let tokens = TokenStream::from_str(text).expect("the test input tokenizes");
        let Err(errors) = parse_kernel_decls(tokens) else { panic!("{text}: no error") };
        let lines: Vec<&str> = text.lines().collect();
        errors
            .into_iter()
            .map(|e| {
                let start = e.span().start();
                let at: String = lines[start.line - 1].chars().skip(start.column).collect();
                (e.to_string(), at)
            })
            .collect()
    }

    #[test]
    fn every_bad_declaration_is_reported() {
        let text = "\
/// Unknown primitive.
pub fn a(Matmull(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));
pub fn good(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)))
#[target(portable)]
pub(crate) fn b(Move(4x4, (f33, GL), (f32, GL)))
fn c(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL))) schedule { to_accum; tiles([1, 1, 1, 1]); synthesize_all; }
fn good2(Move(4x4, (f32, GL), (f32, GL)));
";
        let found = errors(text);
        let at: Vec<&str> = found.iter().map(|(_, at)| at.as_str()).collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(at[0].starts_with("Matmull("), "{found:?}");
        assert!(at[1].starts_with("f33"), "{found:?}");
        assert!(at[2].starts_with("tiles("), "{found:?}");
        assert!(found[0].0.contains("unknown primitive `Matmull`"), "{found:?}");
    }

    #[test]
    fn a_bad_spec_and_a_bad_schedule_in_one_declaration_are_both_reported() {
        let text = "fn k(Move(4x4, (f32, GL), (f32, XX))) schedule { frobnicate; }";
        let found = errors(text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].1.starts_with("XX") && found[1].1.starts_with("frobnicate"), "{found:?}");
    }

    #[test]
    fn recovery_skips_only_the_bad_declaration() {
        // Without `;` after it, a bad declaration ends where the next one starts.
        let text = "pub fun a(Move(4x4, (f32, GL), (f32, GL))) #[target(avx9)] fn b(Move(4x4, (f32, GL), (f32, GL))) \
                    fn c(Move(4x4, (f32, GL), (f32, GL))) fn d Move";
        let found = errors(text);
        let at: Vec<&str> = found.iter().map(|(_, at)| at.as_str()).collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(at[0].starts_with("fun") && at[1].starts_with("avx9") && at[2].starts_with("Move"), "{found:?}");
    }
}
