//! The memo table shared by the threads that search one Spec together.
//!
//! A [`Memo`] split into shards by the logical Spec's hash, each behind its own lock, so that
//! threads rarely wait for each other: every operation locks one shard for the time of one
//! table lookup. Everything in the table is exact (or, for lower bounds and probes, a proven
//! fact), whichever thread wrote it, so a thread may use what another found.

use super::learned::{LEARNED_BYTES, Learned};
use super::memo::{Entry, Memo, Probe, Record};
use super::{Decision, LogicalSpec, MemoryLimits, Spec};
use std::sync::{Mutex, MutexGuard};

/// Number of shards: enough that two or a few threads seldom meet on one lock.
const SHARDS: usize = 64;

/// A [`Memo`] that several threads read and write at once.
pub(crate) struct SharedMemo {
    shards: Box<[Mutex<Memo>]>,
}

impl Default for SharedMemo {
    fn default() -> Self {
        let shard = || {
            let mut memo = Memo::default();
            memo.set_learned_cap(LEARNED_BYTES / SHARDS);
            Mutex::new(memo)
        };
        SharedMemo { shards: (0..SHARDS).map(|_| shard()).collect() }
    }
}

impl SharedMemo {
    /// The shard that holds `logical`, locked.
    fn shard(&self, logical: &LogicalSpec) -> MutexGuard<'_, Memo> {
        // The high bits: the table inside the shard indexes by the low ones.
        let index = (logical.fingerprint() >> 40) as usize % SHARDS;
        locked(&self.shards[index])
    }

    /// `f` of the entry that answers `spec` at its limits, if any.
    pub(crate) fn get_with<R>(&self, spec: &Spec, f: impl FnOnce(&Entry) -> R) -> Option<R> {
        self.shard(spec.logical()).get(spec).map(f)
    }

    /// The decision that answers `spec` at its limits: `None` if nothing does, `Some(None)` if
    /// `spec` is unsatisfiable there.
    pub(crate) fn decision(&self, spec: &Spec) -> Option<Option<Decision>> {
        self.get_with(spec, |e| e.decision.clone())
    }

    /// `f` of everything known about `logical` (`None` if nothing is).
    pub(crate) fn with_record<R>(&self, logical: &LogicalSpec, f: impl FnOnce(Option<&Record>) -> R) -> R {
        f(self.shard(logical).record_of(logical))
    }

    /// See [`Memo::put`].
    pub(crate) fn put(&self, spec: &Spec, decision: Option<Decision>, horizon: MemoryLimits) {
        self.shard(spec.logical()).put(spec, decision, horizon);
    }

    /// See [`Memo::put_point`].
    pub(crate) fn put_point(&self, spec: &Spec, decision: Option<Decision>) {
        self.shard(spec.logical()).put_point(spec, decision);
    }

    /// See [`Memo::insert`].
    pub(crate) fn insert(&self, logical: &LogicalSpec, entry: Entry) {
        self.shard(logical).insert(logical, entry);
    }

    /// See [`Memo::lower_bound`].
    pub(crate) fn lower_bound(&self, spec: &Spec) -> Option<u64> {
        self.shard(spec.logical()).lower_bound(spec)
    }

    /// See [`Memo::put_lower_bound`].
    pub(crate) fn put_lower_bound(&self, spec: &Spec, bound: u64) {
        self.shard(spec.logical()).put_lower_bound(spec, bound);
    }

    /// See [`Memo::probe`].
    pub(crate) fn probe(&self, logical: &LogicalSpec) -> Option<Probe> {
        self.shard(logical).probe(logical)
    }

    /// Marks `logical`'s probe as being solved, unless it is known or being solved already;
    /// returns what was known instead, or `None` if the mark was set.
    pub(crate) fn start_probe(&self, logical: &LogicalSpec, budget: u64) -> Option<Option<Probe>> {
        let mut shard = self.shard(logical);
        match shard.probe(logical) {
            Some(Probe::InProgress) => Some(None),
            Some(known @ Probe::Exact(_)) => Some(Some(known)),
            Some(Probe::AtLeast(bound)) if bound > budget => Some(Some(Probe::AtLeast(bound))),
            _ => {
                shard.set_probe(logical, Some(Probe::InProgress));
                None
            }
        }
    }

    /// Records the result of a probe; `None` forgets a probe given up before it finished.
    pub(crate) fn finish_probe(&self, logical: &LogicalSpec, result: Option<Probe>) {
        self.shard(logical).set_probe(logical, result);
    }

    /// See [`Memo::take_learned`].
    pub(crate) fn take_learned(&self, spec: &Spec) -> Option<Box<[Learned]>> {
        self.shard(spec.logical()).take_learned(spec)
    }

    /// See [`Memo::set_learned`].
    pub(crate) fn set_learned(&self, spec: &Spec, rewrites: Box<[Learned]>) {
        self.shard(spec.logical()).set_learned(spec, rewrites);
    }

    /// Number of entries.
    pub(crate) fn entries(&self) -> usize {
        self.shards.iter().map(|s| locked(s).entries()).sum()
    }

    /// Calls `f` with every logical Spec that has entries, and its entries (in no particular
    /// order).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&LogicalSpec, &[Entry])) {
        for shard in self.shards.iter() {
            for (logical, entries) in locked(shard).iter() {
                f(logical, entries);
            }
        }
    }

    /// A copy of the whole table, as one [`Memo`].
    pub(crate) fn snapshot(&self) -> Memo {
        let mut all = Memo::default();
        for shard in self.shards.iter() {
            all.absorb(&locked(shard));
        }
        all
    }
}

/// `shard`, locked. A thread that panicked while holding a shard left it consistent (every
/// operation is one insertion or update), so poisoning is ignored.
fn locked(shard: &Mutex<Memo>) -> MutexGuard<'_, Memo> {
    shard.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
