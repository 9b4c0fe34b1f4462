//! Synthesizing a crate's kernels on several threads.
//!
//! Kernels are grouped so that two kernels searching for a Spec in common (the same blocks
//! under different schedules, say) share one synthesizer, which solves it once. Groups go to
//! worker threads round-robin in declaration order; each worker reads its own copy of the
//! database and solves its kernels in order, so a build's results depend only on the
//! database, the declarations and the number of workers. Threads beyond the number of workers
//! (one kernel on two cores, say) search inside each worker's synthesizer, which does not
//! change its results (see `Synthesizer::set_threads`). A worker that has finished its
//! kernels joins the searches still running on the others until they have finished too
//! (`AssistBoard`), which does not change their results either. Everything every worker
//! solved is added to one database at the end.
//!
//! A long synthesis also saves as it goes ([`Checkpoint`]): every [`CHECKPOINT_EVERY`] a
//! watcher thread adds what the workers have solved so far to the database file, kernels
//! finished or not (every result in a memo table is final: `Synthesizer::results_view`), so a
//! build stopped partway (Ctrl-C, killed, out of time in CI) keeps what it had solved and the
//! next build resumes from there. Saving merges under the file's lock, and the results do not
//! change. The watcher also says on stderr how far a search that takes a while has got.

use crate::database;
use morello_core::db::Database;
use morello_core::imp::Impl;
use morello_core::job::SynthesisJob;
use morello_core::schedule::ScheduleError;
use morello_core::search::{AssistBoard, ResultsView, SearchMode, Synthesizer};
use morello_core::target::Target;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How one kernel's synthesis went.
pub(crate) struct Solved {
    /// The kernel's position in the list given to [`synthesize`].
    pub index: usize,
    /// Its implementation, or why there is none.
    pub result: Result<Impl, ScheduleError>,
    /// Time spent on it.
    pub elapsed: Duration,
    /// Specs searched for it (not found in the memo table or the database).
    pub searched: u64,
    /// Memo-table hits while synthesizing it.
    pub memo_hits: u64,
    /// How many times threads of finished workers joined its searches.
    pub assists: u64,
}

/// What [`synthesize`] produced.
pub(crate) struct Synthesized {
    /// One entry per job, in the jobs' order.
    pub solved: Vec<Solved>,
    /// The database with everything every worker solved added.
    pub database: Database,
    /// Checkpoints saved while workers were still searching.
    pub checkpoints_while_searching: usize,
}

/// How many threads synthesis may use: Cargo's job count for this build (`NUM_JOBS`, set
/// for build scripts) if given, else the machine's parallelism, and never more than that.
pub(crate) fn thread_budget() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = std::env::var("NUM_JOBS").ok().and_then(|n| n.parse::<usize>().ok()).unwrap_or(cores);
    jobs.clamp(1, cores)
}

/// How the workers' synthesizers search.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mode {
    /// Only read the database.
    pub offline: bool,
    /// Slack and search space.
    pub search: SearchMode,
}

/// How often what the workers have solved is saved while they search.
pub(crate) const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// A search that takes longer than this says how far it has got, and again this often after.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How often the watcher looks at the workers.
const WATCH_TICK: Duration = Duration::from_millis(20);

/// Where and how often workers save what they found while synthesis goes on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checkpoint<'a> {
    /// The database file.
    pub path: &'a Path,
    /// The least time between a worker's saves.
    pub every: Duration,
    /// Whether to say on stderr when a worker saves.
    pub verbose: bool,
}

impl Checkpoint<'_> {
    /// Adds what the workers whose results `views` shows have found to the file. A failure is
    /// only reported: the database is saved again at the end, where it is an error.
    fn save(&self, views: &[ResultsView], target: &'static Target, kernels_done: usize) {
        let mut db = Database::new(target);
        for view in views {
            view.record_into(&mut db);
        }
        match database::save(&mut db, self.path) {
            Ok(()) if self.verbose => eprintln!(
                "morello: checkpoint: saved what the search found so far ({kernels_done} kernel(s) done) to {}",
                self.path.display()
            ),
            Ok(()) => {}
            Err(report) => eprintln!("morello: checkpoint not saved: {report}"),
        }
    }
}

