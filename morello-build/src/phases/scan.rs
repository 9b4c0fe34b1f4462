//! Phase 2: read each source file once and find its kernels, checking what needs no search:
//! unique names, a target the crate's architecture runs, a C compiler that takes the code.

use super::environment::Environment;
use crate::diagnostic::{BuildError, Diagnostics};
use morello_core::syntax::KernelDecl;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A source file, read once.
pub struct SourceFile {
    /// The path given to `Build::file`.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// A kernel and the file that declares it.
pub struct Declared {
    /// The declaration.
    pub decl: KernelDecl,
    /// Index of its file in [`Scanned::files`].
    pub file: usize,
}

/// Every kernel of the build's files.
pub struct Scanned {
    /// The files, in the order given.
    pub files: Vec<SourceFile>,
    /// The kernels, in declaration order.
    pub kernels: Vec<Declared>,
}

impl Scanned {
    /// Records `error`, about `kernel`, in `problems`, located in the kernel's file.
    pub fn report(&self, kernel: &Declared, error: &syn::Error, problems: &mut Diagnostics) {
        let file = &self.files[kernel.file];
        problems.push_syn(&file.path, &file.text, error);
    }
}

/// Reads `files` (relative to the crate root) and finds their kernels.
pub fn scan(files: &[PathBuf], env: &Environment) -> Result<Scanned, BuildError> {
    let mut found = Diagnostics::default();
    let mut scanned = Scanned { files: Vec::new(), kernels: Vec::new() };
    // Case-insensitive: each kernel also defines a `NAME_SPEC` constant.
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for path in files {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(env.manifest_dir.join(path)).map_err(|e| {
            BuildError::build(format!(
                "morello: cannot read {}: {e}; check the path given to `Build::file`",
                path.display()
            ))
        })?;
        let file = scanned.files.len();
        match crate::scan::find_kernels(&text) {
            Ok(decls) => {
                for decl in decls {
                    let name = decl.plain_name();
                    if let Some(&previous) = names.get(&name.to_uppercase()) {
                        let message = format!(
                            "a kernel named `{name}` is already declared in {}; kernel names must be unique in a crate",
                            scanned.files.get(previous).map_or(path.as_path(), |f| f.path.as_path()).display()
                        );
                        found.push_syn(path, &text, &syn::Error::new(decl.name.span(), message));
                    } else {
                        names.insert(name.to_uppercase(), file);
                    }
                    scanned.kernels.push(Declared { decl, file });
                }
            }
            Err(e) => found.push_syn(path, &text, &e),
        }
        scanned.files.push(SourceFile { path: path.clone(), text });
    }
    let scanned = found.finish(scanned)?;
    if !scanned.kernels.is_empty() && env.msvc {
        return Err(BuildError::build(
            "morello: the generated C uses GNU vector extensions, so it needs gcc or clang; MSVC targets are not \
             supported (use a -gnu target)",
        ));
    }
    let mut wrong_arch = Diagnostics::default();
    for kernel in &scanned.kernels {
        let decl = &kernel.decl;
        if let Some(needed) = decl.target.arch
            && needed != env.arch
        {
            let message = format!(
                "kernel `{}` targets {} (an {needed} target), but this crate is being built for `{}`; use \
                 `#[target(portable)]` for scalar C that builds anywhere",
                decl.plain_name(),
                decl.target.name,
                env.arch
            );
            let file = &scanned.files[kernel.file];
            wrong_arch.push_syn(&file.path, &file.text, &syn::Error::new(decl.name.span(), message));
        }
    }
    wrong_arch.finish(scanned)
}
