//! Searching one Spec on several threads.
//!
//! The threads share one memo table (`SharedMemo`) and each searches the whole Spec.
//! Thread 0 tries each Spec's rewrites in enumeration order, as a search on one thread does;
//! helper `h` of `n` threads starts each Spec's list at position `len·h/2n` and wraps around,
//! so the threads set off into different parts of the search space, and each finds much of
//! what it needs already solved by the other. (Measured on the AVX-512 f32 Matmul 256³ with two
//! threads: starting at `len/4` took 40.1 s, at `len/2` 48.2 s, at position 1 42.5 s; one
//! thread, 62.7 s. At 128³ the three were within noise of each other, 3.0–3.3 s.) When thread
//! 0 has its answer, the helpers stop, and whatever a helper had not finished is dropped
//! unrecorded.
//!
//! The result does not depend on the threads: every entry in the table is exact whoever wrote
//! it, and holds the decision any search inside its box would make, the first rewrite of lowest
//! cost in enumeration order, whatever order the rewrites were tried in (see "One answer per
//! Spec" in [`crate::search`]).

use super::{AssistBoard, Outcome, SynthesisStats, Synthesizer};
use crate::spec::Spec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The search recurses once per nested rewrite, and chains of moves can nest thousands deep;
/// each searching thread gets this much stack (reserved, not committed).
pub(super) const SEARCH_STACK_BYTES: usize = 1 << 30;

/// The order in which one thread tries a Spec's rewrites.
#[derive(Clone, Copy, Debug)]
pub(super) struct CandidateOrder {
    len: usize,
    start: usize,
}

impl CandidateOrder {
    /// The order of thread `helper` (0: enumeration order) of `threads`, for `len` rewrites.
    pub(super) fn new(len: usize, helper: usize, threads: usize) -> Self {
        let start = if helper == 0 || len == 0 { 0 } else { len * helper / (2 * threads.max(1)) % len };
        CandidateOrder { len, start }
    }

    /// Positions in the enumeration, in the order they are tried.
    pub(super) fn indices(self) -> impl Iterator<Item = usize> {
        (0..self.len).map(move |step| (self.start + step) % self.len)
    }

    /// Whether every position before `index` is among the first `steps` tried.
    pub(super) fn all_tried_before(self, index: usize, steps: usize) -> bool {
        if index == 0 {
            true
        } else if self.start == 0 {
            steps >= index
        } else if index <= self.start {
            steps >= self.len - self.start + index
        } else {
            steps >= self.len
        }
    }
}

impl Synthesizer {
    /// Uses up to `threads` threads (at least 1) for each search (see [`crate::search`]). The
    /// results are the same with any number. A search with a [`super::Slack`] runs on one
    /// thread: which of several acceptable results it returns depends on the order it finds
    /// them in.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The number of threads a search may use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Lets threads that would otherwise idle join this synthesizer's exact searches from now
    /// on: those that [`AssistBoard::help_while`] on `board`. The results are the same.
    pub fn set_assist_board(&mut self, board: AssistBoard) {
        self.assist = Some(board);
    }

    /// Solves `spec` with a rising budget on this synthesizer's threads, and on those that join
    /// it from its [`AssistBoard`].
    pub(super) fn solve_on_threads(&mut self, spec: &Spec) -> Outcome {
        let answered = self.memo.get_with(spec, |_| ()).is_some();
        let alone = self.threads == 1 && self.assist.is_none();
        if alone || answered || self.offline || !self.slack.is_exact() {
            return self.with_deep_stack(|s| s.solve_with_rising_budget(spec));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let posted = self.assist.as_ref().map(|board| board.open(self, spec, &stop));
        let mut helpers: Vec<Synthesizer> = (1..self.threads).map(|h| self.helper(h, &stop)).collect();
        let outcome = std::thread::scope(|scope| {
            for helper in &mut helpers {
                std::thread::Builder::new()
                    .name("morello-synthesis-helper".to_owned())
                    .stack_size(SEARCH_STACK_BYTES)
                    .spawn_scoped(scope, || {
                        helper.solve_with_rising_budget(spec);
                    })
                    .expect("spawning a synthesis helper");
            }
            self.with_deep_stack(|s| {
                // The helpers stop when this thread is done, even by a panic.
                let _stop = StopWhenDropped(&stop);
                s.solve_with_rising_budget(spec)
            })
        });
        for helper in &helpers {
            self.stats.add_work(&helper.stats);
        }
        if let Some(posted) = posted {
            let (work, joined) = posted.close();
            self.stats.add_work(&work);
            self.stats.assists += joined as u64;
        }
        outcome
    }

    /// Helper `index` of a search on this synthesizer's threads: it shares the memo table and
    /// database and stops when `stop` is set.
    pub(super) fn helper(&self, index: usize, stop: &Arc<AtomicBool>) -> Synthesizer {
        let mut helper = Synthesizer::new(self.target);
        helper.memo = Arc::clone(&self.memo);
        helper.db = self.db.clone();
        helper.slack = self.slack;
        helper.space = self.space;
        helper.deadline = self.deadline;
        helper.threads = self.threads;
        helper.helper = index;
        helper.stop = Some(Arc::clone(stop));
        helper.profile = self.profile.clone();
        helper
    }
}

/// Sets its flag when dropped (also when a panic unwinds past it).
pub(super) struct StopWhenDropped<'a>(pub(super) &'a AtomicBool);

impl Drop for StopWhenDropped<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl SynthesisStats {
    /// Adds another thread's work counters (not its time) to these.
    pub(super) fn add_work(&mut self, other: &SynthesisStats) {
        self.specs_solved += other.specs_solved;
        self.memo_hits += other.memo_hits;
        self.actions_tried += other.actions_tried;
        self.pruned += other.pruned;
        self.db_hits += other.db_hits;
    }
}

#[cfg(test)]
mod tests {
    use super::CandidateOrder;

    /// Every position is tried once, and `all_tried_before` agrees with the positions tried.
    #[test]
    fn candidate_orders_visit_everything_and_know_what_they_visited() {
        for len in 0..12 {
            for threads in 1..4 {
                for helper in 0..threads {
                    let order = CandidateOrder::new(len, helper, threads);
                    let visited: Vec<usize> = order.indices().collect();
                    let mut sorted = visited.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, (0..len).collect::<Vec<_>>());
                    for steps in 0..=len {
                        for index in 0..len {
                            let expected = (0..index).all(|i| visited[..steps].contains(&i));
                            assert_eq!(order.all_tried_before(index, steps), expected, "{order:?} {index} {steps}");
                        }
                    }
                }
            }
        }
    }
}
