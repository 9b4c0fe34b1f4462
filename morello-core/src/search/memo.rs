//! The in-memory memo table of synthesis, with box lookups over memory limits.
//!
//! Each entry is valid for every memory-limit vector between a lower corner (the decision's
//! peak, or zero for "unsatisfiable") and an upper corner (the decision's *horizon*: the largest
//! limits at which no other rewrite becomes feasible or cheaper; see [`crate::search`]).

use super::learned::{Generations, Learned, LearnedBounds};
use crate::cost::Cost;
pub use crate::decision::{Decision, Entry};
use crate::fxhash::FxHashMap;
use crate::limits::MemoryLimits;
use crate::spec::{LogicalSpec, Spec};

/// What is known about a logical Spec's optimum at the target's maximum limits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Probe {
    /// Being solved further up the search.
    InProgress,
    /// The optimum (`None`: no implementation at any limits).
    Exact(Option<Cost>),
    /// At least this much.
    AtLeast(u64),
}

/// Everything known about one logical Spec. One record per Spec keeps one copy of the key,
/// and one lookup answers every question about it.
#[derive(Clone, Default, Debug)]
pub(crate) struct Record {
    entries: Vec<Entry>,
    /// (limits, bound): the cost is at least `bound` at any limits up to `limits` (less memory
    /// never makes a Spec cheaper).
    lower_bounds: Vec<(MemoryLimits, u64)>,
    probe: Option<Probe>,
    /// Per-rewrite bounds of searches that exceeded their budgets, one per limits.
    learned: Vec<LearnedBounds>,
}

/// Decisions keyed by logical Spec, each valid over a box of memory limits; lower bounds on
/// Specs that were only solved far enough to show they exceed some budget; and what the
/// search learned probing Specs at maximum limits.
#[derive(Default, Debug)]
pub struct Memo {
    /// Keys are stored in the table: a logical Spec is small (its operands are pointers to
    /// interned tensors).
    table: FxHashMap<LogicalSpec, Record>,
    entries: usize,
    /// How much learned bounds the table holds.
    generations: Generations,
    /// The most bytes of learned bounds it keeps (0: none).
    learned_cap: usize,
}

impl Record {
    /// The entry that answers these limits, if any.
    pub(crate) fn entry_at(&self, limits: &MemoryLimits) -> Option<&Entry> {
        self.entries.iter().find(|e| e.lower.fits_within(limits) && limits.fits_within(&e.upper))
    }

    /// The best known lower bound on the cost at these limits, if any.
    pub(crate) fn lower_bound_at(&self, limits: &MemoryLimits) -> Option<u64> {
        self.lower_bounds.iter().filter(|(upper, _)| limits.fits_within(upper)).map(|&(_, bound)| bound).max()
    }

    /// What is known of the optimum at maximum limits.
    pub(crate) fn probe(&self) -> Option<Probe> {
        self.probe
    }
}

impl Memo {
    /// Everything known about `logical`, if anything.
    pub(crate) fn record_of(&self, logical: &LogicalSpec) -> Option<&Record> {
        self.table.get(logical)
    }

    /// The entry that answers `spec` at its limits, if any.
    pub fn get(&self, spec: &Spec) -> Option<&Entry> {
        self.table.get(spec.logical())?.entry_at(spec.limits())
    }

    /// Records a result for `spec`, valid from its peak (or zero) up to `horizon`.
    pub fn put(&mut self, spec: &Spec, decision: Option<Decision>, horizon: MemoryLimits) {
        debug_assert!(spec.limits().fits_within(&horizon));
        let lower = decision.as_ref().map_or(MemoryLimits::zero(), |d| d.cost.peak);
        push_compact(&mut self.record(spec.logical()).entries, Entry { lower, upper: horizon, decision });
        self.entries += 1;
    }

    /// Records a result for `spec` valid at its limits only.
    pub fn put_point(&mut self, spec: &Spec, decision: Option<Decision>) {
        let limits = *spec.limits();
        push_compact(&mut self.record(spec.logical()).entries, Entry { lower: limits, upper: limits, decision });
        self.entries += 1;
    }

    /// Records an entry found elsewhere (in the database) for `logical`.
    pub fn insert(&mut self, logical: &LogicalSpec, entry: Entry) {
        push_compact(&mut self.record(logical).entries, entry);
        self.entries += 1;
    }

