//! Synthesis: a memoized top-down dynamic program over canonical Specs (paper §4).
//!
//! For a Spec, every applicable rewrite from [`actions`] is applied, its child Specs are solved
//! recursively, and the rewrite with the lowest composed [`Cost`] wins. Everything below is
//! exact: it finds the same optimum as exhaustive enumeration, only faster. Only an opt-in
//! [`Slack`] trades optimality for time, with a proven bound on what it gives up, and an opt-in
//! [`SearchSpace`] narrows the rewrites considered, with its gap measured.
//!
//! **Boxes of memory limits.** Solving at limits `U` yields a decision with peak `P <= U` and a
//! *horizon* `H >= U`: per level, the largest limit at which no rewrite rejected for lack of
//! memory fits and no child's result changes. The decision is optimal at every `L` with
//! `P <= L <= H`: it fits there, at `max(L, U)` every rewrite costs what it cost at `U`, and
//! costs only grow as limits shrink. Rewrites that provably cannot match the best (by a lower
//! bound valid at all limits) do not constrain the horizon.
//!
//! **One answer per Spec.** A Spec's decision is the rewrite of lowest [`Cost`] (main cost,
//! then peak, then depth), the first in enumeration order among equals, and a box's horizon
//! stops where another rewrite could tie with an earlier position. So every box holds the
//! decision a search at any limits inside it would find, and the implementation of a Spec does
//! not depend on the search's history: a warm or cold database, one thread or several.
//!
//! **Several threads.** With [`Synthesizer::set_threads`], helper threads search the same
//! Spec beside the caller's, sharing its memo table, each trying rewrites in its own order.
//! Threads with nothing left to do can join a search the same way through an [`AssistBoard`]
//! ([`Synthesizer::set_assist_board`]).
//!
//! **Branch and bound with budgets.** Each Spec is solved under a budget: the cost above which
//! its parent no longer cares. A rewrite whose lower bound exceeds the budget (or the best
//! found so far) is skipped; children are solved with the budget left by their siblings' lower
//! bounds; a Spec that cannot meet its budget returns a proven lower bound instead, memoized for
//! its limits and below. A rewrite is first bounded with its children's static bounds, which
//! need no memo lookup and prune most rewrites; the memo is asked about those children only
//! where it could change what the search proves (the least bound of a Spec that exceeds its
//! budget).
//!
//! **Dead ends.** A Spec with an operand in global memory that its kernels cannot read has no
//! implementation where its L1 limit cannot hold one cache line to stage it in (see
//! `staging`), and a Matmul with operands in registers that no kernel can take a tile of has
//! none at all (see `registers`); such Specs are answered at once rather than searched, and a
//! rewrite with such a child is dropped before its other children are solved.
//!
//! **Unbounded probes.** A Spec's optimum at the target's maximum limits bounds its cost at all
//! limits. Probing it settles unsatisfiable Specs for every limit at once, stops the search as
//! soon as a rewrite reaches it, and gives children bounds that hold everywhere. Only small
//! Specs are probed (see `PROBE_MAX_VOLUME`).
//!
//! **Re-searches.** Any search (probe or not) that exceeds its budget keeps, per rewrite, a
//! lower bound or the fact that the rewrite is short of memory (see `learned`), so when a
//! larger budget asks again at the same limits, the rewrites that still cannot fit are skipped
//! without being applied. Where a rewrite short of memory would fit is worked out only for
//! searches that end with an answer, whose horizon it bounds.
//!
//! **Rising budgets.** A top-level search starts with a budget just above the Spec's lower
//! bound and raises it until the optimum fits, so pruning applies from the first rewrite on.
//!
//! **The database.** A synthesizer built [`Synthesizer::with_database`] asks the spatial
//! database ([`crate::db`]) before searching a Spec and hands back everything it solved with
//! [`Synthesizer::into_database`]; offline, it only reads.

mod assist;
mod bounds;
mod database;
mod enumerate;
pub mod exhaustive;
mod l1_reads;
mod lanes;
mod learned;
mod memo;
mod mode;
mod parallel;
mod profile;
mod registers;
mod shared_memo;
mod slack;
mod space;
mod staging;

pub use assist::AssistBoard;
pub use bounds::spec_lower_bound;
pub use database::ResultsView;
pub use enumerate::actions;
use learned::Learned;
use memo::Probe;
pub use memo::{Decision, Entry, Memo};
pub use mode::SearchMode;
use parallel::CandidateOrder;
use profile::SearchProfile;
pub use profile::{KindProfile, ProfileSummary, SpecKind};
use shared_memo::SharedMemo;
pub use slack::{ParseSlackError, Slack};
pub use space::{ParseSearchSpaceError, SearchSpace};

