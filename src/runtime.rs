//! The runtime support generated kernel wrappers call.

use std::fmt;
use std::sync::OnceLock;

/// Why a kernel could not run.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum KernelError {
    /// A slice does not have the length of the operand's buffer.
    WrongLength {
        /// The kernel.
        kernel: &'static str,
        /// The operand.
        operand: &'static str,
        /// Elements the operand's buffer has.
        expected: usize,
        /// Elements the slice has.
        actual: usize,
    },
    /// The CPU lacks instructions the kernel was compiled to use.
    UnsupportedCpu {
        /// The kernel.
        kernel: &'static str,
        /// The missing CPU features.
        missing: Vec<&'static str>,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::WrongLength { kernel, operand, expected, actual } => write!(
                f,
                "morello kernel `{kernel}`: operand `{operand}` must have {expected} elements, but the slice has {actual}"
            ),
            KernelError::UnsupportedCpu { kernel, missing } => {
                write!(f, "morello kernel `{kernel}` needs CPU features this machine lacks: {}", missing.join(", "))
            }
        }
    }
}

impl std::error::Error for KernelError {}

/// Checks an operand slice's length.
pub fn check_len(
    kernel: &'static str,
    operand: &'static str,
    expected: usize,
    actual: usize,
) -> Result<(), KernelError> {
    if expected == actual { Ok(()) } else { Err(KernelError::WrongLength { kernel, operand, expected, actual }) }
}

/// Whether the CPU has a kernel's ISA features: detected once, then cached.
pub struct CpuSupport {
    kernel: &'static str,
    detect: fn() -> Vec<&'static str>,
    missing: OnceLock<Vec<&'static str>>,
}

impl CpuSupport {
    /// A check for `kernel` whose `detect` function lists the features missing on this CPU.
    pub const fn new(kernel: &'static str, detect: fn() -> Vec<&'static str>) -> Self {
        CpuSupport { kernel, detect, missing: OnceLock::new() }
    }

    /// `Ok` if the CPU supports the kernel.
    pub fn check(&self) -> Result<(), KernelError> {
        let missing = self.missing.get_or_init(self.detect);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(KernelError::UnsupportedCpu { kernel: self.kernel, missing: missing.clone() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_explain_themselves() {
        let e = check_len("k", "lhs", 16, 15).unwrap_err();
        assert_eq!(e.to_string(), "morello kernel `k`: operand `lhs` must have 16 elements, but the slice has 15");
        static MISSING: CpuSupport = CpuSupport::new("k", || vec!["avx512f"]);
        assert!(matches!(MISSING.check(), Err(KernelError::UnsupportedCpu { .. })));
        static PRESENT: CpuSupport = CpuSupport::new("k", Vec::new);
        assert_eq!(PRESENT.check(), Ok(()));
    }
}
