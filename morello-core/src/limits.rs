//! Per-level memory limits and peak memory usage (paper §2.4.4).
//!
//! Both are vectors of bytes, one entry per [`Level`]. For register files the byte counts are
//! whole registers times the register size; for L1 and GL, limits are powers of two (or zero):
//! tightening a limit subtracts what a new buffer consumes and snaps down to a power of two,
//! and peaks are rounded up to a power of two. That pairing is what makes a decision found at
//! limit `L` valid at every limit between its peak and `L`.

use crate::level::{LEVEL_COUNT, Level};
use crate::target::Target;
use std::fmt;
use thiserror::Error;

/// Memory available to (or used by) an implementation, in bytes per level.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct MemoryLimits([u64; LEVEL_COUNT]);

/// Peak memory use of an implementation; the same representation as limits.
pub type MemoryUsage = MemoryLimits;

/// Why a memory-limit vector is invalid for a target.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum LimitsError {
    /// A register-file limit is not a whole number of registers.
    #[error("the {level} limit {bytes} is not a multiple of the {register_bytes}-byte register size")]
    NotWholeRegisters {
        /// The level.
        level: Level,
        /// The limit given.
        bytes: u64,
        /// The register size.
        register_bytes: u32,
    },
    /// An L1 or GL limit is not a power of two.
    #[error("the {level} limit {bytes} must be a power of two (or 0); try {suggestion}")]
    NotPowerOfTwo {
        /// The level.
        level: Level,
        /// The limit given.
        bytes: u64,
        /// The nearest power of two below.
        suggestion: u64,
    },
}

impl MemoryLimits {
    /// Validates byte limits for `target`. Limits above the target's capacity are allowed (a
    /// Spec may be written for a larger machine); synthesis and schedules use the capacity
    /// instead (see [`MemoryLimits::clamped_to`]).
    pub fn new(bytes: [u64; LEVEL_COUNT], target: &Target) -> Result<Self, LimitsError> {
        for level in Level::ALL {
            let b = bytes[level.index()];
            let info = target.level(level);
            if info.register_bytes > 0 {
                if !b.is_multiple_of(u64::from(info.register_bytes)) {
                    return Err(LimitsError::NotWholeRegisters {
                        level,
                        bytes: b,
                        register_bytes: info.register_bytes,
                    });
                }
            } else if b != 0 && !b.is_power_of_two() {
                return Err(LimitsError::NotPowerOfTwo { level, bytes: b, suggestion: snap_down(b) });
            }
        }
        Ok(MemoryLimits(bytes))
    }

    /// These limits, lowered to what `target` has at each level.
    pub fn clamped_to(&self, target: &Target) -> MemoryLimits {
        self.min_per_level(&target.max_limits())
    }

    /// Wraps byte values without validation (for targets' own tables and peaks).
    pub const fn from_bytes_unchecked(bytes: [u64; LEVEL_COUNT]) -> Self {
        MemoryLimits(bytes)
    }

    /// No memory at any level.
    pub const fn zero() -> Self {
        MemoryLimits([0; LEVEL_COUNT])
    }

    /// Bytes at `level`.
    pub fn get(&self, level: Level) -> u64 {
        self.0[level.index()]
    }

    /// The byte values, indexed by [`Level::index`].
    pub fn bytes(&self) -> [u64; LEVEL_COUNT] {
        self.0
    }

    /// Limits after allocating `bytes` at `level`: register files subtract exactly, addressed
    /// levels subtract and snap down to a power of two. `None` when it does not fit.
    pub fn allocate(&self, level: Level, bytes: u64, target: &Target) -> Option<MemoryLimits> {
        let available = self.get(level);
        let left = available.checked_sub(bytes)?;
        let mut out = *self;
        out.0[level.index()] = if target.level(level).register_bytes > 0 { left } else { snap_down(left) };
        Some(out)
    }

    /// Whether every level of `self` is at most the same level of `other`.
    pub fn fits_within(&self, other: &MemoryLimits) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a <= b)
    }

    /// Level-wise maximum.
    pub fn max_per_level(&self, other: &MemoryLimits) -> MemoryLimits {
        MemoryLimits(std::array::from_fn(|i| self.0[i].max(other.0[i])))
    }

    /// Level-wise minimum.
    pub fn min_per_level(&self, other: &MemoryLimits) -> MemoryLimits {
        MemoryLimits(std::array::from_fn(|i| self.0[i].min(other.0[i])))
    }

    /// Peak usage of `own` bytes at `level` held while a child peaking at `self` runs:
    /// added, with addressed levels rounded up to a power of two.
    pub fn plus_allocation(&self, level: Level, own: u64, target: &Target) -> MemoryUsage {
        let mut out = *self;
        let sum = out.0[level.index()] + own;
        out.0[level.index()] = if target.level(level).register_bytes > 0 { sum } else { snap_up(sum) };
        out
    }

    /// A usage vector with `bytes` at `level` only, rounded as a peak.
    pub fn single(level: Level, bytes: u64, target: &Target) -> MemoryUsage {
        MemoryLimits::zero().plus_allocation(level, bytes, target)
    }
}

/// Largest power of two `<= x`, or 0.
pub fn snap_down(x: u64) -> u64 {
    if x == 0 { 0 } else { 1 << (63 - x.leading_zeros()) }
}

/// Smallest power of two `>= x`, or 0.
pub fn snap_up(x: u64) -> u64 {
    if x == 0 { 0 } else { x.next_power_of_two() }
}

impl fmt::Display for MemoryLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}, {}, {}]", self.0[0], self.0[1], self.0[2], self.0[3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX2;

    #[test]
    fn allocation_snaps_addressed_levels_down() {
        let l = X86_AVX2.max_limits();
        let after = l.allocate(Level::L1, 64, &X86_AVX2).unwrap();
        assert_eq!(after.get(Level::L1), 16 * 1024);
        let regs = l.allocate(Level::VRF, 64, &X86_AVX2).unwrap();
        assert_eq!(regs.get(Level::VRF), 448);
        assert!(l.allocate(Level::RF, 65, &X86_AVX2).is_none());
    }

    #[test]
    fn validation_names_the_problem() {
        assert!(matches!(
            MemoryLimits::new([64, 512, 30000, 1 << 30], &X86_AVX2),
            Err(LimitsError::NotPowerOfTwo { suggestion: 16384, .. })
        ));
        assert!(matches!(
            MemoryLimits::new([63, 512, 32768, 1 << 30], &X86_AVX2),
            Err(LimitsError::NotWholeRegisters { .. })
        ));
        assert!(MemoryLimits::new([64, 512, 32768, 1 << 30], &X86_AVX2).is_ok());
    }
}
