//! The phases of [`Build::try_compile`](crate::Build::try_compile), in order: read the
//! environment Cargo gives the build script, scan the source files for kernels, plan each
//! kernel's synthesis (its schedule applied), synthesize, emit C, compile and link. Each phase
//! returns every problem it found as [`Diagnostic`](crate::diagnostic::Diagnostic)s.

pub mod compile;
pub mod emit;
pub mod environment;
pub mod plan;
pub mod scan;
pub mod synthesize;