use crate::cost::{Cost, NodeCharges, node_cost_charged, residency};
use crate::db::Database;
use crate::imp::{Impl, ImplNode};
use crate::level::Level;
use crate::limits::{MemoryLimits, next_limit_above};
use crate::rewrite::{Action, RewriteError};
use crate::spec::{LogicalSpec, Spec};
use crate::target::Target;
use profile::Search;
use smallvec::SmallVec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why synthesis failed.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum SynthesisError {
    /// No implementation fits the Spec's memory limits with the available rewrites and kernels.
    #[error("no implementation of {spec} exists with this target's kernels and these memory limits")]
    Unsatisfiable {
        /// The Spec, formatted.
        spec: String,
    },
    /// The deadline set with [`Synthesizer::set_deadline`] passed before the search finished.
    #[error("synthesis of {spec} did not finish before its deadline")]
    DeadlinePassed {
        /// The Spec, formatted.
        spec: String,
    },
    /// Offline mode: the database has no answer for a Spec the implementation needs.
    #[error("the database has no implementation of {spec}, and synthesis is off (offline mode)")]
    NotInDatabase {
        /// The Spec, formatted.
        spec: String,
    },
}

/// Counters describing a synthesizer's work so far.
#[derive(Clone, Copy, Default, Debug)]
pub struct SynthesisStats {
    /// Specs searched (memo misses).
    pub specs_solved: u64,
    /// Memo lookups answered from the table.
    pub memo_hits: u64,
    /// Rewrites whose children were solved.
    pub actions_tried: u64,
    /// Rewrites skipped because their lower bound exceeded the budget or the best found.
    pub pruned: u64,
    /// Specs answered by the database.
    pub db_hits: u64,
    /// How many times threads of other synthesizers joined this one's searches
    /// ([`AssistBoard`]).
    pub assists: u64,
    /// Time spent solving.
    pub elapsed: Duration,
}

/// Finds optimal implementations of Specs for one target, remembering everything it solves.
pub struct Synthesizer {
    target: &'static Target,
    /// Shared with the helpers of a search on several threads (see [`Synthesizer::set_threads`]).
    memo: Arc<SharedMemo>,
    db: Option<Arc<Database>>,
    offline: bool,
    slack: Slack,
    space: SearchSpace,
    deadline: Option<Instant>,
    /// Stop once this many Specs have been solved (a deadline counted in work, not time).
    spec_limit: Option<u64>,
    timed_out: bool,
    stats: SynthesisStats,
    /// Threads a search may use, this one included.
    threads: usize,
    /// Which thread of a search this is: 0 for the one whose results are returned, `h` for
    /// helper `h`, which starts each Spec's rewrites elsewhere in their order.
    helper: usize,
    /// Set when a helper's work is no longer needed.
    stop: Option<Arc<AtomicBool>>,
    /// Where this synthesizer's searches accept idle threads of other synthesizers.
    assist: Option<AssistBoard>,
    /// The searches counted by kind, shared with the helpers, when enabled.
    profile: Option<Arc<SearchProfile>>,
}

/// The result of solving a Spec under a budget.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// The optimum (`None`: unsatisfiable) and the horizon of that result.
    Solved(Option<Cost>, MemoryLimits),
    /// The optimum exceeds the budget; it is at least this much.
    Exceeds(u64),
}

impl Outcome {
    /// What a known answer means under `budget`.
    fn of_entry(entry: &Entry, budget: u64) -> Outcome {
        match &entry.decision {
            Some(d) if d.cost.main > budget => Outcome::Exceeds(d.cost.main),
            decision => Outcome::Solved(decision.as_ref().map(|d| d.cost), entry.upper),
        }
    }
}

/// How far a rewrite's evaluation got.
enum Evaluation {
    /// All children solved: the rewrite's cost and horizon.
    Complete(Cost, MemoryLimits),
    /// A child has no implementation at these limits.
    Infeasible(MemoryLimits),
    /// A child exceeded its budget: a lower bound on the rewrite's cost here.
    Exceeded(u64),
}

impl Synthesizer {
    /// A synthesizer with an empty memo table.
    pub fn new(target: &'static Target) -> Self {
        Synthesizer {
            target,
            memo: Arc::default(),
            db: None,
            offline: false,
            slack: Slack::EXACT,
            space: SearchSpace::Full,
            deadline: None,
            spec_limit: None,
            timed_out: false,
            stats: SynthesisStats::default(),
            threads: 1,
            helper: 0,
            stop: None,
            assist: None,
            profile: None,
        }
    }

    /// Stops searching at `deadline`: what was solved before stays in the memo table (every
    /// entry is exact), and nothing found afterwards is recorded. Afterwards
    /// [`Synthesizer::timed_out`] is true and synthesis fails with
    /// [`SynthesisError::DeadlinePassed`].
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// Stops searching, as at a deadline ([`Synthesizer::set_deadline`]), once the Specs solved
    /// since this synthesizer was made ([`SynthesisStats::specs_solved`]) reach `limit`: a
    /// budget that gives the same outcome on every machine and under any load.
    pub fn set_spec_limit(&mut self, limit: u64) {
        self.spec_limit = Some(limit);
    }

    /// Accepts implementations up to `slack` above the optimum, for a faster search (see
    /// [`Slack`]). Call it before the first search.
    ///
    /// # Panics
    ///
    /// If this synthesizer has searched already: its memo table holds results of the other
    /// kind.
    pub fn set_slack(&mut self, slack: Slack) {
        assert!(self.memo.entries() == 0 && self.stats.specs_solved == 0, "the slack is set before searching");
        self.slack = slack;
    }

