//! Synthesis with a database: reading answers before searching, recording results after,
//! and offline mode, which only reads.

use super::shared_memo::SharedMemo;
use super::{Entry, SynthesisError, Synthesizer};
use crate::db::Database;
use crate::imp::Impl;
use crate::limits::MemoryLimits;
use crate::spec::{LogicalSpec, Spec};
use crate::target::Target;
use std::sync::Arc;

impl Synthesizer {
    /// A synthesizer that consults `db` before searching. [`Synthesizer::into_database`]
    /// returns it with everything solved since added.
    pub fn with_database(db: Database) -> Self {
        let mut s = Synthesizer::new(db.target());
        s.db = Some(Arc::new(db));
        s
    }

    /// In offline mode the synthesizer never searches: [`Synthesizer::synthesize`] rebuilds
    /// implementations from the database alone and fails with
    /// [`SynthesisError::NotInDatabase`] where it has no answer.
    pub fn set_offline(&mut self, offline: bool) {
        self.offline = offline;
    }

    /// The database with every result of this synthesizer added (a new one if it had none).
    pub fn into_database(mut self) -> Database {
        // The helpers of parallel searches, which shared it, have finished.
        let mut db = self.db.take().map_or_else(|| Database::new(self.target), Arc::unwrap_or_clone);
        self.record_into(&mut db);
        db
    }

    /// Adds every result of this synthesizer (its memo table) to `db`, a database of the
    /// same target.
    pub fn record_into(&self, db: &mut Database) {
        let max = self.target.max_limits();
        self.memo.for_each(|logical, entries| record_entries(db, &max, logical, entries));
    }

    /// A handle on this synthesizer's results that other threads can read while it searches.
    pub fn results_view(&self) -> ResultsView {
        ResultsView { memo: Arc::clone(&self.memo), target: self.target }
    }
}

/// Puts the memo `entries` of `logical` into `db`, their horizons capped at the target's
/// maximum limits `max`.
fn record_entries(db: &mut Database, max: &MemoryLimits, logical: &LogicalSpec, entries: &[Entry]) {
    for e in entries {
        db.put(logical, &e.lower, &e.upper.min_per_level(max), e.decision.as_ref());
    }
}

/// What a [`Synthesizer`] has solved so far, readable from other threads while it searches
/// ([`Synthesizer::results_view`]): to save a checkpoint of a long search. Every result in the
/// memo table is final (a search records a Spec's answer only once it is proved), so a
/// snapshot taken mid-search holds answers as good as those of a finished one, only fewer.
#[derive(Clone)]
pub struct ResultsView {
    memo: Arc<SharedMemo>,
    target: &'static Target,
}

impl ResultsView {
    /// Adds every result found so far to `db`, a database of the same target. The memo table
    /// is copied a shard at a time, so the search waits only for the copying.
    pub fn record_into(&self, db: &mut Database) {
        let max = self.target.max_limits();
        for (logical, entries) in self.memo.snapshot().iter() {
            record_entries(db, &max, logical, entries);
        }
    }

    /// How many results the memo table holds (a measure of progress).
    pub fn entries(&self) -> usize {
        self.memo.entries()
    }
}

impl Synthesizer {
    /// The implementation of `spec` recorded in the memo table and database, without search.
    pub(super) fn stored_implementation(&mut self, spec: &Spec) -> Result<Impl, SynthesisError> {
        let entry = match self.memo.get_with(spec, Entry::clone) {
            Some(e) => e,
            None => {
                let e = self
                    .database_answer(spec)
                    .ok_or_else(|| SynthesisError::NotInDatabase { spec: spec.to_string() })?;
                self.stats.db_hits += 1;
                self.memo.insert(spec.logical(), e.clone());
                e
            }
        };
        let decision = entry.decision.ok_or_else(|| SynthesisError::Unsatisfiable { spec: spec.to_string() })?;
        let node = decision.action.apply(spec, self.target).expect("database answers are checked to apply");
        let mut imp = Impl { spec: spec.clone(), node };
        for child in imp.children_mut() {
            *child = self.stored_implementation(&child.spec)?;
        }
        Ok(imp)
    }

    /// The database's answer for `spec`, if it has one whose decision applies.
    pub(super) fn database_answer(&self, spec: &Spec) -> Option<Entry> {
        let db = self.db.as_ref().filter(|db| !db.is_empty())?;
        let entry = db.get(spec)?;
        match &entry.decision {
            Some(d) if d.action.apply(spec, self.target).is_err() => None,
            _ => Some(entry),
        }
    }
}
