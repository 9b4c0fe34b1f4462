//! The synthesis suite: Specs of the sizes real models have, whose cold synthesis time the
//! project keeps as a budget (`morello-db bench` runs them; `tests/synthesis_budget.rs` guards
//! the number of Specs a few of them search).
//!
//! Every Spec is serial, with its operands in global memory, row-major, f32 unless its name
//! says otherwise, at the target's maximum memory limits: what `kernel!` asks for by default.

use crate::spec::Spec;
use crate::syntax::ParseSpecError;
use crate::target::Target;

/// One Spec of the suite.
#[derive(Clone, Debug)]
pub struct SuiteSpec {
    /// A short name for tables (`matmul 1x128x128x128`).
    pub name: &'static str,
    /// The Spec in the notation of [`Spec::parse_for`], without limits.
    pub text: String,
}

impl SuiteSpec {
    /// The Spec for `target`, at its maximum memory limits.
    pub fn spec(&self, target: &Target) -> Result<Spec, ParseSpecError> {
        Ok(Spec::parse_for(&self.text, target)?.with_limits(target.max_limits()))
    }
}

/// The Spec `text` named `name`.
fn named(name: &'static str, text: &str) -> SuiteSpec {
    SuiteSpec { name, text: text.to_owned() }
}

/// A Matmul `b×m×k×n` with inputs of `input` and output of `output` dtype.
fn matmul(name: &'static str, [b, m, k, n]: [u32; 4], input: &str, output: &str) -> SuiteSpec {
    named(name, &format!("Matmul({b}x{m}x{k}x{n}, ({input}, GL), ({input}, GL), ({output}, GL), serial)"))
}

/// Peak resident memory of this process in MiB, from `/proc/self/status` (NaN where that
/// does not exist): what a synthesis benchmark run in a process of its own reports.
pub fn peak_resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: Option<f64> = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
    kib.map_or(f64::NAN, |k| k / 1024.0)
}

/// The suite, smallest searches first.
pub fn suite() -> Vec<SuiteSpec> {
    let f32_matmul = |name, shape| matmul(name, shape, "f32", "f32");
    let bf16_matmul = |name, shape| matmul(name, shape, "bf16", "f32");
    vec![
        f32_matmul("matmul 64^3", [1, 64, 64, 64]),
        f32_matmul("matmul 100^3", [1, 100, 100, 100]),
        f32_matmul("matmul 3x64^3", [3, 64, 64, 64]),
        named("softmax 8x512", "Softmax(8x512, scan=1, (f32, GL), (f32, GL), serial)"),
        named(
            "matmul-softmax-matmul 64",
            "Compose([Matmul(1x64x64x64), Softmax(1x64x64, scan=2) -> f32, Matmul(1x64x64x64) -> f32], \
             (f32, GL), (f32, GL), (f32, GL), (f32, GL), serial)",
        ),
        named("conv 1x8x3x30x30x3x3", "Conv(1x8x3x30x30x3x3, (f32, GL), (f32, GL), (f32, GL), serial)"),
        f32_matmul("matmul 128^3", [1, 128, 128, 128]),
        f32_matmul("matmul 8x512x512", [1, 8, 512, 512]),
        f32_matmul("matmul 1x2048x16384", [1, 1, 2048, 16384]),
        bf16_matmul("matmul 1x2048x16384 bf16", [1, 1, 2048, 16384]),
        bf16_matmul("matmul 7x768x3072 bf16", [1, 7, 768, 3072]),
        f32_matmul("matmul 256^3", [1, 256, 256, 256]),
        named("conv 1x64x64x56x56x3x3", "Conv(1x64x64x56x56x3x3, (f32, GL), (f32, GL), (f32, GL), serial)"),
        f32_matmul("matmul 512^3", [1, 512, 512, 512]),
        f32_matmul("matmul 1024^3", [1, 1024, 1024, 1024]),
        f32_matmul("matmul 2048^3", [1, 2048, 2048, 2048]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetId;

    #[test]
    fn every_suite_spec_parses_for_every_target_with_a_unique_name() {
        let specs = suite();
        for target in [TargetId::X86Avx2, TargetId::X86Avx512] {
            for s in &specs {
                let spec = s.spec(target.target()).unwrap_or_else(|e| panic!("{}: {e}", s.name));
                assert!(spec.logical().serial(), "{}", s.name);
            }
        }
        let mut names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
    }
}