    /// The slack set with [`Synthesizer::set_slack`].
    pub fn slack(&self) -> Slack {
        self.slack
    }

    /// Considers only the rewrites of `space` (see [`SearchSpace`]). Call it before the first
    /// search.
    ///
    /// # Panics
    ///
    /// If this synthesizer has searched already: its memo table holds results of another space.
    pub fn set_search_space(&mut self, space: SearchSpace) {
        assert!(self.memo.entries() == 0 && self.stats.specs_solved == 0, "the search space is set before searching");
        self.space = space;
    }

    /// The search space set with [`Synthesizer::set_search_space`].
    pub fn search_space(&self) -> SearchSpace {
        self.space
    }

    /// Sets both the slack and the search space of `mode`. Call it before the first search.
    ///
    /// # Panics
    ///
    /// If this synthesizer has searched already.
    pub fn set_search_mode(&mut self, mode: SearchMode) {
        self.set_slack(mode.slack);
        self.set_search_space(mode.space);
    }

    /// Whether the deadline passed during a search.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The target.
    pub fn target(&self) -> &'static Target {
        self.target
    }

    /// Work counters.
    pub fn stats(&self) -> SynthesisStats {
        self.stats
    }

    /// Counts every search from now on by kind of Spec, for [`Synthesizer::profile`].
    pub fn enable_profile(&mut self) {
        self.profile.get_or_insert_with(Arc::default);
    }

    /// The searches counted since [`Synthesizer::enable_profile`] (by this synthesizer and the
    /// threads that helped it), or `None` if it was not called.
    pub fn profile(&self) -> Option<ProfileSummary> {
        self.profile.as_ref().map(|p| p.summary())
    }

    /// A copy of the memo table.
    pub fn memo(&self) -> Memo {
        self.memo.snapshot()
    }

    /// The optimal complete implementation of `spec`. Limits above the target's capacity are
    /// treated as the capacity.
    pub fn synthesize(&mut self, spec: &Spec) -> Result<Impl, SynthesisError> {
        let clamped = spec.with_limits(spec.limits().clamped_to(self.target));
        if self.offline {
            let mut imp = self.stored_implementation(&clamped)?;
            imp.spec = spec.clone();
            return Ok(imp);
        }
        match self.optimal_cost(&clamped) {
            _ if self.timed_out => Err(SynthesisError::DeadlinePassed { spec: spec.to_string() }),
            Some(_) => {
                let mut imp = self.with_deep_stack(|s| s.reconstruct(&clamped));
                imp.spec = spec.clone();
                Ok(imp)
            }
            None => Err(SynthesisError::Unsatisfiable { spec: spec.to_string() }),
        }
    }

    /// The optimal cost of `spec`, or `None` if it is unsatisfiable (or the deadline passed:
    /// see [`Synthesizer::timed_out`]). Limits above the target's capacity are treated as the
    /// capacity.
    pub fn optimal_cost(&mut self, spec: &Spec) -> Option<Cost> {
        let spec = &spec.with_limits(spec.limits().clamped_to(self.target));
        let start = Instant::now();
        let outcome = self.solve_on_threads(spec);
        self.stats.elapsed += start.elapsed();
        if self.timed_out {
            return None;
        }
        match outcome {
            Outcome::Solved(cost, _) => cost,
            Outcome::Exceeds(_) => unreachable!("the budget rises until the search succeeds"),
        }
    }

    /// Solves `spec` under a budget that starts just above its lower bound and rises by
    /// [`BUDGET_STEP_PERCENT`] (or to the bound a failed search proved) until the optimum fits;
    /// after [`FINE_BUDGET_STEPS`] failed attempts it at least doubles instead.
    ///
    /// An unlimited budget lets the first rewrite tried at every level be solved in full, however
    /// poor; a budget near the optimum prunes from the start. Every search is exact within its
    /// budget, and what a failed attempt proves (lower bounds, solved sub-Specs) is kept for the
    /// next, so the result is the optimum.
    fn solve_with_rising_budget(&mut self, spec: &Spec) -> Outcome {
        // Every other Spec the search meets has passed `child_bounds`, which rules these out.
        if registers::unusable_registers(spec.logical(), self.target) {
            return Outcome::Solved(None, unbounded());
        }
        let mut budget = raise(self.estimated_bound(spec.logical()));
        let mut failed = 0;
        loop {
            match self.solve(spec, budget) {
                Outcome::Exceeds(bound) if !self.timed_out && budget != u64::MAX => {
                    failed += 1;
                    let raised = raise(bound.max(budget));
                    budget = if failed < FINE_BUDGET_STEPS { raised } else { raised.max(budget.saturating_mul(2)) };
                }
                outcome => return outcome,
            }
        }
    }

    /// Runs `f` on a thread with a large stack: the search recurses once per nested rewrite,
    /// and chains of moves can nest thousands deep. The stack is reserved, not committed.
    fn with_deep_stack<R: Send>(&mut self, f: impl FnOnce(&mut Self) -> R + Send) -> R {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("morello-synthesis".to_owned())
                .stack_size(parallel::SEARCH_STACK_BYTES)
                .spawn_scoped(scope, || f(self))
                .expect("spawning the synthesis thread")
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Solves `spec` if its optimum is at most `budget`; otherwise proves a lower bound above it.
    ///
    /// A Spec the search space [solves outright](SearchSpace::solves_outright) is solved
    /// whatever the budget, so that it is searched once rather than refuted under budget after
    /// budget; an optimum above the budget is then reported as the bound it is.
    fn solve(&mut self, spec: &Spec, budget: u64) -> Outcome {
        if budget == u64::MAX || !self.space.solves_outright(spec) {
            return self.solve_within(spec, budget);
        }
        match self.solve_within(spec, u64::MAX) {
            Outcome::Solved(Some(cost), _) if cost.main > budget => Outcome::Exceeds(cost.main),
            outcome => outcome,
        }
    }

    /// [`Synthesizer::solve`] under `budget`, whatever the Spec.
    fn solve_within(&mut self, spec: &Spec, budget: u64) -> Outcome {
        if let Some(outcome) = self.memo.get_with(spec, |entry| Outcome::of_entry(entry, budget)) {
            self.stats.memo_hits += 1;
            return outcome;
        }
        if let Some(entry) = self.database_answer(spec) {
            self.stats.db_hits += 1;
            let outcome = Outcome::of_entry(&entry, budget);
            self.memo.insert(spec.logical(), entry);
            return outcome;
        }
        if let Some(bound) = self.memo.lower_bound(spec)
            && bound > budget
        {
            self.stats.memo_hits += 1;
            return Outcome::Exceeds(bound);
        }
        if let Some(horizon) = staging::unstageable(spec, self.target) {
            self.memo.put(spec, None, horizon);
            return Outcome::Solved(None, horizon);
        }
        let mut floor = None;
        if *spec.limits() != self.target.max_limits() && spec.logical().volume() <= PROBE_MAX_VOLUME {
            match self.probe(spec.logical(), budget) {
                Some(Probe::Exact(None)) => {
                    self.memo.put(spec, None, unbounded());
                    return Outcome::Solved(None, unbounded());
                }
                Some(Probe::Exact(Some(cost))) if cost.main > budget => return Outcome::Exceeds(cost.main),
                Some(Probe::Exact(Some(cost))) => floor = Some(cost),
                Some(Probe::AtLeast(bound)) if bound > budget => return Outcome::Exceeds(bound),
                _ => {}
            }
        }
        if self.timed_out
            || self.spec_limit.is_some_and(|limit| self.stats.specs_solved >= limit)
            || self.stats.specs_solved.is_multiple_of(256)
                && (self.deadline.is_some_and(|d| Instant::now() > d)
                    || self.stop.as_ref().is_some_and(|stop| stop.load(Ordering::Relaxed)))
        {
            self.timed_out = true;
            return Outcome::Exceeds(u64::MAX);
        }
        self.stats.specs_solved += 1;
        let result = self.search(spec, budget, floor);
        if let Some(profile) = &self.profile {
            let search = match &result {
                SearchResult::Solved(Some(decision), _) => Search::Solved {
                    bound: bounds::spec_lower_bound(spec.logical(), self.target),
                    optimum: decision.cost.main,
                },
                SearchResult::Solved(None, _) => Search::Unsatisfiable,
                SearchResult::Exceeds(_) => Search::Exceeded,
            };
            profile.record(spec.logical(), search);
        }
        if self.timed_out {
            // Children were cut short: nothing found now is known to be optimal.
            return Outcome::Exceeds(u64::MAX);
        }
        match result {
            SearchResult::Solved(decision, horizon) => {
                let cost = decision.as_ref().map(|d| d.cost);
                debug_assert!(
                    cost.is_none_or(|c| c.main >= bounds::spec_lower_bound(spec.logical(), self.target)),
                    "{spec} costs {cost:?}, below its lower bound"
                );
                if decision.is_some() && !self.slack.is_exact() {
                    // Results within a slack differ between limits where optima would agree:
                    // each holds only where it was found, so that rebuilding an implementation
                    // follows the children its cost was computed from (see `slack`).
                    self.memo.put_point(spec, decision);
                } else {
                    self.memo.put(spec, decision, horizon);
                }
                Outcome::Solved(cost, horizon)
            }
            SearchResult::Exceeds(bound) => {
                self.memo.put_lower_bound(spec, bound);
                Outcome::Exceeds(bound)
            }
        }
    }

    /// What is known of `logical`'s optimum at maximum limits, solving it under `budget` if
    /// needed; `None` if it is being solved further up.
    fn probe(&mut self, logical: &LogicalSpec, budget: u64) -> Option<Probe> {
        if let Some(known) = self.memo.start_probe(logical, budget) {
            return known;
        }
        let outcome = self.solve(&Spec::new(logical.clone(), self.target.max_limits()), budget);
        if self.timed_out {
            // Cut short: nothing was proved.
            self.memo.finish_probe(logical, None);
            return None;
        }
        let result = match outcome {
            Outcome::Solved(cost, _) => Probe::Exact(cost),
            Outcome::Exceeds(bound) => Probe::AtLeast(bound),
        };
        self.memo.finish_probe(logical, Some(result));
        Some(result)
    }

    /// A lower bound on `spec`'s cost valid at every limit, or `None` if it has no
    /// implementation at all.
    fn global_bound(&self, logical: &LogicalSpec) -> Option<u64> {
        bound_from_probe(self.memo.probe(logical), || self.estimated_bound(logical))
    }

    /// [`spec_lower_bound`], inflated by the slack.
    fn estimated_bound(&self, logical: &LogicalSpec) -> u64 {
        self.slack.inflate(bounds::spec_lower_bound(logical, self.target))
    }

    /// For a child Spec whose estimated bound is `estimate`: a lower bound on its cost valid at
    /// every limit (as [`Synthesizer::global_bound`]) and one at its limits (at least the
    /// first), from one memo lookup; `None` if it has no implementation at all.
    fn child_bounds(&self, spec: &Spec, estimate: u64) -> Option<(u64, u64)> {
        if registers::unusable_registers(spec.logical(), self.target) {
            return None;
        }
        // The shard stays locked for the lookups only, not for computing a static bound.
        let (probe, exact, known) = self.memo.with_record(spec.logical(), |record| {
            let Some(record) = record else { return (None, None, None) };
            let exact = record.entry_at(spec.limits()).map(|e| e.decision.as_ref().map_or(u64::MAX, |d| d.cost.main));
            (record.probe(), exact, record.lower_bound_at(spec.limits()))
        });
        let global = bound_from_probe(probe, || estimate)?;
        Some((global, global.max(exact.unwrap_or(0)).max(known.unwrap_or(0))))
    }

    /// The static bounds of `node`'s children and `node`'s bound from them.
    fn estimated_node_bound(&self, node: &ImplNode, charges: &NodeCharges) -> EstimatedNode {
        let children: SmallVec<[u64; 4]> =
            node.children().iter().map(|child| self.estimated_bound(child.spec.logical())).collect();
        let bound = charges.main(&children);
        EstimatedNode { children, bound }
    }

    /// `node`'s bounds with what the memo knows of its children: valid at every limit, and at
    /// `spec`'s limits together with the children's bounds there; `None` if a child has no
    /// implementation at all.
    fn known_node_bounds(
        &self,
        node: &ImplNode,
        charges: &NodeCharges,
        estimated: &EstimatedNode,
    ) -> Option<(u64, u64, SmallVec<[u64; 4]>)> {
        let mut global: SmallVec<[u64; 4]> = SmallVec::new();
        let mut local: SmallVec<[u64; 4]> = SmallVec::new();
        for (child, &estimate) in node.children().iter().zip(&estimated.children) {
            let (g, l) = self.child_bounds(&child.spec, estimate)?;
            global.push(g);
            local.push(l);
        }
        // Usually nothing is known of the children beyond their static bounds: then the node's
        // bounds are the one already computed.
        let bound_with = |children: &[u64]| match children == estimated.children.as_slice() {
            true => estimated.bound,
            false => charges.main(children),
        };
        let global_bound = bound_with(&global);
        let local_bound = if local == global { global_bound } else { bound_with(&local) };
        Some((global_bound, local_bound, local))
    }

    fn search(&mut self, spec: &Spec, budget: u64, floor: Option<Cost>) -> SearchResult {
        let mut threshold = budget;
        let mut best: Option<Decision> = None;
        // Lowest lower bound among rewrites that might be feasible but were not fully solved.
        let mut exceeded = u64::MAX;
        // (global bound, horizon if fully evaluated) per rewrite that may be feasible somewhere.
        let mut considered: Vec<(u64, Option<MemoryLimits>)> = Vec::new();
        // Rewrites short of memory here: (position in `candidates`, the level and bytes
        // needed, or `None` where a search before found it short and this one did not apply
        // it). They matter only for the horizon of an answer, so where they would fit is
        // worked out only if the search ends with one.
        let mut short: Vec<(usize, Option<(Level, u64)>)> = Vec::new();
        // A search of this Spec at these limits that exceeded its budget before left, per
        // rewrite, a lower bound or that it is short of memory here; the rewrites that still
        // cannot fit are skipped without being applied. What is learned now is kept if this
        // search exceeds its budget too. Rewrites infeasible at these limits are remembered
        // only at maximum limits: elsewhere their horizon is needed, which means applying them.
        let at_max = *spec.limits() == self.target.max_limits();
        let known = self.memo.take_learned(spec);
        let candidates = self.space.actions(spec, self.target);
        let held = residency(spec.logical(), self.target);
        let mut learned: Vec<Learned> = vec![Learned::NOTHING; candidates.len()];
        // The position in `candidates` of the best decision so far.
        let mut best_index = usize::MAX;
        // Rewrites pruned on their children's static bounds: (that bound, position).
        let mut estimated_only: Vec<(u64, usize)> = Vec::new();
        let order = CandidateOrder::new(candidates.len(), self.helper, self.threads);
        for (step, index) in order.indices().enumerate() {
            // Reaching the floor (the optimum at maximum limits, which no implementation at
            // any limits beats in cost, peak or depth) ends the search once every earlier
            // rewrite was tried: no other can be preferred.
            if floor.is_some() && floor == best.as_ref().map(|b| b.cost) && order.all_tried_before(best_index, step) {
                break;
            }
            let action = &candidates[index];
            let previously = known.as_ref().and_then(|k| k.get(index)).copied();
            if previously == Some(Learned::SHORT) {
                short.push((index, None));
                learned[index] = Learned::SHORT;
                continue;
            }
            if let Some(known) = previously
                && known.bound() > threshold
            {
                self.stats.pruned += 1;
                if !known.is_never() {
                    exceeded = exceeded.min(known.bound());
                    considered.push((0, None));
                }
                learned[index] = known;
                continue;
            }
            let node = match action.apply(spec, self.target) {
                Ok(node) => node,
                Err(RewriteError::OutOfMemory { level, needed, .. }) => {
                    short.push((index, Some((level, needed))));
                    learned[index] = if at_max { Learned::NEVER } else { Learned::SHORT };
                    continue;
                }
                Err(_) => {
                    learned[index] = Learned::NEVER;
                    continue;
                }
            };
            if node.children().iter().any(|child| child.spec.logical() == spec.logical()) {
                // A child is this Spec again at limits no higher, so it costs at least this
                // Spec's optimum: the rewrite, one level deeper, can never be the answer.
                learned[index] = Learned::NEVER;
                continue;
            }
            // The node is evaluated beside its Spec: an `Impl` would clone the Spec per rewrite.
            // Most rewrites exceed the threshold on their children's static bounds alone, which
            // need no memo lookup.
            let charges = NodeCharges::held_in(spec, held, &node, self.target);
            let estimated = self.estimated_node_bound(&node, &charges);
            if estimated.bound > threshold {
                self.stats.pruned += 1;
                learned[index] = Learned::at_least(estimated.bound);
                estimated_only.push((estimated.bound, index));
                continue;
            }
            let Some((global_bound, local_bound, mut local)) = self.known_node_bounds(&node, &charges, &estimated)
            else {
                learned[index] = Learned::NEVER;
                continue; // a child has no implementation at any limits
            };
            if local_bound > threshold {
                self.stats.pruned += 1;
                exceeded = exceeded.min(local_bound);
                considered.push((global_bound, None));
                learned[index] = Learned::at_least(local_bound);
                continue;
            }
            self.stats.actions_tried += 1;
            let evaluation = self.evaluate(spec, &node, &charges, &mut local, threshold);
            if self.timed_out {
                // Children were cut short: what they returned proves nothing.
                return SearchResult::Exceeds(u64::MAX);
            }
            learned[index] = match &evaluation {
                Evaluation::Complete(cost, _) => Learned::at_least(cost.main),
                Evaluation::Infeasible(_) if at_max => Learned::NEVER,
                Evaluation::Infeasible(_) => Learned::NOTHING,
                Evaluation::Exceeded(bound) => Learned::at_least(*bound),
            };
            match evaluation {
                Evaluation::Complete(cost, horizon) => {
                    considered.push((global_bound, Some(horizon)));
                    if cost.main > threshold {
                        exceeded = exceeded.min(cost.main);
                    } else if best.as_ref().is_none_or(|b| (cost, index) < (b.cost, best_index)) {
                        debug_assert!(
                            cost.peak.fits_within(spec.limits()),
                            "{action} peaks above the limits of {spec}"
                        );
                        threshold = cost.main;
                        best_index = index;
                        best = Some(Decision { action: action.clone(), cost });
                    }
                }
                Evaluation::Infeasible(horizon) => considered.push((global_bound, Some(horizon))),
                Evaluation::Exceeded(bound) => {
                    exceeded = exceeded.min(bound);
                    considered.push((global_bound, None));
                }
            }
        }
        if best.is_none() && !estimated_only.is_empty() {
            // What the search proves is the least of its rewrites' bounds. Where a static bound
            // is below the least of the others, the memo may know better.
            estimated_only.sort_unstable();
            for &(estimate, index) in &estimated_only {
                if estimate >= exceeded {
                    break;
                }
                let node = candidates[index].apply(spec, self.target).expect("it applied before");
                let charges = NodeCharges::held_in(spec, held, &node, self.target);
                let estimated = self.estimated_node_bound(&node, &charges);
                learned[index] = match self.known_node_bounds(&node, &charges, &estimated) {
                    Some((_, bound, _)) => {
                        exceeded = exceeded.min(bound);
                        considered.push((bound, None));
                        Learned::at_least(bound)
                    }
                    None => Learned::NEVER,
                };
            }
        }
        if best.is_none() && exceeded != u64::MAX {
            self.memo.set_learned(spec, learned.into());
            return SearchResult::Exceeds(exceeded);
        }
        // The rewrites short of memory that fit somewhere on this target, at the smallest
        // limits where they do.
        let rejected: Vec<(Impl, Level, u64)> = short
            .into_iter()
            .filter_map(|(index, shortage)| {
                let (level, needed) = shortage.unwrap_or_else(|| match candidates[index].apply(spec, self.target) {
                    Err(RewriteError::OutOfMemory { level, needed, .. }) => (level, needed),
                    _ => unreachable!("a rewrite short of memory at these limits is short again"),
                });
                let imp = self.instantiate_where_it_fits(spec, &candidates[index], level, needed)?;
                Some((imp, level, needed))
            })
            .collect();
        let Some(best) = best else {
            // Unsatisfiable here: every rewrite that could become feasible bounds the horizon.
            let mut horizon = unbounded();
            for (_, h) in &considered {
                horizon = horizon.min_per_level(&h.unwrap_or(*spec.limits()));
            }
            for (_, level, needed) in &rejected {
                lower_to(&mut horizon, *level, needed - 1);
            }
            return SearchResult::Solved(None, horizon);
        };
        // The horizon: where no rewrite could become cheaper, or as cheap and earlier in the
        // enumeration, which would be preferred. (Reaching the floor proves the first but not the
        // second.) So every box's decision is the one a search at any limits inside it finds.
        let best_main = best.cost.main;
        let mut horizon = unbounded();
        for (global_bound, h) in &considered {
            if *global_bound <= best_main {
                horizon = horizon.min_per_level(&h.unwrap_or(*spec.limits()));
            }
        }
        for (imp, level, needed) in &rejected {
            let global: Option<Vec<u64>> = imp.children().iter().map(|c| self.global_bound(c.spec.logical())).collect();
            if global.is_some_and(|g| bounds::node_lower_bound(&imp.spec, &imp.node, &g, self.target) <= best_main) {
                lower_to(&mut horizon, *level, needed - 1);
            }
        }
        // More of an addressed level than is available cannot help if even the cheapest way to
        // use it costs more than the best found.
        for level in Level::ALL {
            let available = spec.limits().get(level);
            let info = self.target.level(level);
            if info.register_bytes == 0 && info.line_cost > 0 {
                let next_peak = (2 * available).max(u64::from(self.target.line_bytes));
                if bounds::min_cost_for_peak(level, next_peak, self.target) > best_main {
                    let mut bytes = horizon.bytes();
                    bytes[level.index()] = u64::MAX;
                    horizon = MemoryLimits::from_bytes_unchecked(bytes);
                }
            }
        }
        SearchResult::Solved(Some(best), horizon)
    }

    /// Solves the children of `node` (implementing `spec`) in order, each under the budget its
    /// siblings' current lower bounds (`bounds`, updated as children are solved) leave within
    /// `threshold`.
    fn evaluate(
        &mut self,
        spec: &Spec,
        node: &ImplNode,
        charges: &NodeCharges,
        bounds: &mut [u64],
        threshold: u64,
    ) -> Evaluation {
        let mut horizon = unbounded();
        let mut costs: SmallVec<[Cost; 4]> = SmallVec::new();
        for (i, child) in node.children().iter().enumerate() {
            let budget = child_budget(charges, bounds, i, threshold);
            match self.solve(&child.spec, budget) {
                Outcome::Solved(Some(cost), child_horizon) => {
                    include_child_horizon(&mut horizon, node, &child_horizon, self.target);
                    bounds[i] = cost.main;
                    costs.push(cost);
                }
                Outcome::Solved(None, child_horizon) => {
                    include_child_horizon(&mut horizon, node, &child_horizon, self.target);
                    return Evaluation::Infeasible(horizon);
                }
                Outcome::Exceeds(bound) => {
                    bounds[i] = bound;
                    return Evaluation::Exceeded(charges.main(bounds));
                }
            }
        }
        Evaluation::Complete(node_cost_charged(spec, node, charges, &costs, self.target), horizon)
    }

    /// `action` applied to `spec` at the smallest limits where it fits, raising each level
    /// that runs short (starting with `needed` bytes at `level`), or `None` if it never fits on
    /// this target.
    fn instantiate_where_it_fits(&self, spec: &Spec, action: &Action, level: Level, needed: u64) -> Option<Impl> {
        let mut bytes = spec.limits().bytes();
        let (mut level, mut needed) = (level, needed);
        for _ in 0..Level::ALL.len() {
            let info = self.target.level(level);
            let minimal = info.peak_at_least(needed);
            if minimal > info.capacity_bytes {
                return None;
            }
            bytes[level.index()] = bytes[level.index()].max(minimal);
            let widened = spec.with_limits(MemoryLimits::from_bytes_unchecked(bytes));
            match action.apply(&widened, self.target) {
                Ok(node) => return Some(Impl { spec: widened, node }),
                Err(RewriteError::OutOfMemory { level: l, needed: n, .. }) => (level, needed) = (l, n),
                Err(_) => return None,
            }
        }
        None
    }

    /// Rebuilds the optimal implementation of a solved Spec from the memo table.
    ///
    /// A memo box may extend above the limits its decision was solved at (when nothing can
    /// beat it there); applied at such limits, the decision's children can receive limits no
    /// search has visited, so missing children are solved here. They cannot cost more (more
    /// memory never hurts) nor less (the decision is optimal there), so the result is optimal.
    fn reconstruct(&mut self, spec: &Spec) -> Impl {
        let decision = match self.memo.decision(spec) {
            Some(decision) => decision,
            None => {
                let _ = self.solve_with_rising_budget(spec);
                self.memo.decision(spec).flatten()
            }
        }
        .unwrap_or_else(|| panic!("reconstructing an unsatisfiable Spec: {spec}"));
        let node = decision.action.apply(spec, self.target).expect("a stored decision applies to its Spec");
        let mut imp = Impl { spec: spec.clone(), node };
        for child in imp.children_mut() {
            *child = self.reconstruct(&child.spec);
        }
        imp
    }
}

