//! Specs that cannot reach their kernels: an operand in global memory with no L1 left to stage
//! it through.
//!
//! The only kernels that touch global memory are `Memcpy` and `MemsetZero`, and all their
//! operands are in addressed memory (L1 or GL). So an operand in global memory that no kernel
//! of its Spec's primitive accepts there reaches the kernels that consume it only through a
//! copy in L1, which the Spec's implementation must allocate: at least one cache line. Where
//! the Spec's L1 limit is below that, it has no implementation, and it has none at any limits
//! up to the same L1 limit. The search would otherwise explore every tiling and register move of
//! such a Spec before finding that nothing fits, or, under a budget, never find out.

use crate::kernels::KernelKind;
use crate::level::Level;
use crate::limits::MemoryLimits;
use crate::spec::Spec;
use crate::target::Target;

/// If `spec` has an operand in global memory that must be staged in L1 and its L1 limit cannot
/// hold a cache line: the largest limits at which that stays so (every level unbounded but L1).
pub(super) fn unstageable(spec: &Spec, target: &Target) -> Option<MemoryLimits> {
    let line = u64::from(target.line_bytes);
    if spec.limits().get(Level::L1) >= line {
        return None;
    }
    let primitive = spec.logical().primitive()?;
    let needs_staging = spec
        .logical()
        .operands()
        .iter()
        .enumerate()
        .any(|(i, t)| t.level() == Level::GL && !KernelKind::any_accepts(primitive, i, Level::GL));
    needs_staging.then(|| {
        let mut horizon = super::unbounded();
        super::lower_to(&mut horizon, Level::L1, line - 1);
        horizon
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX512;

    /// The fact [`unstageable`] relies on: every kernel that accepts an operand in global
    /// memory keeps all its operands in addressed memory.
    #[test]
    fn only_memory_to_memory_kernels_reach_global_memory() {
        use crate::kernels::MEMORY;
        for kernel in KernelKind::ALL {
            let levels: Vec<&[Level]> =
                (0..).map(|i| kernel.operand_levels(i)).take_while(|levels| !levels.is_empty()).collect();
            if levels.iter().any(|l| l.contains(&Level::GL)) {
                assert!(levels.iter().all(|l| l.iter().all(|x| MEMORY.contains(x))), "{kernel:?} reaches registers");
            }
        }
    }

    #[test]
    fn a_matmul_in_global_memory_without_l1_has_no_implementation() {
        let text = "Matmul(1x4x4x4, (f32, GL, row_major), (f32, L1, row_major), (f32, L1, row_major), serial)";
        let spec = Spec::parse_for(text, &X86_AVX512).unwrap();
        let bytes = |l1| MemoryLimits::from_bytes_unchecked([64, 2048, l1, 1 << 30]);
        let horizon = unstageable(&spec.with_limits(bytes(32)), &X86_AVX512).expect("no L1 line left");
        assert_eq!(horizon.get(Level::L1), 63);
        assert_eq!(unstageable(&spec.with_limits(bytes(64)), &X86_AVX512), None);
        let in_l1 = "Matmul(1x4x4x4, (f32, L1, row_major), (f32, L1, row_major), (f32, L1, row_major), serial)";
        let spec = Spec::parse_for(in_l1, &X86_AVX512).unwrap();
        assert_eq!(unstageable(&spec.with_limits(bytes(0)), &X86_AVX512), None);
    }
}
