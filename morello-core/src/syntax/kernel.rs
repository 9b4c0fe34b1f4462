//! `kernel!` declarations: `#[doc] [#[target(name)]] pub fn name(Spec) [schedule { steps }]`.

use super::schedule::{Schedule, apply_schedule, parse_schedule};
use super::spec::parse_spec;
use crate::job::SynthesisJob;
use crate::schedule::ScheduleError;
use crate::spec::Spec;
use crate::target::Target;
use proc_macro2::TokenStream;
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

/// Parses the contents of a `kernel!` invocation: one or more declarations.
pub fn parse_kernel_decls(tokens: TokenStream) -> syn::Result<Vec<KernelDecl>> {
    (|input: ParseStream| {
        let mut decls = Vec::new();
        while !input.is_empty() {
            decls.push(parse_decl(input)?);
        }
        if decls.is_empty() {
            return Err(input.error("expected a kernel such as `pub fn name(Matmul(...));`"));
        }
        Ok(decls)
    })
    .parse2(tokens)
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
    let spec = parse_spec(&content, target)?;
    if !content.is_empty() {
        return Err(content.error("unexpected tokens after the Spec"));
    }
    let schedule = if input.peek(syn::Ident) && input.fork().parse::<syn::Ident>()? == "schedule" {
        let keyword: syn::Ident = input.parse()?;
        let body;
        syn::braced!(body in input);
        Some((keyword, parse_schedule(&body)?))
    } else {
        None
    };
    let _ = input.parse::<Option<Token![;]>>()?;
    let decl = KernelDecl { attrs, vis, name, spec, spec_tokens, schedule, target };
    decl.check()?;
    Ok(decl)
}

impl KernelDecl {
    /// Applies the schedule (without synthesis) and checks it leaves nothing unscheduled
    /// unless it ends with `synthesize_all`.
    pub fn check(&self) -> syn::Result<()> {
        let Some((keyword, schedule)) = &self.schedule else { return Ok(()) };
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
        Ok(())
    }

    /// Applies the schedule and returns what is left to synthesize: the whole Spec when the
    /// kernel has no schedule, else every Spec the schedule left. The job may run on another
    /// thread; [`KernelDecl::synthesis_error`] turns its failure into an error at the right
    /// token.
    pub fn synthesis_job(&self) -> syn::Result<SynthesisJob> {
        match &self.schedule {
            None => Ok(SynthesisJob::Whole(self.spec.clone())),
            Some((_, schedule)) => {
                Ok(SynthesisJob::Leaves(apply_schedule(self.spec.clone(), schedule, self.target)?.0))
            }
        }
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
