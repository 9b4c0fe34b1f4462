//! Integer arithmetic shared by concrete and symbolic index computations.
//!
//! Buffer indexing expressions are defined once (in [`crate::layout`]) over this trait, so the
//! same definition computes concrete offsets (reference evaluator, tests) and symbolic C
//! expressions (code generation).

/// Non-negative integer arithmetic with constant multipliers and divisors.
pub trait IndexArith: Clone {
    /// A constant.
    fn constant(value: u64) -> Self;
    /// `self + other`.
    fn add(self, other: Self) -> Self;
    /// `self * factor`.
    fn mul_const(self, factor: u64) -> Self;
    /// `floor(self / divisor)`.
    fn div_const(self, divisor: u64) -> Self;
    /// `self mod divisor`.
    fn rem_const(self, divisor: u64) -> Self;
}

impl IndexArith for u64 {
    fn constant(value: u64) -> Self {
        value
    }
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn mul_const(self, factor: u64) -> Self {
        self * factor
    }
    fn div_const(self, divisor: u64) -> Self {
        self / divisor
    }
    fn rem_const(self, divisor: u64) -> Self {
        self % divisor
    }
}