/// [`Synthesizer::global_bound`] given what is known of a Spec's probe and, where nothing is,
/// its estimated bound.
fn bound_from_probe(probe: Option<Probe>, estimate: impl FnOnce() -> u64) -> Option<u64> {
    match probe {
        Some(Probe::Exact(None)) => None,
        Some(Probe::Exact(Some(cost))) => Some(cost.main),
        Some(Probe::AtLeast(bound)) => Some(bound),
        _ => Some(estimate()),
    }
}

/// A node's bound from its children's static bounds (see
/// [`Synthesizer::estimated_node_bound`]).
struct EstimatedNode {
    /// The children's static bounds.
    children: SmallVec<[u64; 4]>,
    /// The node's bound from them.
    bound: u64,
}

enum SearchResult {
    Solved(Option<Decision>, MemoryLimits),
    Exceeds(u64),
}

/// The most child `i` of a node (of `charges`) may cost for the whole to stay within
/// `threshold`, with the other children at their lower bounds. Node costs are affine in each
/// child's cost.
fn child_budget(charges: &NodeCharges, bounds: &[u64], i: usize, threshold: u64) -> u64 {
    if threshold == u64::MAX {
        return u64::MAX;
    }
    let mut probe: SmallVec<[u64; 4]> = SmallVec::from_slice(bounds);
    probe[i] = 0;
    let base = charges.main(&probe);
    probe[i] = 1;
    let slope = (charges.main(&probe) - base).max(1);
    threshold.saturating_sub(base) / slope
}

