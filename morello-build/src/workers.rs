//! Synthesizing a crate's kernels on several threads.
//!
//! Kernels are grouped so that two kernels searching for a Spec in common (the same blocks
//! under different schedules, say) share one synthesizer, which solves it once. Groups go to
//! worker threads round-robin in declaration order; each worker reads its own copy of the
//! database and solves its kernels in order, so a build's results depend only on the
//! database, the declarations and the number of workers. Everything every worker solved is
//! added to one database at the end.

use morello_core::db::Database;
use morello_core::imp::Impl;
use morello_core::job::SynthesisJob;
use morello_core::schedule::ScheduleError;
use morello_core::search::Synthesizer;
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
}

/// What [`synthesize`] produced.
pub(crate) struct Synthesized {
    /// One entry per job, in the jobs' order.
    pub solved: Vec<Solved>,
    /// The database with everything every worker solved added.
    pub database: Database,
    /// Specs searched in all.
    pub searched: u64,
}

/// How many threads synthesis may use: Cargo's job count for this build (`NUM_JOBS`, set
/// for build scripts) if given, else the machine's parallelism, and never more than that.
pub(crate) fn thread_budget() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = std::env::var("NUM_JOBS").ok().and_then(|n| n.parse::<usize>().ok()).unwrap_or(cores);
    jobs.clamp(1, cores)
}

/// Synthesizes `jobs` on at most `threads` threads, each starting from a copy of `db`.
/// `offline` synthesizers only read the database.
pub(crate) fn synthesize(jobs: Vec<SynthesisJob>, db: Database, offline: bool, threads: usize) -> Synthesized {
    let assignment = assign(&jobs, threads);
    let mut slots: Vec<Option<SynthesisJob>> = jobs.into_iter().map(Some).collect();
    let work: Vec<Vec<(usize, SynthesisJob)>> = assignment
        .iter()
        .map(|indices| indices.iter().map(|&i| (i, slots[i].take().expect("each job is assigned once"))).collect())
        .collect();
    let run = |work: Vec<(usize, SynthesisJob)>, db: Database| {
        let mut synth = Synthesizer::with_database(db);
        synth.set_offline(offline);
        let solved: Vec<Solved> = work.into_iter().map(|(index, job)| run_one(&mut synth, index, job)).collect();
        (solved, synth)
    };
    let mut results: Vec<(Vec<Solved>, Synthesizer)> = if work.len() <= 1 {
        work.into_iter().map(|w| run(w, db.clone())).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = work
                .into_iter()
                .map(|w| {
                    let db = db.clone();
                    let run = &run;
                    std::thread::Builder::new()
                        .name("morello-build-worker".to_owned())
                        .spawn_scoped(scope, move || run(w, db))
                        .expect("spawning a synthesis worker")
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
        })
    };
    let mut database = db;
    let mut searched = 0;
    let mut solved = Vec::new();
    for (done, synth) in &mut results {
        searched += synth.stats().specs_solved;
        synth.record_into(&mut database);
        solved.append(done);
    }
    solved.sort_by_key(|s| s.index);
    Synthesized { solved, database, searched }
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
    }
}

/// Job indices per worker: jobs sharing work are grouped (transitively), and the groups, in
/// order of their first job, are dealt round-robin to at most `threads` workers.
fn assign(jobs: &[SynthesisJob], threads: usize) -> Vec<Vec<usize>> {
    let mut group: Vec<usize> = (0..jobs.len()).collect();
    fn root(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    for i in 0..jobs.len() {
        for j in i + 1..jobs.len() {
            if jobs[i].shares_work_with(&jobs[j]) {
                let (a, b) = (root(&mut group, i), root(&mut group, j));
                group[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of_root = vec![usize::MAX; jobs.len()];
    for i in 0..jobs.len() {
        let r = root(&mut group, i);
        if group_of_root[r] == usize::MAX {
            group_of_root[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[group_of_root[r]].push(i);
    }
    let workers = threads.clamp(1, groups.len().max(1));
    let mut out = vec![Vec::new(); workers];
    for (g, members) in groups.into_iter().enumerate() {
        out[g % workers].extend(members);
    }
    out.retain(|w| !w.is_empty());
    for w in &mut out {
        w.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::spec::Spec;
    use morello_core::target::TargetId;

    fn job(text: &str) -> SynthesisJob {
        SynthesisJob::Whole(Spec::parse_for(text, TargetId::X86Avx2.target()).unwrap())
    }

    #[test]
    fn kernels_searching_the_same_spec_share_a_worker_and_others_are_dealt_round_robin() {
        let a = "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)";
        let b = "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)";
        let c = "Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL), serial)";
        let jobs = vec![job(a), job(b), job(a), job(c)];
        assert_eq!(assign(&jobs, 2), vec![vec![0, 2, 3], vec![1]]);
        assert_eq!(assign(&jobs, 8), vec![vec![0, 2], vec![1], vec![3]]);
        assert_eq!(assign(&jobs, 1), vec![vec![0, 1, 2, 3]]);
        assert!(assign(&[], 2).is_empty());
    }
}
