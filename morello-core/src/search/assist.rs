//! Threads that would otherwise idle joining another synthesizer's search.
//!
//! A build synthesizes its kernels on several workers, each with its own synthesizer. When
//! one worker has finished its kernels while another is still in a long search, the idle
//! thread can join that search as one more helper (see `parallel.rs`): it shares the search's
//! memo table and searches the same Spec in its own order until the search is done. The
//! results do not change: every memo entry is exact, whoever wrote it.
//!
//! A synthesizer given an [`AssistBoard`] ([`Synthesizer::set_assist_board`]) posts each exact
//! search it runs there as an opening; [`AssistBoard::help_while`] takes openings and helps
//! them. The search waits for every thread that joined it before it returns, so nothing
//! writes to its memo table afterwards.

use super::{SynthesisStats, Synthesizer};
use crate::spec::Spec;
use std::sync::atomic::{AtomicBool, Ordering};
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
}

/// A search in progress that accepts helpers.
struct Opening {
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
    pub fn help_while(&self, wanted: impl Fn() -> bool) -> usize {
        let mut joined = 0;
        while wanted() {
            match self.take() {
                Some((opening, helper)) => {
                    opening.help(helper);
                    joined += 1;
                }
                None => {
                    let openings = lock(&self.shared.openings);
                    if openings.is_empty() {
                        drop(self.shared.posted.wait_timeout(openings, IDLE_POLL));
                    }
                }
            }
        }
        joined
    }

    /// The first opening whose search is still running, with a new helper for it.
    fn take(&self) -> Option<(Arc<Opening>, Synthesizer)> {
        let openings = lock(&self.shared.openings);
        let opening = openings.iter().find(|o| !o.stop.load(Ordering::Relaxed))?;
        let mut recruits = lock(&opening.recruits);
        recruits.active += 1;
        recruits.joined += 1;
        let template = lock(&opening.template);
        // Helper indices after the search's own threads, each starting elsewhere in the
        // rewrites' order.
        let index = template.helper + recruits.joined;
        let mut helper = template.helper(index, &opening.stop);
        helper.threads = index + 1;
        drop((template, recruits));
        Some((Arc::clone(opening), helper))
    }

    /// Posts `owner`'s search of `spec`, which stops when `stop` is set.
    pub(super) fn open(&self, owner: &Synthesizer, spec: &Spec, stop: &Arc<AtomicBool>) -> PostedSearch {
        let opening = Arc::new(Opening {
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
            std::thread::Builder::new()
                .name("morello-synthesis-assist".to_owned())
                .stack_size(super::parallel::SEARCH_STACK_BYTES)
                .spawn_scoped(scope, || {
                    helper.solve_with_rising_budget(&self.spec);
                })
                .expect("spawning a synthesis assistant")
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        });
        leave.1 = helper.stats;
    }
}

/// A search posted on a board; [`PostedSearch::close`] takes it down.
pub(super) struct PostedSearch {
    board: AssistBoard,
    opening: Arc<Opening>,
}

impl PostedSearch {
    /// Takes the opening off the board, stops its helpers, waits for them to leave and
    /// returns their work and how many threads joined.
    pub(super) fn close(self) -> (SynthesisStats, usize) {
        lock(&self.board.shared.openings).retain(|o| !Arc::ptr_eq(o, &self.opening));
        self.opening.stop.store(true, Ordering::Relaxed);
        let mut recruits = lock(&self.opening.recruits);
        while recruits.active > 0 {
            recruits = self.opening.left.wait(recruits).unwrap_or_else(PoisonError::into_inner);
        }
        (recruits.work, recruits.joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX2;

    /// A thread helping from the board joins the search and the implementation is the one a
    /// synthesizer finds alone; the search counts the thread that joined.
    #[test]
    fn an_idle_thread_joins_a_search_without_changing_its_result() {
        let target = &X86_AVX2;
        let spec = Spec::parse_for("Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL), serial)", target).unwrap();
        let alone = Synthesizer::new(target).synthesize(&spec).unwrap();
        let board = AssistBoard::new();
        let owner_done = AtomicBool::new(false);
        let (helped, joined, assists) = std::thread::scope(|scope| {
            let idle = scope.spawn(|| board.help_while(|| !owner_done.load(Ordering::SeqCst)));
            let mut owner = Synthesizer::new(target);
            owner.set_assist_board(board.clone());
            let imp = owner.synthesize(&spec).unwrap();
            owner_done.store(true, Ordering::SeqCst);
            (imp, idle.join().unwrap(), owner.stats().assists)
        });
        assert_eq!(helped, alone);
        assert!(joined >= 1, "the idle thread never joined");
        assert_eq!(joined as u64, assists);
        assert!(lock(&board.shared.openings).is_empty(), "the finished search left its opening posted");
    }

    /// A search of a Spec already answered posts nothing; an idle thread returns as soon as it
    /// is no longer wanted.
    #[test]
    fn answered_searches_post_nothing() {
        let target = &X86_AVX2;
        let spec = Spec::parse_for("Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)", target).unwrap();
        let board = AssistBoard::new();
        let mut owner = Synthesizer::new(target);
        owner.synthesize(&spec).unwrap();
        owner.set_assist_board(board.clone());
        owner.synthesize(&spec).unwrap();
        assert_eq!(owner.stats().assists, 0);
        assert_eq!(board.help_while(|| false), 0);
        assert!(lock(&board.shared.openings).is_empty());
    }
}