/// Only Specs of at most this volume are probed at maximum limits.
///
/// A probe pays off for a Spec met at many different limits, which small Specs deep in the
/// tree are; a larger Spec is met at few, and probing it adds a second search (at limits where
/// more rewrites fit) that often fails its budget and is repeated as budgets grow: probing
/// every Spec made large Matmuls search several times longer, probing none made small ones
/// slower. Which Specs are probed never changes a result.
const PROBE_MAX_VOLUME: u64 = 4096;

/// How much the budget of a top-level search rises after each failed attempt, in percent.
const BUDGET_STEP_PERCENT: u64 = 10;

/// How many times the budget of a top-level search rises by [`BUDGET_STEP_PERCENT`] before it
/// doubles instead.
///
/// The first bound is within a factor of 1.5 of the optimum on the Matmuls measured (the 128³
/// optimum takes 4 steps), and 16 steps reach 4.6 times the first bound, so ordinary searches
/// never double. A Spec whose tight limits leave only costly implementations, or none, would
/// otherwise rise by 10% about 450 times before its budget is unlimited, searching more each
/// time (`Matmul(1x2x4x8)` in global memory with AVX2 limits `[16, 64, 64, 1024]`, which has
/// no implementation).
const FINE_BUDGET_STEPS: u32 = 16;

