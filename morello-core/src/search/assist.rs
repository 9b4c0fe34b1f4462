//! Threads that would otherwise idle joining another synthesizer's search.
//!
//! A build synthesizes its kernels on several workers, each with its own synthesizer. When
//! one worker has finished its kernels while another is still in a long search, the idle
//! thread can join that search as one more helper (see `parallel.rs`): it shares the search's
//! memo table and searches the same Spec in its own order until the search is done. The
//! results do not change: every memo entry is exact, whoever wrote it.
//!
//! A synthesizer given an [`AssistBoard`] ([`Synthesizer::set_assist_board`]) posts there each
//! exact search of a Spec its memo table does not answer yet, as an opening;
//! [`AssistBoard::help_while`] takes openings and helps them, each thread joining the search
//! with the fewest helpers. The search waits for every thread that joined it before it
//! returns (or unwinds), so nothing writes to its memo table afterwards. What the helpers
//! solved stays in the memo table, so a database saved from it may hold more entries than
//! one thread would have found; the implementations are the same.

use super::{SynthesisStats, Synthesizer};
use crate::spec::Spec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long an idle thread waits for an opening before it checks again whether it is still
/// wanted.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// Where the searches of several synthesizers offer their work to idle threads. Clones share
/// one board.
#[derive(Clone, Default)]
pub struct AssistBoard {
    shared: Arc<Board>,
}

#[derive(Default)]
struct Board {
    openings: Mutex<Vec<Arc<Opening>>>,
    /// Signalled when an opening is posted.
    posted: Condvar,
    /// The number of openings posted so far.
    posted_count: AtomicU64,
}

/// A search in progress that accepts helpers.
struct Opening {
    /// Which opening on its board this is.
    id: u64,
    spec: Spec,
    /// A helper of the search, from which each joining thread's helper is made.
    template: Mutex<Synthesizer>,
    /// Set when the search is done.
    stop: Arc<AtomicBool>,
    recruits: Mutex<Recruits>,
    /// Signalled when a joined thread leaves.
    left: Condvar,
}

#[derive(Default)]
struct Recruits {
    /// Threads helping now.
    active: usize,
    /// Threads that have joined in all.
    joined: usize,
    /// The work of those that have left.
    work: SynthesisStats,
}

/// Locks `mutex`, ignoring poisoning: a helper that panicked leaves consistent counters
/// behind (the guard below still runs), and its panic reaches its own thread's caller.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AssistBoard {
    /// An empty board.
    pub fn new() -> Self {
        Self::default()
    }

    /// Helps searches posted on this board, one after another, while `wanted` says so; waits
    /// for openings when there are none. Returns how many searches this thread joined.
    ///
    /// A thread joins each search once: a helper that has solved the whole Spec leaves, and
    /// the search's own thread, which finds the helper's results in the memo table, soon ends.
    pub fn help_while(&self, wanted: impl Fn() -> bool) -> usize {
        let mut helped: Vec<u64> = Vec::new();
        while wanted() {
            match self.take(&helped) {
                Some((opening, helper)) => {
                    opening.help(helper);
                    helped.push(opening.id);
                }
                None => {
                    let openings = lock(&self.shared.openings);
                    drop(self.shared.posted.wait_timeout(openings, IDLE_POLL));
                }
            }
        }
        helped.len()
    }

    /// Of the openings whose searches are still running and that are not among `helped`, the
    /// one with the fewest helpers, with a new helper for it.
    fn take(&self, helped: &[u64]) -> Option<(Arc<Opening>, Synthesizer)> {
        let openings = lock(&self.shared.openings);
        let opening = openings
            .iter()
            .filter(|o| !o.stop.load(Ordering::Relaxed) && !helped.contains(&o.id))
            .min_by_key(|o| lock(&o.recruits).active)?;
        let mut recruits = lock(&opening.recruits);
        let template = lock(&opening.template);
        // Helper indices after the search's own threads, each starting elsewhere in the
        // rewrites' order.
        let index = template.helper + recruits.joined + 1;
        let mut helper = template.helper(index, &opening.stop);
        helper.threads = index + 1;
        // Counted only once the helper exists, so the search never waits for one that
        // failed to start.
        recruits.active += 1;
        recruits.joined += 1;
        drop((template, recruits));
        Some((Arc::clone(opening), helper))
    }

    /// Posts `owner`'s search of `spec`, which stops when `stop` is set.
    pub(super) fn open(&self, owner: &Synthesizer, spec: &Spec, stop: &Arc<AtomicBool>) -> PostedSearch {
        let opening = Arc::new(Opening {
            id: self.shared.posted_count.fetch_add(1, Ordering::Relaxed),
            spec: spec.clone(),
            template: Mutex::new(owner.helper(owner.threads - 1, stop)),
            stop: Arc::clone(stop),
            recruits: Mutex::default(),
            left: Condvar::new(),
        });
        lock(&self.shared.openings).push(Arc::clone(&opening));
        self.shared.posted.notify_all();
        PostedSearch { board: self.clone(), opening }
    }
}

