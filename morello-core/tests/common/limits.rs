//! Sampling memory limits: every valid limit of a level in a range, and a small deterministic
//! random generator to pick among them.

use morello_core::level::Level;
use morello_core::target::Target;

/// Every valid limit of `level` on `target` in `low..=high` (capped at the capacity): whole
/// registers for register files, zero and powers of two otherwise.
pub fn limit_values(target: &Target, level: Level, low: u64, high: u64) -> Vec<u64> {
    let info = target.level(level);
    let high = high.min(info.capacity_bytes);
    if info.register_bytes > 0 {
        (0..=high).step_by(info.register_bytes as usize).filter(|&v| v >= low).collect()
    } else {
        std::iter::once(0).chain((0..40).map(|e| 1u64 << e)).filter(|&v| v >= low && v <= high).collect()
    }
}

/// A xorshift generator: tests that sample stay deterministic.
pub struct Rng(pub u64);

impl Rng {
    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}