/// `budget` raised by [`BUDGET_STEP_PERCENT`] (at least by 1).
fn raise(budget: u64) -> u64 {
    budget.saturating_add((budget / 100).saturating_mul(BUDGET_STEP_PERCENT).max(1))
}

/// Limits with no upper bound at any level.
fn unbounded() -> MemoryLimits {
    MemoryLimits::from_bytes_unchecked([u64::MAX; crate::level::LEVEL_COUNT])
}

fn lower_to(horizon: &mut MemoryLimits, level: Level, value: u64) {
    let mut bytes = horizon.bytes();
    bytes[level.index()] = bytes[level.index()].min(value);
    *horizon = MemoryLimits::from_bytes_unchecked(bytes);
}

/// Lowers `horizon` to the largest parent limits whose child limits stay within
/// `child_horizon`. Only moves and pipeline temporaries change limits between parent and
/// child (a block's temporaries of one level are allocated together).
fn include_child_horizon(horizon: &mut MemoryLimits, parent: &ImplNode, child_horizon: &MemoryLimits, target: &Target) {
    let mut own = [0u64; crate::level::LEVEL_COUNT];
    match parent {
        ImplNode::Alloc(a) => own[a.tensor.level().index()] = a.tensor.consumption(target),
        ImplNode::Block(b) => own = crate::tensor::consumption_by_level(&b.temps, target),
        _ => {}
    }
    for level in Level::ALL {
        let h = child_horizon.get(level);
        let own = own[level.index()];
        let parent_bound = match own {
            own if own > 0 && h != u64::MAX => {
                let info = target.level(level);
                if info.register_bytes > 0 {
                    h.saturating_add(own)
                } else {
                    // snap_down_within(L - own) <= h  <=>  L - own < next_limit_above(h)
                    own.saturating_add(next_limit_above(h, info.capacity_bytes) - 1)
                }
            }
            _ => h,
        };
        lower_to(horizon, level, parent_bound);
    }
}
