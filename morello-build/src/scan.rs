//! Finding `kernel!` invocations in Rust source files.

use morello_core::syntax::{KernelDecl, parse_kernel_decls};
use syn::visit::Visit;

/// Parses `source` and returns every kernel declared with `kernel!` (as `kernel!`,
/// `morello::kernel!` or any path ending in `kernel`), in source order. Errors from all
/// invocations are returned together.
pub fn find_kernels(source: &str) -> syn::Result<Vec<KernelDecl>> {
    let file = syn::parse_file(source)?;
    let mut finder = Finder { found: Vec::new(), error: None };
    finder.visit_file(&file);
    match finder.error {
        Some(e) => Err(e),
        None => Ok(finder.found),
    }
}

struct Finder {
    found: Vec<KernelDecl>,
    error: Option<syn::Error>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let is_kernel = mac.path.segments.last().is_some_and(|s| s.ident == "kernel");
        if !is_kernel {
            return;
        }
        match parse_kernel_decls(mac.tokens.clone()) {
            Ok(decls) => self.found.extend(decls),
            Err(e) => match &mut self.error {
                Some(existing) => existing.combine(e),
                None => self.error = Some(e),
            },
        }
    }
}
