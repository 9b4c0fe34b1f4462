//! The in-memory memo table of synthesis, with box lookups over memory limits.
//!
//! Each entry is valid for every memory-limit vector between a lower corner (the decision's
//! peak, or zero for "unsatisfiable") and an upper corner (the decision's *horizon*: the largest
//! limits at which no other rewrite becomes feasible or cheaper; see [`crate::search`]).

use crate::cost::Cost;
use crate::fxhash::FxHashMap;
use crate::limits::MemoryLimits;
use crate::rewrite::Action;
use crate::spec::{LogicalSpec, Spec};

/// The best rewrite for a Spec and the cost of the implementation it leads to.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The rewrite to apply.
    pub action: Action,
    /// The cost of the resulting implementation.
    pub cost: Cost,
}

/// A solved Spec: its decision (or `None` if unsatisfiable) and the box of limits it holds for.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Lowest limits the result holds at.
    pub lower: MemoryLimits,
    /// Highest limits the result holds at.
    pub upper: MemoryLimits,
    /// The decision, or `None` when no implementation exists.
    pub decision: Option<Decision>,
}

/// Decisions keyed by logical Spec, each valid over a box of memory limits, and lower bounds
/// on Specs that were only solved far enough to show they exceed some budget.
#[derive(Default, Debug)]
pub struct Memo {
    table: FxHashMap<LogicalSpec, Vec<Entry>>,
    entries: usize,
    /// Per logical Spec: (limits, bound) meaning the cost is at least `bound` at any limits
    /// up to `limits` (less memory never makes a Spec cheaper).
    lower_bounds: FxHashMap<LogicalSpec, Vec<(MemoryLimits, u64)>>,
}

impl Memo {
    /// The entry that answers `spec` at its limits, if any.
    pub fn get(&self, spec: &Spec) -> Option<&Entry> {
        let limits = spec.limits();
        self.table.get(spec.logical())?.iter().find(|e| e.lower.fits_within(limits) && limits.fits_within(&e.upper))
    }

    /// Records a result for `spec`, valid from its peak (or zero) up to `horizon`.
    pub fn put(&mut self, spec: &Spec, decision: Option<Decision>, horizon: MemoryLimits) {
        debug_assert!(spec.limits().fits_within(&horizon));
        let lower = decision.as_ref().map_or(MemoryLimits::zero(), |d| d.cost.peak);
        self.table.entry(spec.logical().clone()).or_default().push(Entry { lower, upper: horizon, decision });
        self.entries += 1;
    }

    /// Records an entry found elsewhere (in the database) for `logical`.
    pub fn insert(&mut self, logical: &LogicalSpec, entry: Entry) {
        self.table.entry(logical.clone()).or_default().push(entry);
        self.entries += 1;
    }

    /// The best known lower bound on the cost of `spec` at its limits, if any.
    pub fn lower_bound(&self, spec: &Spec) -> Option<u64> {
        let limits = spec.limits();
        self.lower_bounds
            .get(spec.logical())?
            .iter()
            .filter(|(upper, _)| limits.fits_within(upper))
            .map(|&(_, bound)| bound)
            .max()
    }

    /// Records that `spec` costs at least `bound` at its limits and below.
    pub fn put_lower_bound(&mut self, spec: &Spec, bound: u64) {
        let facts = self.lower_bounds.entry(spec.logical().clone()).or_default();
        let limits = *spec.limits();
        // Drop facts this one makes redundant.
        facts.retain(|(upper, b)| !(upper.fits_within(&limits) && *b <= bound));
        facts.push((limits, bound));
    }

    /// Every logical Spec with its entries (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (&LogicalSpec, &[Entry])> {
        self.table.iter().map(|(k, v)| (k, v.as_slice()))
    }

    /// Number of logical Specs with at least one entry.
    pub fn logical_specs(&self) -> usize {
        self.table.len()
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.entries
    }
}
