//! The caches below L1 that programs never address, which the cost model knows only through
//! what data fitting in them costs (see [`crate::cost::residency`]), and the weights of global
//! memory's lines that follow from where a Spec's data is held.

use super::Target;
use crate::level::Level;

/// A cache below L1: L2 or L3.
///
/// Programs never address it: a tile of global memory read again while it fits in the cache
/// comes from there, whatever the program says. On a Zen 4 core one core reads memory at a
/// line in about 10 cycles, and L2 fills L1 at 32 bytes a cycle (AMD's figure), a line in 2:
/// so a line read from memory weighs five times a line held in L2 (100 against 20). L3's
/// weights come from the times a line takes from memory, L3 and L2 on a Zen 5 core
/// (`bench/experiments/cache_bandwidth.c`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Cache {
    /// How much of a Spec's data (its operands' whole cache lines) the cache holds while the
    /// Spec runs: a Spec with more is not held.
    pub capacity_bytes: u64,
    /// What reading one cache line of global memory costs while it is held in this cache.
    pub line_cost: u64,
    /// What a hardware cache fill (a move into L1 that emits no code) pays for each line of
    /// global memory held in this cache: the time the cache takes to deliver it, in the
    /// kernels' units. The fill is not a copy through registers; the core keeps computing while
    /// the line arrives. L2 delivers 32 bytes a cycle (AMD's figure for Zen 2–4), a line in 2
    /// cycles; a vector FMA costs 2 (`BroadcastVecMultAdd`'s 2 per output register), and a Zen 4
    /// core issues one 512-bit FMA a cycle (4 per line on AVX-512) or two 256-bit ones (8 per
    /// line on AVX2), and two scalar ones, each costing 1 (4 per line, portable C). L3
    /// delivers a line in about 2.3 times L2's time (above): 9.
    pub fill_line_cost: u64,
}

/// Where the lines of a Spec's operands in global memory come from while it runs: the
/// innermost cache that holds all its data, or memory. Ordered from the innermost.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Residency {
    /// Held in L2.
    L2,
    /// Held in L3, not in L2.
    L3,
    /// Read from memory: no cache holds it (or nothing of it is in global memory).
    Memory,
}

impl Residency {
    /// The caches, innermost first.
    pub const CACHES: [Residency; 2] = [Residency::L2, Residency::L3];
}

impl Target {
    /// The cache a Spec of `residency` is held in (`None` in memory).
    pub fn cache(&self, residency: Residency) -> Option<&Cache> {
        match residency {
            Residency::L2 => self.l2.as_ref(),
            Residency::L3 => self.l3.as_ref(),
            Residency::Memory => None,
        }
    }

    /// The innermost residency this target has a cache for, where global memory's lines weigh
    /// least (what the search's bounds assume of a Spec they cannot place).
    pub fn innermost_residency(&self) -> Residency {
        Residency::CACHES.into_iter().find(|&r| self.cache(r).is_some()).unwrap_or(Residency::Memory)
    }

    /// The weight of a cache line at `level` for a Spec of `residency`: global memory held in
    /// a cache costs that cache's weight, everything else its level's.
    pub fn line_cost(&self, level: Level, residency: Residency) -> u64 {
        match self.cache(residency) {
            Some(cache) if level == Level::GL => cache.line_cost,
            _ => self.level(level).line_cost,
        }
    }

    /// The weight of a line of global memory that a hardware cache fill reads, in a Spec of
    /// `residency`: the cache's [`Cache::fill_line_cost`] (at most its copy weight) where it is
    /// held, memory's weight where it is not.
    pub fn fill_line_cost(&self, residency: Residency) -> u64 {
        match self.cache(residency) {
            Some(cache) => cache.fill_line_cost.min(cache.line_cost),
            None => self.level(Level::GL).line_cost,
        }
    }

    /// The least weight a line at `level` pays in a Spec of `residency`, whatever moves it: in
    /// global memory, a cache fill's (never more than a copy's).
    pub fn least_line_cost(&self, level: Level, residency: Residency) -> u64 {
        match level {
            Level::GL => self.fill_line_cost(residency),
            _ => self.line_cost(level, residency),
        }
    }

    /// What a cache line that a loop makes the prefetchers miss costs on top of its weight, in a
    /// Spec of `residency`: [`super::StreamCost::extra_percent`] of a line of global memory there.
    pub fn unprefetched_line_cost(&self, residency: Residency) -> u64 {
        self.line_cost(Level::GL, residency) * self.streams.extra_percent / 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{PORTABLE, X86_AVX2, X86_AVX512};

    #[test]
    fn global_memory_weighs_less_in_each_cache_further_in() {
        for target in [&X86_AVX2, &X86_AVX512, &PORTABLE] {
            let memory = target.level(Level::GL).line_cost;
            assert_eq!(target.line_cost(Level::GL, Residency::Memory), memory);
            assert_eq!(target.fill_line_cost(Residency::Memory), memory, "a fill from memory pays it all");
            let mut outer = (memory, memory, u64::MAX);
            for residency in [Residency::L3, Residency::L2] {
                let cache = target.cache(residency).unwrap();
                let weights = (target.line_cost(Level::GL, residency), target.fill_line_cost(residency));
                assert!(weights.0 < outer.0 && weights.1 < outer.1, "{target:?} {residency:?}");
                assert!(cache.capacity_bytes < outer.2);
                assert!(target.unprefetched_line_cost(residency) < target.unprefetched_line_cost(Residency::Memory));
                assert_eq!(target.line_cost(Level::L1, residency), target.level(Level::L1).line_cost);
                assert_eq!(target.least_line_cost(Level::L1, residency), target.level(Level::L1).line_cost);
                outer = (weights.0, weights.1, cache.capacity_bytes);
            }
            assert!(target.l2.unwrap().capacity_bytes > target.level(Level::L1).capacity_bytes);
            assert_eq!(target.innermost_residency(), Residency::L2);
        }
        let without_caches = Target { l2: None, l3: None, ..X86_AVX512 };
        assert_eq!(without_caches.innermost_residency(), Residency::Memory);
        assert_eq!(without_caches.line_cost(Level::GL, Residency::L2), 100);
        let only_l3 = Target { l2: None, ..X86_AVX512 };
        assert_eq!(only_l3.innermost_residency(), Residency::L3);
    }

    #[test]
    fn a_cache_fill_pays_the_caches_delivery_time() {
        let t = &X86_AVX512;
        assert_eq!(t.fill_line_cost(Residency::L2), 4);
        assert_eq!(t.line_cost(Level::GL, Residency::L2), 20, "a copy pays L2's full weight");
        assert_eq!(t.fill_line_cost(Residency::L3), 9);
        assert_eq!(t.line_cost(Level::GL, Residency::L3), 35);
        assert_eq!(t.least_line_cost(Level::GL, Residency::L2), 4);
    }
}
