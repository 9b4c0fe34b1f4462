//! Sampling memory limits: every valid limit of a level in a range, limits inside memo boxes
//! (of a few small Specs' tables), and a small deterministic random generator to pick them.

use morello_core::level::Level;
use morello_core::limits::MemoryLimits;
use morello_core::search::{Entry, Synthesizer};
use morello_core::spec::{LogicalSpec, Spec};
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

/// Solves four small Specs (Matmuls, an accumulating one and a Move, at various limits) whose
/// memo tables hold a few hundred boxes small enough to check by exhaustive search.
pub fn solve_small_specs(synth: &mut Synthesizer) {
    for text in [
        "(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 256, 512])",
        "(Matmul(1x2x4x2, (f32, GL), (f32, L1), (f32, GL)), [32, 128, 512, 1024])",
        "(Move(2x8, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])",
        "(Move(4x8, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])",
        "(MatmulAccum(1x2x2x8, (f32, L1), (f32, L1), (f32, L1)), [32, 128, 1024, 0])",
    ] {
        let spec: Spec = text.parse().unwrap();
        synth.optimal_cost(&spec);
    }
}

/// Every box in `synth`'s memo table, with its logical Spec.
pub fn memo_boxes(synth: &Synthesizer) -> Vec<(LogicalSpec, Entry)> {
    synth.memo().iter().flat_map(|(l, es)| es.iter().map(move |e| (l.clone(), e.clone()))).collect()
}

/// Limits picked by `rng` inside `entry`'s box, each level at most `ceiling` (exhaustive
/// search, which tests compare with, is exponential in the limits); `None` if some level has
/// no valid limit there.
pub fn limits_inside(entry: &Entry, target: &Target, ceiling: [u64; 4], rng: &mut Rng) -> Option<MemoryLimits> {
    let choices: Vec<Vec<u64>> = Level::ALL
        .iter()
        .map(|&l| limit_values(target, l, entry.lower.get(l), entry.upper.get(l).min(ceiling[l.index()])))
        .collect();
    if choices.iter().any(Vec::is_empty) {
        return None;
    }
    let limits = std::array::from_fn(|i| choices[i][rng.below(choices[i].len() as u64) as usize]);
    Some(MemoryLimits::new(limits, target).expect("valid limits of each level"))
}

/// Up to 400 of `synth`'s memo boxes (it must have over 100), spread over its table, each as
/// the Spec at limits `seed` picks inside the box (see [`limits_inside`]), with the box. At
/// least 50 boxes must have valid limits inside.
pub fn sampled_boxes(synth: &Synthesizer, target: &Target, seed: u64) -> Vec<(Spec, Entry)> {
    let entries = memo_boxes(synth);
    assert!(entries.len() > 100, "only {} boxes to check", entries.len());
    let mut rng = Rng(seed);
    let sampled: Vec<(Spec, Entry)> = (0..entries.len().min(400))
        .filter_map(|index| {
            let (logical, entry) = &entries[(index * 7919) % entries.len()];
            let limits = limits_inside(entry, target, [64, 512, 2048, 2048], &mut rng)?;
            Some((Spec::new(logical.clone(), limits), entry.clone()))
        })
        .collect();
    assert!(sampled.len() > 50, "only {} boxes had valid limits inside", sampled.len());
    sampled
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
