//! Exported symbol names for kernels.
//!
//! The `kernel!` macro and the build helper derive a kernel's symbol independently from the
//! same inputs, like cxx does: the package, the kernel's name, its canonical Spec, its
//! canonical schedule, the target and the code-generation format version. Any change to those
//! changes the symbol, so a stale object file can never satisfy a newer declaration.

use crate::spec::Spec;
use crate::target::Target;

/// Bumped whenever generated code changes meaning for the same inputs.
pub const FORMAT_VERSION: u32 = 1;

/// The symbol of kernel `name` in `package`.
pub fn kernel_symbol(package: &str, name: &str, spec: &Spec, schedule: &str, target: &Target) -> String {
    let key = format!("morello/{FORMAT_VERSION}\n{}\n{package}\n{name}\n{spec}\n{schedule}", target.name);
    let package_ident: String = package.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("morello_{package_ident}_{name}_{:016x}", fnv1a64(key.as_bytes()))
}

/// FNV-1a, 64-bit: stable across platforms and compiler versions.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The environment variable through which the build helper tells the crate that `symbol` was
/// compiled (the macro refers to it with `env!`, so a missing build step is a clear error).
pub fn build_marker_env(symbol: &str) -> String {
    format!("MORELLO_KERNEL_{symbol}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
