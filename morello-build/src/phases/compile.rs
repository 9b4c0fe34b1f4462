//! Phases 6 and 7: each target's C compiled into a static library with that target's ISA
//! flags only, which `cc` links into the crate; then the marker each kernel's wrapper checks.

use super::emit::Emitted;
use crate::diagnostic::BuildError;
use morello_core::symbol::build_marker_env;

/// Compiles the C of `emitted` into `lib<lib_name>_<target>.a`, one per target.
pub fn compile(emitted: &Emitted, lib_name: &str) -> Result<(), BuildError> {
    for (short_name, (target, files)) in &emitted.per_target {
        let mut cc = cc::Build::new();
        cc.files(files).opt_level(3).flag("-std=gnu11");
        for flag in target.compiler_flags() {
            cc.flag(flag);
        }
        let name = format!("{lib_name}_{short_name}");
        cc.try_compile(&name).map_err(|e| {
            BuildError::build(format!(
                "morello: compiling the generated C in {} for {} failed: {e}\n(set CC_ENABLE_DEBUG_OUTPUT=1 to see the \
                 compiler invocation)",
                emitted.c_dir.display(),
                target.name
            ))
        })?;
    }
    Ok(())
}

/// Tells the crate that every kernel of `emitted` was compiled: each wrapper checks its
/// marker with `env!`, so a kernel whose file the build did not list fails with a message
/// rather than a link error.
pub fn link(emitted: &Emitted) {
    for (_, symbol) in &emitted.kernels {
        println!("cargo::rustc-env={}=1", build_marker_env(symbol));
    }
}