/// Watches the workers until none is busy: saves to `checkpoint` whenever one is due and the
/// workers have found something since the last save (and once more at the end if one is due
/// then), and says on stderr how far the search has got once it has taken a while. Returns
/// how many checkpoints it saved while workers were busy.
fn watch(
    views: &[ResultsView],
    target: &'static Target,
    checkpoint: Option<Checkpoint<'_>>,
    busy: &AtomicUsize,
    done: &AtomicUsize,
    total: usize,
) -> usize {
    let answered = || views.iter().map(ResultsView::entries).sum::<usize>();
    let start = Instant::now();
    let (mut last_save, mut saved_entries) = (start, answered());
    let mut next_progress = PROGRESS_EVERY;
    let mut save_if_due = |last_save: &mut Instant| {
        let entries = answered();
        if let Some(checkpoint) = checkpoint
            && entries > saved_entries
            && last_save.elapsed() >= checkpoint.every
        {
            checkpoint.save(views, target, done.load(Ordering::SeqCst));
            (*last_save, saved_entries) = (Instant::now(), entries);
            return true;
        }
        false
    };
    let mut saved_while_busy = 0;
    while busy.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(WATCH_TICK);
        saved_while_busy += usize::from(save_if_due(&mut last_save));
        if start.elapsed() >= next_progress {
            let entries = answered();
            crate::terminal::say(&format!(
                "morello: searching for {}: {} of {total} kernel(s) done, {entries} Specs answered so far, {:.0} s",
                target.name,
                done.load(Ordering::SeqCst),
                start.elapsed().as_secs_f64()
            ));
            next_progress += PROGRESS_EVERY;
        }
    }
    save_if_due(&mut last_save);
    saved_while_busy
}

/// Synthesizes `jobs` on at most `threads` threads, each starting from a copy of `db`, saving
/// to `checkpoint` as it goes and calling `on_solved` (from the worker's thread) as soon as
/// each kernel is done, so a long build can say what it has finished.
pub(crate) fn synthesize(
    jobs: Vec<SynthesisJob>,
    db: Database,
    mode: Mode,
    threads: usize,
    checkpoint: Option<Checkpoint<'_>>,
    on_solved: &(dyn Fn(&Solved) + Sync),
) -> Synthesized {
    let (worker_of, workers) = assign(&jobs, threads);
    let mut work: Vec<Vec<(usize, SynthesisJob)>> = (0..workers).map(|_| Vec::new()).collect();
    for (index, job) in jobs.into_iter().enumerate() {
        work[worker_of[index]].push((index, job));
    }
    // Threads left over when there are fewer workers than threads go to each worker's searches.
    let search_threads = (threads / workers).max(1);
    // The first worker takes `db` itself; the others, copies.
    let copies: Vec<Database> = (1..workers).map(|_| db.clone()).collect();
    let databases = std::iter::once(db).chain(copies);
    // A worker that has finished helps the others' searches until every worker has.
    let board = AssistBoard::new();
    let busy = AtomicUsize::new(workers);
    let done = AtomicUsize::new(0);
    let (board, busy, done) = (&board, &busy, &done);
    let synthesizers: Vec<Synthesizer> = databases
        .map(|db| {
            let mut synth = Synthesizer::with_database(db);
            synth.set_offline(mode.offline);
            synth.set_search_mode(mode.search);
            synth.set_threads(search_threads);
            if workers > 1 {
                synth.set_assist_board(board.clone());
            }
            synth
        })
        .collect();
    let target = synthesizers[0].target();
    let views: Vec<ResultsView> = synthesizers.iter().map(Synthesizer::results_view).collect();
    let total = work.iter().map(Vec::len).sum();
    let mut checkpoints_while_searching = 0;
    let results: Vec<(Vec<Solved>, Synthesizer)> = std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .into_iter()
            .zip(synthesizers)
            .map(|(jobs, mut synth)| {
                // Counted from before the spawn: a worker that never starts is not waited for.
                let working = Working(busy);
                std::thread::Builder::new()
                    .name("morello-build-worker".to_owned())
                    .spawn_scoped(scope, move || {
                        let mut solved: Vec<Solved> = Vec::new();
                        for (index, job) in jobs {
                            let finished = run_one(&mut synth, index, job);
                            done.fetch_add(1, Ordering::SeqCst);
                            on_solved(&finished);
                            solved.push(finished);
                        }
                        drop(working);
                        board.help_while(|| busy.load(Ordering::SeqCst) > 0);
                        (solved, synth)
                    })
                    .expect("spawning a synthesis worker")
            })
            .collect();
        if !mode.offline {
            checkpoints_while_searching = watch(&views, target, checkpoint, busy, done, total);
        }
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut solved = Vec::new();
    let mut database = None;
    for (done, synth) in results {
        solved.extend(done);
        match &mut database {
            None => database = Some(synth.into_database()),
            Some(db) => synth.record_into(db),
        }
    }
    solved.sort_by_key(|s| s.index);
    let database = database.expect("there is at least one worker");
    Synthesized { solved, database, checkpoints_while_searching }
}

