//! The spatial memoization database of paper §4.1.
//!
//! Every solved Spec becomes a box in a table: its point (see [`key`]) stretched over the
//! memory limits its decision is optimal for, from the decision's peak (or zero, for "no
//! implementation") up to the horizon the search proved. Boxes live in `rstar` R*-trees and
//! merge greedily with identical neighbours, so one rectangle answers many Specs; costs are
//! stored per unit of Spec volume so that Specs of different sizes can share a value.
//!
//! A [`Database`] is tied to one target. [`mod@file`] persists it (bincode behind a versioned
//! header, atomic writes, a lock file for sharing); [`crate::search::Synthesizer`] reads it
//! before searching and records what it solves.

pub mod compare;
pub mod file;
pub mod key;
pub mod stored;
pub mod table;

use crate::decision::{Decision, Entry};
use crate::level::Level;
use crate::limits::MemoryLimits;
use crate::spec::{LogicalSpec, Spec};
use crate::target::Target;
use key::{Location, TableKey};
use std::collections::BTreeMap;
use stored::StoredValue;
use table::{Rect, Table};

/// Memoized synthesis results for one target.
#[derive(Clone)]
pub struct Database {
    target: &'static Target,
    tables: BTreeMap<TableKey, Table>,
    /// Names of completed precompute stages.
    stages: Vec<String>,
}

/// Size figures of a database (what `morello-db stats` prints).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct DbStats {
    /// Tables.
    pub tables: usize,
    /// Rectangles over all tables.
    pub rectangles: usize,
    /// Points covered: Specs with memory limits that have an answer.
    pub specs: u64,
    /// Rectangles whose value is "no implementation".
    pub unsatisfiable_rectangles: usize,
}

impl DbStats {
    /// Average points per rectangle (the paper reports about 4,000).
    pub fn values_per_rectangle(&self) -> f64 {
        if self.rectangles == 0 { 0.0 } else { self.specs as f64 / self.rectangles as f64 }
    }
}

impl Database {
    /// An empty database for `target`.
    pub fn new(target: &'static Target) -> Database {
        Database { target, tables: BTreeMap::new(), stages: Vec::new() }
    }

    /// Whether the database holds no answers.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The target.
    pub fn target(&self) -> &'static Target {
        self.target
    }

    /// The stored answer for `spec` at its limits: the decision (`None`: no implementation)
    /// and the box of limits the answer holds for. `None` if the database has no answer, or
    /// its answer does not describe a rewrite of `spec`.
    pub fn get(&self, spec: &Spec) -> Option<Entry> {
        let location = Location::of(spec.logical());
        let table = self.tables.get(&location.key)?;
        let rect = table.get(&location.at(spec.limits(), self.target))?;
        let decision = match &rect.value.action {
            None => None,
            Some(action) => {
                let cost = rect.value.cost(spec.logical().volume())?;
                Some(Decision { action: action.decode(spec.logical())?, cost })
            }
        };
        Some(Entry {
            lower: location.limits(&rect.lo, self.target),
            upper: self.unclamped(location.limits(&rect.hi, self.target)),
            decision,
        })
    }

    /// Records that `decision` (or "no implementation") is optimal for `logical` at every
    /// limit from `lower` to `upper`. Returns the number of Specs newly covered.
    pub fn put(
        &mut self,
        logical: &LogicalSpec,
        lower: &MemoryLimits,
        upper: &MemoryLimits,
        decision: Option<&Decision>,
    ) -> u64 {
        let location = Location::of(logical);
        let lo = location.at(lower, self.target);
        let hi = location.at(upper, self.target);
        let value = StoredValue::new(decision, logical);
        self.tables.entry(location.key).or_default().put(lo, hi, &value)
    }

    /// Copies every rectangle of `other` (a database of the same target) into this one, and
    /// its completed stages; where both have an answer, this one's is kept.
    pub fn absorb(&mut self, other: &Database) {
        self.absorb_answers(other);
        for stage in &other.stages {
            self.complete_stage(stage);
        }
    }

    /// Copies every rectangle of `other` (a database of the same target) into this one, but
    /// not its completed stages; where both have an answer, this one's is kept.
    pub fn absorb_answers(&mut self, other: &Database) {
        for (key, table) in &other.tables {
            let mine = self.tables.entry(key.clone()).or_default();
            for rect in table.iter() {
                mine.put(rect.lo, rect.hi, &rect.value);
            }
        }
    }

    /// Size figures.
    pub fn stats(&self) -> DbStats {
        let mut s = DbStats { tables: self.tables.len(), ..DbStats::default() };
        for table in self.tables.values() {
            s.rectangles += table.len();
            for r in table.iter() {
                s.specs += r.volume();
                s.unsatisfiable_rectangles += usize::from(r.value.action.is_none());
            }
        }
        s
    }

    /// Every table with its rectangles, in key order.
    pub fn tables(&self) -> impl Iterator<Item = (&TableKey, &Table)> {
        self.tables.iter()
    }

    /// Whether the precompute stage `name` has completed.
    pub fn stage_done(&self, name: &str) -> bool {
        self.stages.iter().any(|s| s == name)
    }

    /// Marks the precompute stage `name` as completed.
    pub fn complete_stage(&mut self, name: &str) {
        if !self.stage_done(name) {
            self.stages.push(name.to_owned());
        }
    }

    /// Completed precompute stages.
    pub fn stages(&self) -> &[String] {
        &self.stages
    }

    /// Rebuilds a database from its parts (see [`mod@file`]).
    fn from_parts(target: &'static Target, tables: Vec<(TableKey, Vec<Rect>)>, stages: Vec<String>) -> Database {
        let tables = tables.into_iter().map(|(k, rects)| (k, Table::from_rects(rects))).collect();
        Database { target, tables, stages }
    }

    /// Limits at the target's capacity stand for "any limit": synthesis clamps limits to the
    /// capacity, so an answer there holds above it too.
    fn unclamped(&self, limits: MemoryLimits) -> MemoryLimits {
        let max = self.target.max_limits();
        MemoryLimits::from_bytes_unchecked(std::array::from_fn(|i| {
            let l = Level::ALL[i];
            if limits.get(l) >= max.get(l) { u64::MAX } else { limits.get(l) }
        }))
    }
}