    /// The best known lower bound on the cost of `spec` at its limits, if any.
    pub fn lower_bound(&self, spec: &Spec) -> Option<u64> {
        self.table.get(spec.logical())?.lower_bound_at(spec.limits())
    }

    /// Records that `spec` costs at least `bound` at its limits and below.
    pub fn put_lower_bound(&mut self, spec: &Spec, bound: u64) {
        let facts = &mut self.record(spec.logical()).lower_bounds;
        let limits = *spec.limits();
        // Drop facts this one makes redundant.
        facts.retain(|(upper, b)| !(upper.fits_within(&limits) && *b <= bound));
        push_compact(facts, (limits, bound));
    }

    /// What is known of `logical`'s optimum at maximum limits.
    pub(crate) fn probe(&self, logical: &LogicalSpec) -> Option<Probe> {
        self.table.get(logical)?.probe()
    }

    /// Records what is known of `logical`'s optimum at maximum limits (`None`: nothing).
    pub(crate) fn set_probe(&mut self, logical: &LogicalSpec, probe: Option<Probe>) {
        self.record(logical).probe = probe;
    }

    /// Adds every record of `other`, a table of other logical Specs, to this one, without the
    /// learned bounds (a search aid that `other` accounts for, not a result).
    pub(crate) fn absorb(&mut self, other: &Memo) {
        for (logical, record) in &other.table {
            debug_assert!(!self.table.contains_key(logical), "absorbed tables hold other Specs");
            let record = Record { learned: Vec::new(), ..record.clone() };
            self.table.insert(logical.clone(), record);
        }
        self.entries += other.entries;
    }

    /// Keeps at most `bytes` of learned bounds (see [`super::learned`]); none by default.
    pub(crate) fn set_learned_cap(&mut self, bytes: usize) {
        self.learned_cap = bytes;
    }

    /// Removes and returns what the last exceeded search of `spec` at its exact limits learned
    /// about each rewrite, if it is still kept.
    pub(crate) fn take_learned(&mut self, spec: &Spec) -> Option<Box<[Learned]>> {
        let learned = &mut self.table.get_mut(spec.logical())?.learned;
        let position = learned.iter().position(|l| l.limits == *spec.limits())?;
        let taken = learned.swap_remove(position);
        self.generations.removed(&taken);
        Some(taken.rewrites)
    }

    /// Keeps what an exceeded search of `spec` learned about each rewrite, dropping the older
    /// generation of what is kept if the cap requires.
    pub(crate) fn set_learned(&mut self, spec: &Spec, rewrites: Box<[Learned]>) {
        if self.learned_cap == 0 {
            return;
        }
        // What an earlier search at these limits learned is superseded.
        let _ = self.take_learned(spec);
        let bounds = LearnedBounds { limits: *spec.limits(), generation: self.generations.current(), rewrites };
        let keep_from = self.generations.added(&bounds, self.learned_cap);
        push_compact(&mut self.record(spec.logical()).learned, bounds);
        if let Some(keep_from) = keep_from {
            for record in self.table.values_mut() {
                record.learned.retain(|l| l.generation >= keep_from);
                if record.learned.is_empty() {
                    record.learned = Vec::new();
                }
            }
        }
    }

    fn record(&mut self, logical: &LogicalSpec) -> &mut Record {
        // Look up first: cloning the key only for new Specs.
        if !self.table.contains_key(logical) {
            self.table.insert(logical.clone(), Record::default());
        }
        self.table.get_mut(logical).expect("just inserted")
    }

    /// Every logical Spec with its entries (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (&LogicalSpec, &[Entry])> {
        self.table.iter().filter(|(_, r)| !r.entries.is_empty()).map(|(k, r)| (k, r.entries.as_slice()))
    }

    /// Number of logical Specs with at least one entry.
    pub fn logical_specs(&self) -> usize {
        self.table.values().filter(|r| !r.entries.is_empty()).count()
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.entries
    }
}

/// Appends `item` to `items`, growing the buffer by half its length (at least one) rather than
/// doubling it from four, as `Vec::push` does: most Specs keep one to three entries and lower
/// bounds, and the memo holds millions of them, so the spare room doubling leaves was a quarter
/// of a large search's memory or more.
fn push_compact<T>(items: &mut Vec<T>, item: T) {
    if items.len() == items.capacity() {
        items.reserve_exact((items.len() / 2).max(1));
    }
    items.push(item);
}