/// Counts a worker as busy until dropped, even by a panic (the others stop waiting for it).
struct Working<'a>(&'a AtomicUsize);

impl Drop for Working<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn run_one(synth: &mut Synthesizer, index: usize, job: SynthesisJob) -> Solved {
    let before = synth.stats();
    let start = Instant::now();
    let result = job.run(synth);
    let after = synth.stats();
    Solved {
        index,
        result,
        elapsed: start.elapsed(),
        searched: after.specs_solved - before.specs_solved,
        memo_hits: after.memo_hits - before.memo_hits,
        assists: after.assists - before.assists,
    }
}

/// The worker of each job, and how many workers there are (at least 1): jobs sharing work are
/// grouped (transitively), and the groups, in order of their first job, are dealt round-robin
/// to at most `threads` workers.
fn assign(jobs: &[SynthesisJob], threads: usize) -> (Vec<usize>, usize) {
    // Union-find; each group's root is its first job.
    let mut parent: Vec<usize> = (0..jobs.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..jobs.len() {
        for j in i + 1..jobs.len() {
            if jobs[i].shares_work_with(&jobs[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let roots: Vec<usize> = (0..jobs.len()).map(|i| root(&mut parent, i)).collect();
    let groups = (0..jobs.len()).filter(|&i| roots[i] == i).count();
    let workers = threads.clamp(1, groups.max(1));
    // A group's ordinal is the number of groups whose first job comes before its own.
    let worker_of = roots.iter().map(|&r| (0..r).filter(|&i| roots[i] == i).count() % workers).collect();
    (worker_of, workers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::spec::Spec;
    use morello_core::target::TargetId;

    fn job(text: &str) -> SynthesisJob {
        SynthesisJob::Whole(Spec::parse_for(text, TargetId::X86Avx2.target()).unwrap())
    }

    /// Job indices per worker.
    fn per_worker(jobs: &[SynthesisJob], threads: usize) -> Vec<Vec<usize>> {
        let (worker_of, workers) = assign(jobs, threads);
        (0..workers).map(|w| (0..jobs.len()).filter(|&i| worker_of[i] == w).collect()).collect()
    }

    /// Workers save what they found while they synthesize once a checkpoint is due, and only
    /// then; the saved database answers the kernels without a search. Each kernel is reported
    /// as it finishes.
    #[test]
    fn checkpoints_save_finished_kernels_when_due() {
        let dir = std::env::temp_dir().join(format!("morello-checkpoint-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("x86-avx2.morellodb");
        let target = TargetId::X86Avx2.target();
        let specs = [
            "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)",
            "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)",
        ];
        let jobs = || specs.iter().map(|s| job(s)).collect::<Vec<_>>();
        let online = Mode { offline: false, search: SearchMode::EXACT };

        let never = Checkpoint { path: &path, every: Duration::from_secs(3600), verbose: false };
        let found = synthesize(jobs(), Database::new(target), online, 1, Some(never), &|_| {});
        assert!(!path.exists(), "saved before a checkpoint was due");
        assert_eq!(found.checkpoints_while_searching, 0);

        let always = Checkpoint { every: Duration::ZERO, ..never };
        let reported = std::sync::Mutex::new(Vec::new());
        let report = |solved: &Solved| reported.lock().unwrap().push((solved.index, solved.searched));
        let found = synthesize(jobs(), Database::new(target), online, 1, Some(always), &report);
        let as_returned: Vec<_> = found.solved.iter().map(|s| (s.index, s.searched)).collect();
        assert_eq!(reported.into_inner().unwrap(), as_returned, "each kernel reported once, as it finished");
        let saved = database::open(&path, target);
        let offline = synthesize(jobs(), saved, Mode { offline: true, ..online }, 1, None, &|_| {});
        for (read, searched) in offline.solved.iter().zip(&found.solved) {
            assert_eq!(read.searched, 0);
            assert_eq!(read.result.as_ref().expect("in the checkpoint"), searched.result.as_ref().unwrap());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A kernel whose search takes seconds is saved while it is searched: a build stopped
    /// partway keeps what it had solved.
    #[test]
    fn checkpoints_are_saved_in_the_middle_of_a_search() {
        let dir = std::env::temp_dir().join(format!("morello-midsearch-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("x86-avx2.morellodb");
        let target = TargetId::X86Avx2.target();
        // The exact search of 64^3 on AVX2 takes seconds (about 150,000 Specs).
        let jobs = vec![job("Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL), serial)")];
        let online = Mode { offline: false, search: SearchMode::EXACT };
        let often = Checkpoint { path: &path, every: Duration::from_millis(200), verbose: false };
        let found = synthesize(jobs, Database::new(target), online, 1, Some(often), &|_| {});
        assert!(found.checkpoints_while_searching > 0, "nothing was saved while the kernel was searched");
        // What was saved is a valid database (its answers are final: `tests/results_view.rs`
        // in morello-core); the caller saves the finished kernel at the end.
        assert!(!database::open(&path, target).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The worker that finishes first may join the other's search (whether it does in time
    /// depends on the scheduler; `search::AssistBoard`'s tests show that it does): the kernels
    /// are those one worker finds alone, and a build on one worker has no one to join it.
    #[test]
    fn a_finished_worker_helps_another_without_changing_its_kernels() {
        let specs = [
            "Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL), serial)",
            "Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL), serial)",
        ];
        let jobs = || specs.iter().map(|s| job(s)).collect::<Vec<_>>();
        let target = TargetId::X86Avx2.target();
        let online = Mode { offline: false, search: SearchMode::EXACT };
        let alone = synthesize(jobs(), Database::new(target), online, 1, None, &|_| {});
        let helped = synthesize(jobs(), Database::new(target), online, 2, None, &|_| {});
        assert_eq!(per_worker(&jobs(), 2), vec![vec![0], vec![1]], "one kernel per worker");
        for (a, b) in alone.solved.iter().zip(&helped.solved) {
            assert_eq!(a.result.as_ref().unwrap(), b.result.as_ref().unwrap());
        }
        assert_eq!(alone.solved[0].assists, 0);
    }

    #[test]
    fn kernels_searching_the_same_spec_share_a_worker_and_others_are_dealt_round_robin() {
        let a = "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)";
        let b = "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)";
        let c = "Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL), serial)";
        let jobs = vec![job(a), job(b), job(a), job(c)];
        assert_eq!(per_worker(&jobs, 2), vec![vec![0, 2, 3], vec![1]]);
        assert_eq!(per_worker(&jobs, 8), vec![vec![0, 2], vec![1], vec![3]]);
        assert_eq!(per_worker(&jobs, 1), vec![vec![0, 1, 2, 3]]);
        assert!(per_worker(&[], 2).iter().all(Vec::is_empty));
    }
}
