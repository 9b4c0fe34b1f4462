//! What a search that exceeded its budget learned about each rewrite of its Spec (a lower
//! bound on its cost, or that it is short of memory at these limits), kept so that the next
//! search of the same Spec at the same limits (under a larger budget) skips the rewrites that
//! still cannot fit without applying them.
//!
//! A Spec is often searched several times at one limit: parents ask with small budgets first,
//! and a top-level search raises its budget until the optimum fits. Applying a rewrite (building
//! its children) and bounding it is most of a search's work, and most rewrites are pruned
//! again each time. A rewrite's enumeration position does not depend on the limits (see
//! [`crate::search::actions`]), so bounds are stored in enumeration order, two bytes each.
//!
//! Most searched Specs are never searched again at the same limits, so what is learned is kept
//! for a while only: each memo table holds at most [`LEARNED_BYTES`] of it, in two generations,
//! and drops the older generation when the newer fills its half. A dropped bound costs time
//! (the rewrite is applied again), never a result.

use crate::limits::MemoryLimits;

/// The most memory learned bounds take, over all shards of a memo table.
///
/// Measured on the AVX-512 f32 Matmul 1×256×256×256 (one thread, empty memo table): with 64 MiB
/// the search took 85.1 s (peak RSS 615 MB); with 256 MiB nothing was dropped and it took
/// 65.2 s (854 MB), as with 1 GiB; keeping only probes' bounds, as before, 95.7 s (559 MB).
/// (Measured before rewrites short of memory were remembered too; with them, 53.1 s.)
pub(crate) const LEARNED_BYTES: usize = 256 << 20;

/// A lower bound on one rewrite's cost at the limits it was learned at (and so below them),
/// rounded down to 10 significant bits: a smaller lower bound is still a lower bound.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Learned(u16);

/// Codes below this are bounds stored exactly.
const EXACT_BELOW: u64 = 2048;
/// Significant bits kept of larger bounds, after the leading one.
const MANTISSA_BITS: u32 = 10;

impl Learned {
    /// Nothing is known: the rewrite must be applied.
    pub(crate) const NOTHING: Learned = Learned(0);

    /// The rewrite has no implementation at any limits.
    pub(crate) const NEVER: Learned = Learned(u16::MAX);

    /// The rewrite does not fit these limits (it may fit larger ones).
    pub(crate) const SHORT: Learned = Learned(u16::MAX - 1);

    /// The rewrite costs at least `bound` here.
    pub(crate) fn at_least(bound: u64) -> Learned {
        if bound < EXACT_BELOW {
            return Learned(bound as u16);
        }
        let shift = 63 - bound.leading_zeros() - MANTISSA_BITS;
        let mantissa = (bound >> shift) - (1 << MANTISSA_BITS);
        let code = EXACT_BELOW + (u64::from(shift) - 1) * (1 << MANTISSA_BITS) + mantissa;
        Learned(u16::try_from(code).expect("every u64 has a code below u16::MAX"))
    }

    /// Whether the rewrite never has an implementation.
    pub(crate) fn is_never(self) -> bool {
        self == Learned::NEVER
    }

    /// The lower bound (`u64::MAX` for [`Learned::NEVER`] and [`Learned::SHORT`]).
    pub(crate) fn bound(self) -> u64 {
        let code = u64::from(self.0);
        if self.is_never() || self == Learned::SHORT {
            u64::MAX
        } else if code < EXACT_BELOW {
            code
        } else {
            let shift = (code - EXACT_BELOW) / (1 << MANTISSA_BITS) + 1;
            let mantissa = (code - EXACT_BELOW) % (1 << MANTISSA_BITS) + (1 << MANTISSA_BITS);
            mantissa << shift
        }
    }
}

/// Per rewrite of a Spec, in enumeration order, what a search at `limits` learned.
#[derive(Clone, Debug)]
pub(crate) struct LearnedBounds {
    /// The limits the search ran at.
    pub(crate) limits: MemoryLimits,
    /// The generation of its memo table it was stored in.
    pub(crate) generation: u32,
    /// One entry per rewrite.
    pub(crate) rewrites: Box<[Learned]>,
}

impl LearnedBounds {
    /// Memory it takes, for the accounting in [`Generations`].
    pub(crate) fn bytes(&self) -> usize {
        size_of::<LearnedBounds>() + size_of_val(&*self.rewrites)
    }
}

/// How much learned bounds one memo table holds, per generation.
#[derive(Clone, Default, Debug)]
pub(crate) struct Generations {
    current: u32,
    current_bytes: usize,
    previous_bytes: usize,
}

impl Generations {
    /// The generation new bounds belong to.
    pub(crate) fn current(&self) -> u32 {
        self.current
    }

    /// Accounts for `stored`, just added. Returns the oldest generation to keep when the table
    /// must drop older ones to stay within `cap` bytes.
    pub(crate) fn added(&mut self, stored: &LearnedBounds, cap: usize) -> Option<u32> {
        self.current_bytes += stored.bytes();
        if self.current_bytes <= cap / 2 {
            return None;
        }
        self.previous_bytes = std::mem::take(&mut self.current_bytes);
        self.current += 1;
        Some(self.current - 1)
    }

    /// Accounts for `taken`, just removed.
    pub(crate) fn removed(&mut self, taken: &LearnedBounds) {
        if taken.generation == self.current {
            self.current_bytes -= taken.bytes();
        } else {
            self.previous_bytes -= taken.bytes();
        }
    }

    /// Bytes held.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.current_bytes + self.previous_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_bound_never_exceeds_the_bound_and_keeps_ten_significant_bits() {
        for bound in [0, 1, 2047, 2048, 2049, 4095, 4096, 123_456_789, u64::from(u32::MAX), u64::MAX - 1] {
            let stored = Learned::at_least(bound).bound();
            assert!(stored <= bound, "{bound} stored as {stored}");
            assert!(bound - stored <= bound >> MANTISSA_BITS, "{bound} stored as {stored}");
            assert!(!Learned::at_least(bound).is_never());
        }
        assert_eq!(Learned::NEVER.bound(), u64::MAX);
        assert_eq!(Learned::SHORT.bound(), u64::MAX);
        assert!(Learned::at_least(u64::MAX).0 < Learned::SHORT.0, "no bound is coded as SHORT");
        assert_eq!(Learned::NOTHING.bound(), 0);
    }

    #[test]
    fn codes_are_ordered_like_the_bounds() {
        let mut bounds: Vec<u64> = (0..40).flat_map(|e| [3u64 << e, 5 << e, 7 << e]).collect();
        bounds.sort_unstable();
        let mut last = 0;
        for bound in bounds {
            let code = Learned::at_least(bound).0;
            assert!(code >= last);
            last = code;
        }
    }

    #[test]
    fn when_the_newer_generation_fills_half_the_cap_the_older_is_dropped() {
        let bounds = |generation| LearnedBounds {
            limits: MemoryLimits::zero(),
            generation,
            rewrites: vec![Learned::NOTHING; 100].into(),
        };
        let one = bounds(0).bytes();
        let mut generations = Generations::default();
        assert_eq!(generations.added(&bounds(0), 4 * one), None);
        assert_eq!(generations.added(&bounds(0), 4 * one), None);
        assert_eq!(generations.added(&bounds(0), 4 * one), Some(0), "three exceed half the cap");
        assert_eq!(generations.current(), 1);
        generations.removed(&bounds(0));
        assert_eq!(generations.bytes(), 2 * one);
    }
}
