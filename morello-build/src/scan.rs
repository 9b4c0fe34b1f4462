//! Finding `kernel!` invocations in Rust source files.

use morello_core::syntax::{KernelDecl, check_nesting, parse_kernel_decls};
use syn::visit::Visit;

/// Parses `source` and returns every kernel declared with `kernel!` (as `kernel!`,
/// `morello::kernel!` or any path ending in `kernel`), in source order. Errors from all
/// invocations, and from every bad declaration within one, are returned together.
pub fn find_kernels(source: &str) -> syn::Result<Vec<KernelDecl>> {
    // syn parses nested brackets recursively: refuse absurdly deep nesting before it overflows
    // the stack. Text that does not tokenize is left for `parse_file` to report.
    if let Ok(tokens) = source.parse::<proc_macro2::TokenStream>() {
        check_nesting(&tokens)?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
morello::kernel! {
    pub fn a(Matmull(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));
    pub fn good(Move(4x4, (f32, GL), (f32, GL)));
    pub fn b(Move(4x4, (f33, GL), (f32, GL)));
    pub fn c(Move(4x4, (f32, GL), (f32, GL))) schedule { tiles([1, 1]); }
}
kernel! {
    fn d(Move(4x4, (f32, GL), (f32, XX)));
}
";

    #[test]
    fn every_bad_kernel_of_every_invocation_is_reported() {
        let errors = find_kernels(SOURCE).unwrap_err();
        let lines: Vec<usize> = errors.clone().into_iter().map(|e| e.span().start().line).collect();
        assert_eq!(lines, [2, 4, 5, 8], "{errors:?}");
        let report: Vec<String> =
            crate::diagnostic::SourceError::from_syn(std::path::Path::new("src/k.rs"), SOURCE, &errors)
                .into_iter()
                .map(|e| crate::diagnostic::Diagnostic::Source(e).to_string())
                .collect();
        let report = report.join("\n");
        assert_eq!(report.matches("error: src/k.rs:").count(), 4, "{report}");
        assert!(report.contains("src/k.rs:5:58: unknown schedule step `tiles`"), "{report}");
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let source = format!("fn f() {{ {}{} }}", "(".repeat(100_000), ")".repeat(100_000));
        let error = find_kernels(&source).map(drop).unwrap_err();
        assert!(error.to_string().contains("nest more than"), "{error}");
    }
}
