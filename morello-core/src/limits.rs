//! Per-level memory limits and peak memory usage (paper §2.4.4).
//!
//! Both are vectors of bytes, one entry per [`Level`]. For register files the byte counts are
//! whole registers times the register size; for L1 and GL, limits are powers of two, zero, or
//! the level's whole capacity (which need not be a power of two: 48 KiB L1 caches are common):
//! tightening a limit subtracts what a new buffer consumes and snaps down to one of those
//! values, and peaks are rounded up to one. That pairing is what makes a decision found at
//! limit `L` valid at every limit between its peak and `L`.

use crate::level::{LEVEL_COUNT, Level};
use crate::target::{Target, snap_down_within, snap_up_within};
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
    /// An L1 or GL limit is neither a power of two nor the level's capacity.
    #[error(
        "the {level} limit {bytes} must be a power of two, 0 or the level's capacity ({capacity}); try {suggestion}"
    )]
    NotPermitted {
        /// The level.
        level: Level,
        /// The limit given.
        bytes: u64,
        /// The level's capacity on the target.
        capacity: u64,
        /// The nearest permitted limit below.
        suggestion: u64,
    },
}

impl MemoryLimits {
    /// Validates byte limits for `target`. Limits above an addressed level's capacity are
    /// allowed, whatever their value (a Spec may be written for a larger machine, such as an
    /// AVX-512 Spec's 48 KiB of L1 read for AVX2's 32 KiB); synthesis and schedules use what
    /// the target has instead (see [`MemoryLimits::clamped_to`]).
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
            } else if b < info.capacity_bytes && info.limit_at_most(b) != b {
                let suggestion = info.limit_at_most(b);
                return Err(LimitsError::NotPermitted { level, bytes: b, capacity: info.capacity_bytes, suggestion });
            }
        }
        Ok(MemoryLimits(bytes))
    }

    /// These limits, lowered to what `target` has at each level and to a limit it permits
    /// there: whole registers, and a power of two or the capacity at addressed levels (limits
    /// validated for another target need not be either).
    pub fn clamped_to(&self, target: &Target) -> MemoryLimits {
        MemoryLimits(std::array::from_fn(|i| {
            let info = target.level(Level::ALL[i]);
            info.limit_at_most(self.0[i].min(info.capacity_bytes))
        }))
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
    /// levels subtract and snap down to a permitted limit ([`LevelInfo::limit_at_most`]).
    /// `None` when it does not fit.
    ///
    /// [`LevelInfo::limit_at_most`]: crate::target::LevelInfo::limit_at_most
    pub fn allocate(&self, level: Level, bytes: u64, target: &Target) -> Option<MemoryLimits> {
        let left = self.get(level).checked_sub(bytes)?;
        let mut out = *self;
        out.0[level.index()] = target.level(level).limit_at_most(left);
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
    /// added, with addressed levels rounded up to a permitted limit
    /// ([`LevelInfo::peak_at_least`]).
    ///
    /// [`LevelInfo::peak_at_least`]: crate::target::LevelInfo::peak_at_least
    pub fn plus_allocation(&self, level: Level, own: u64, target: &Target) -> MemoryUsage {
        let mut out = *self;
        out.0[level.index()] = target.level(level).peak_at_least(out.0[level.index()] + own);
        out
    }

    /// A usage vector with `bytes` at `level` only, rounded as a peak.
    pub fn single(level: Level, bytes: u64, target: &Target) -> MemoryUsage {
        MemoryLimits::zero().plus_allocation(level, bytes, target)
    }
}

/// Smallest permitted limit above `x` at an addressed level of `capacity` bytes: the limits
/// `L` with `snap_down_within(L, capacity) <= x` are those below it.
pub fn next_limit_above(x: u64, capacity: u64) -> u64 {
    snap_up_within(snap_down_within(x, capacity).saturating_add(1), capacity)
}

impl Target {
    /// The largest memory limits this target allows.
    pub fn max_limits(&self) -> MemoryLimits {
        MemoryLimits::from_bytes_unchecked(self.levels.map(|l| l.capacity_bytes))
    }
}

impl fmt::Display for MemoryLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}, {}, {}]", self.0[0], self.0[1], self.0[2], self.0[3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{X86_AVX2, X86_AVX512};

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
            Err(LimitsError::NotPermitted { suggestion: 16384, .. })
        ));
        assert!(matches!(
            MemoryLimits::new([63, 512, 32768, 1 << 30], &X86_AVX2),
            Err(LimitsError::NotWholeRegisters { .. })
        ));
        assert!(MemoryLimits::new([64, 512, 32768, 1 << 30], &X86_AVX2).is_ok());
    }

    #[test]
    fn limits_written_for_another_target_are_clamped_to_permitted_ones() {
        // AVX-512's largest limits read for AVX2: above its capacity, so allowed, and clamped.
        let avx512 = X86_AVX512.max_limits();
        assert_eq!(avx512.get(Level::L1), 48 * 1024);
        let read = MemoryLimits::new(avx512.bytes(), &X86_AVX2).expect("above AVX2's capacity");
        assert_eq!(read.clamped_to(&X86_AVX2), X86_AVX2.max_limits());
        // Under AVX-512's capacity, a limit AVX2 permits but AVX-512 does not snaps down.
        let odd = MemoryLimits::new([64, 96, 40 * 1024, 1 << 30], &X86_AVX2).expect("above AVX2's capacity");
        assert_eq!(odd.clamped_to(&X86_AVX512).bytes(), [64, 64, 32 * 1024, 1 << 30]);
        assert_eq!(X86_AVX512.max_limits().clamped_to(&X86_AVX512), X86_AVX512.max_limits());
    }

    #[test]
    fn a_capacity_that_is_not_a_power_of_two_is_a_permitted_limit() {
        const KIB: u64 = 1024;
        let capacity = 48 * KIB;
        assert_eq!(snap_down_within(48 * KIB, capacity), 48 * KIB);
        assert_eq!(snap_down_within(47 * KIB, capacity), 32 * KIB);
        assert_eq!(snap_down_within(80 * KIB, capacity), 64 * KIB, "above the capacity: powers of two");
        assert_eq!(snap_up_within(33 * KIB, capacity), 48 * KIB);
        assert_eq!(snap_up_within(32 * KIB, capacity), 32 * KIB);
        assert_eq!(snap_up_within(49 * KIB, capacity), 64 * KIB);
        assert_eq!((snap_down_within(0, capacity), snap_up_within(0, capacity)), (0, 0));
        assert_eq!(next_limit_above(0, capacity), 1);
        assert_eq!(next_limit_above(20 * KIB, capacity), 32 * KIB);
        assert_eq!(next_limit_above(40 * KIB, capacity), 48 * KIB);
        assert_eq!(next_limit_above(48 * KIB, capacity), 64 * KIB);
        assert_eq!(next_limit_above(16 * KIB, 32 * KIB), 32 * KIB, "a power-of-two capacity: doubling");
        // Every limit below `next_limit_above(x)` snaps down to at most `x`, and that one does not.
        for x in (0..100 * KIB).step_by(512) {
            let next = next_limit_above(x, capacity);
            assert!(snap_down_within(next - 1, capacity) <= x && snap_down_within(next, capacity) > x, "{x}");
        }
    }
}
