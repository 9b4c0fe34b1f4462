//! The fuzzer's random numbers: splitmix64, so a seed names a run on every machine.

/// A deterministic pseudo-random generator (splitmix64).
#[derive(Clone, Debug)]
pub struct FuzzRng {
    state: u64,
}

impl FuzzRng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        FuzzRng { state: seed ^ 0x6a09_e667_f3bc_c909 }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        crate::reference::splitmix64(&mut self.state)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `0..n` as `usize`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One element of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A uniform float in `[-1, 1)`.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64) / f64::from(1u32 << 31) / f64::from(1u32 << 22) * 2.0 - 1.0
    }

    /// An independent generator for case `index` of a run seeded `seed`: each case can be
    /// regenerated alone, whatever the cases before it drew.
    pub fn for_case(seed: u64, index: u64) -> Self {
        let mut mix = FuzzRng::new(seed);
        mix.state ^= index.wrapping_mul(0xd1b5_4a32_d192_ed03);
        mix.next_u64();
        mix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_reaches_both_ends() {
        let mut rng = FuzzRng::new(7);
        let draws: Vec<u64> = (0..2000).map(|_| rng.below(5)).collect();
        assert!(draws.iter().all(|&d| d < 5));
        assert!(draws.contains(&0) && draws.contains(&4));
    }

    #[test]
    fn unit_is_in_the_half_open_interval() {
        let mut rng = FuzzRng::new(1);
        let draws: Vec<f64> = (0..5000).map(|_| rng.unit()).collect();
        assert!(draws.iter().all(|&x| (-1.0..1.0).contains(&x)));
        assert!(draws.iter().any(|&x| x < -0.9) && draws.iter().any(|&x| x > 0.9));
    }

    #[test]
    fn cases_of_one_seed_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|i| FuzzRng::for_case(3, i).next_u64()).collect();
        let b: Vec<u64> = (0..4).map(|i| FuzzRng::for_case(3, i).next_u64()).collect();
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] != w[1]));
    }
}