impl Opening {
    /// Runs `helper` on the search until it stops, on a thread with the search's stack.
    fn help(&self, mut helper: Synthesizer) {
        /// Leaves the search even if the helper panics, so the search does not wait forever.
        struct Leave<'a>(&'a Opening, SynthesisStats);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let mut recruits = lock(&self.0.recruits);
                recruits.active -= 1;
                recruits.work.add_work(&self.1);
                self.0.left.notify_all();
            }
        }
        let mut leave = Leave(self, SynthesisStats::default());
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("morello-synthesis-assist".to_owned())
                .stack_size(super::parallel::SEARCH_STACK_BYTES)
                .spawn_scoped(scope, || {
                    helper.solve_with_rising_budget(&self.spec);
                });
            // Helping is optional: without a thread, the search goes on without this one.
            if let Ok(thread) = spawned {
                thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
        });
        leave.1 = helper.stats;
    }
}

/// A search posted on a board; [`PostedSearch::close`] (or dropping it, as when the search
/// panics) takes it down.
pub(super) struct PostedSearch {
    board: AssistBoard,
    opening: Arc<Opening>,
}

impl PostedSearch {
    /// Takes the opening off the board, stops its helpers, waits for them to leave and
    /// returns their work and how many times threads joined.
    pub(super) fn close(self) -> (SynthesisStats, usize) {
        let recruits = self.take_down();
        (recruits.work, recruits.joined)
    }

    /// Takes the opening off the board, stops its helpers and waits for them to leave.
    fn take_down(&self) -> MutexGuard<'_, Recruits> {
        lock(&self.board.shared.openings).retain(|o| o.id != self.opening.id);
        self.opening.stop.store(true, Ordering::Relaxed);
        let mut recruits = lock(&self.opening.recruits);
        while recruits.active > 0 {
            recruits = self.opening.left.wait(recruits).unwrap_or_else(PoisonError::into_inner);
        }
        recruits
    }
}

impl Drop for PostedSearch {
    fn drop(&mut self) {
        drop(self.take_down());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::parallel::StopWhenDropped;
    use crate::target::X86_AVX2;

    fn spec(text: &str) -> Spec {
        Spec::parse_for(text, &X86_AVX2).unwrap()
    }

    /// An idle thread takes a posted search and helps it until it is taken down; the search
    /// counts the thread and its work.
    #[test]
    fn an_idle_thread_joins_a_posted_search_until_it_is_taken_down() {
        let spec = spec("Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL), serial)");
        let board = AssistBoard::new();
        let owner = Synthesizer::new(&X86_AVX2);
        let stop = Arc::new(AtomicBool::new(false));
        let finished = AtomicBool::new(false);
        let helped = std::thread::scope(|scope| {
            let idle = scope.spawn(|| board.help_while(|| !finished.load(Ordering::SeqCst)));
            let finish = StopWhenDropped(&finished);
            let posted = board.open(&owner, &spec, &stop);
            // Nobody else searches: the answer reaches the owner's memo table only through the
            // thread that joined.
            while owner.memo.get_with(&spec, |_| ()).is_none() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let (work, joined) = posted.close();
            assert_eq!(joined, 1);
            assert!(work.specs_solved > 0, "the helper's work was not counted");
            drop(finish);
            idle.join().unwrap()
        });
        assert_eq!(helped, 1);
        assert!(lock(&board.shared.openings).is_empty(), "the search left its opening posted");
    }

    /// A search with a thread helping from the board finds the implementation one thread
    /// finds alone, and counts the threads that joined it.
    #[test]
    fn helped_searches_find_what_one_thread_finds() {
        let spec = spec("Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL), serial)");
        let alone = Synthesizer::new(&X86_AVX2).synthesize(&spec).unwrap();
        let board = AssistBoard::new();
        let owner_done = AtomicBool::new(false);
        let (helped, joined, assists) = std::thread::scope(|scope| {
            let idle = scope.spawn(|| board.help_while(|| !owner_done.load(Ordering::SeqCst)));
            let done = StopWhenDropped(&owner_done);
            let mut owner = Synthesizer::new(&X86_AVX2);
            owner.set_assist_board(board.clone());
            let imp = owner.synthesize(&spec).unwrap();
            drop(done);
            (imp, idle.join().unwrap(), owner.stats().assists)
        });
        assert_eq!(helped, alone);
        assert_eq!(joined as u64, assists);
        assert!(lock(&board.shared.openings).is_empty(), "the finished search left its opening posted");
    }

    /// A search of a Spec already answered posts nothing; an idle thread returns as soon as it
    /// is no longer wanted.
    #[test]
    fn answered_searches_post_nothing() {
        let spec = spec("Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)");
        let board = AssistBoard::new();
        let mut owner = Synthesizer::new(&X86_AVX2);
        owner.synthesize(&spec).unwrap();
        owner.set_assist_board(board.clone());
        owner.synthesize(&spec).unwrap();
        assert_eq!(board.shared.posted_count.load(Ordering::SeqCst), 0);
        assert_eq!(owner.stats().assists, 0);
        assert_eq!(board.help_while(|| false), 0);
    }
}
