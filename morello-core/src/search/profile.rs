//! Where a search spends its work: the Specs it searched, grouped by kind (primitive, the
//! levels of the operands, and volume to the next power of two), with how many searches ended
//! over their budget and how many distinct Specs they were. Off by default; turned on by
//! [`super::Synthesizer::enable_profile`] (`morello-db synthesize --profile N`) for work on
//! the search itself: a kind searched many times per distinct Spec is re-searched under rising
//! budgets; one whose searches nearly all exceed is refuted the slow way, and a stronger lower
//! bound would refute it without a search. How far below the optimum the static lower bound
//! ([`super::spec_lower_bound`]) lies, on the searches that found one, says where a stronger
//! bound would help most.

use crate::spec::LogicalSpec;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Mutex;

/// The kind of a Spec in a `SearchProfile`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SpecKind {
    /// The primitive's name (`MatmulAccum`, `Move`, …), or `Compose`.
    pub primitive: String,
    /// The operands' levels, in order (`GL,L1,GL`).
    pub levels: String,
    /// Log2 of the volume rounded up to a power of two.
    pub log2_volume: u32,
}

impl SpecKind {
    /// The kind of `spec`.
    pub fn of(spec: &LogicalSpec) -> SpecKind {
        let primitive = match spec.primitive() {
            Some(primitive) => primitive.name().to_owned(),
            None => "Compose".to_owned(),
        };
        let levels: Vec<&str> = spec.operands().iter().map(|t| t.level().name()).collect();
        SpecKind { primitive, levels: levels.join(","), log2_volume: spec.volume().max(1).next_power_of_two().ilog2() }
    }
}

/// The searches of one [`SpecKind`].
#[derive(Clone, PartialEq, Debug)]
pub struct KindProfile {
    /// The kind.
    pub kind: SpecKind,
    /// Searches that found an answer (or that there is none).
    pub solved: u64,
    /// Searches that ended over their budget.
    pub exceeded: u64,
    /// Distinct Specs searched (limits aside).
    pub distinct: u64,
    /// Over the searches that found an implementation, the mean of the static lower bound
    /// divided by the optimum (1: the bound is exact); `None` if none found one.
    pub bound_over_optimum: Option<f64>,
}

/// How one search ended, for [`SearchProfile::record`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Search {
    /// It found the optimum, whose static lower bound is `bound`.
    Solved {
        /// [`super::spec_lower_bound`] of the Spec.
        bound: u64,
        /// The optimum's main cost.
        optimum: u64,
    },
    /// It found that there is no implementation.
    Unsatisfiable,
    /// It ended over its budget.
    Exceeded,
}

impl KindProfile {
    /// All searches of the kind.
    pub fn searches(&self) -> u64 {
        self.solved + self.exceeded
    }
}

/// The searches of a synthesizer and its helpers, by kind.
#[derive(Default)]
pub(super) struct SearchProfile {
    kinds: Mutex<BTreeMap<SpecKind, Counts>>,
}

#[derive(Default)]
struct Counts {
    solved: u64,
    exceeded: u64,
    distinct: HashSet<LogicalSpec>,
    /// The sum of bound / optimum over the searches that found an implementation, and their
    /// number.
    tightness: (f64, u64),
}

impl SearchProfile {
    /// Counts one search of `spec`, which ended as `search` says.
    pub(super) fn record(&self, spec: &LogicalSpec, search: Search) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let counts = kinds.entry(SpecKind::of(spec)).or_default();
        match search {
            Search::Solved { bound, optimum } => {
                counts.solved += 1;
                counts.tightness.0 += bound as f64 / optimum.max(1) as f64;
                counts.tightness.1 += 1;
            }
            Search::Unsatisfiable => counts.solved += 1,
            Search::Exceeded => counts.exceeded += 1,
        }
        if !counts.distinct.contains(spec) {
            counts.distinct.insert(spec.clone());
        }
    }

    /// The kinds searched, most searched first (ties in kind order).
    pub(super) fn summary(&self) -> ProfileSummary {
        let kinds = self.kinds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut rows: Vec<KindProfile> = kinds
            .iter()
            .map(|(kind, c)| KindProfile {
                kind: kind.clone(),
                solved: c.solved,
                exceeded: c.exceeded,
                distinct: c.distinct.len() as u64,
                bound_over_optimum: (c.tightness.1 > 0).then(|| c.tightness.0 / c.tightness.1 as f64),
            })
            .collect();
        rows.sort_by_key(|row| std::cmp::Reverse(row.searches()));
        ProfileSummary { rows }
    }
}

/// A `SearchProfile`'s counts, most searched kind first; displayed as a table.
#[derive(Clone, PartialEq, Debug)]
pub struct ProfileSummary {
    /// One row per kind searched.
    pub rows: Vec<KindProfile>,
}

impl ProfileSummary {
    /// All searches counted.
    pub fn searches(&self) -> u64 {
        self.rows.iter().map(KindProfile::searches).sum()
    }

    /// The table of the `n` most searched kinds and a line for the rest.
    pub fn table(&self, n: usize) -> String {
        let total = self.searches().max(1);
        let mut out = String::from(
            "| Spec kind | levels | volume | searches | share | exceeded | distinct Specs | bound / optimum |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        for row in self.rows.iter().take(n) {
            let tightness = row.bound_over_optimum.map_or("–".to_owned(), |t| format!("{t:.2}"));
            out.push_str(&format!(
                "| {} | {} | 2^{} | {} | {:.1}% | {:.0}% | {} | {tightness} |\n",
                row.kind.primitive,
                row.kind.levels,
                row.kind.log2_volume,
                row.searches(),
                100.0 * row.searches() as f64 / total as f64,
                100.0 * row.exceeded as f64 / row.searches().max(1) as f64,
                row.distinct,
            ));
        }
        let rest: u64 = self.rows.iter().skip(n).map(KindProfile::searches).sum();
        if rest > 0 {
            let kinds = self.rows.len() - n;
            out.push_str(&format!(
                "| {kinds} other kinds | | | {rest} | {:.1}% | | | |\n",
                100.0 * rest as f64 / total as f64
            ));
        }
        out
    }
}

impl fmt::Display for ProfileSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use crate::search::{SearchSpace, Synthesizer};
    use crate::spec::Spec;
    use crate::target::X86_AVX2;

    #[test]
    fn every_search_is_counted_once_under_its_kind() {
        let spec: Spec = "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)".parse().unwrap();
        let mut synth = Synthesizer::new(&X86_AVX2);
        synth.set_search_space(SearchSpace::Fast);
        assert_eq!(synth.profile(), None);
        synth.enable_profile();
        synth.optimal_cost(&spec.with_limits(X86_AVX2.max_limits())).expect("8³ has an implementation");
        let profile = synth.profile().expect("enabled");
        assert_eq!(profile.searches(), synth.stats().specs_solved);
        assert!(profile.rows.windows(2).all(|w| w[0].searches() >= w[1].searches()));
        for row in &profile.rows {
            assert!(row.distinct >= 1 && row.distinct <= row.searches(), "{row:?}");
            // Bounds are sound: never above the optimum.
            assert!(row.bound_over_optimum.is_none_or(|t| t > 0.0 && t <= 1.0), "{row:?}");
        }
        assert!(profile.rows.iter().any(|row| row.bound_over_optimum.is_some()), "nothing was solved");
        let top = &profile.rows[0];
        let table = profile.table(1);
        assert!(table.lines().nth(2).is_some_and(|l| l.contains(&top.kind.primitive)), "{table}");
        assert_eq!(table.lines().count(), 3 + usize::from(profile.rows.len() > 1), "{table}");
    }
}
