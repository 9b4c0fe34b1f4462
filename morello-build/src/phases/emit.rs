//! Phase 5: C for every kernel, written to `OUT_DIR/morello/` (only files whose text changed,
//! so unchanged kernels are not recompiled).

use super::environment::Environment;
use super::scan::Scanned;
use crate::diagnostic::BuildError;
use morello_core::codegen::emit_c;
use morello_core::imp::Impl;
use morello_core::target::Target;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The C files of the build.
pub struct Emitted {
    /// Where they are.
    pub c_dir: PathBuf,
    /// For each kernel, its name and exported symbol, in declaration order.
    pub kernels: Vec<(String, String)>,
    /// Every C file, in declaration order.
    pub c_files: Vec<PathBuf>,
    /// The C files of each target, by the target's short name.
    pub per_target: BTreeMap<&'static str, (&'static Target, Vec<PathBuf>)>,
}

/// Writes the C of each kernel, implemented by `implementations` (in declaration order).
pub fn emit(scanned: &Scanned, implementations: &[Impl], env: &Environment) -> Result<Emitted, BuildError> {
    let c_dir = env.out_dir.join("morello");
    std::fs::create_dir_all(&c_dir)
        .map_err(|e| BuildError::build(format!("morello: cannot create {}: {e}", c_dir.display())))?;
    let mut emitted = Emitted { c_dir, kernels: Vec::new(), c_files: Vec::new(), per_target: BTreeMap::new() };
    for (kernel, imp) in scanned.kernels.iter().zip(implementations) {
        let decl = &kernel.decl;
        let symbol = decl.symbol(&env.package);
        let c = emit_c(imp, &symbol, decl.target).map_err(|e| BuildError::build(format!("morello: {e}")))?;
        let path = emitted.c_dir.join(format!("{symbol}.c"));
        write_if_changed(&path, &c.source)?;
        emitted.c_files.push(path.clone());
        emitted.kernels.push((decl.plain_name(), symbol));
        emitted.per_target.entry(decl.target.short_name).or_insert_with(|| (decl.target, Vec::new())).1.push(path);
    }
    Ok(emitted)
}

/// Writes `contents` unless the file already holds exactly that.
fn write_if_changed(path: &Path, contents: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|existing| existing == contents) {
        return Ok(());
    }
    std::fs::write(path, contents)
        .map_err(|e| BuildError::build(format!("morello: cannot write {}: {e}", path.display())))
}
