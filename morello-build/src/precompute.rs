//! Filling a database ahead of time, bottom-up, in resumable stages.
//!
//! A family of Specs is cut into stages by size: stage `s` holds the Specs whose largest
//! dimension is `2^s`. Stages run smallest first, so every stage finds the answers of the
//! smaller Specs its search reaches already in the database. After each stage the database is
//! saved and the stage is recorded in it; a rerun skips recorded stages, so an interrupted
//! precompute resumes where it stopped.

use morello_core::db::Database;
use morello_core::db::file;
use morello_core::dtype::Dtype;
use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::spec::Spec;
use morello_core::target::Target;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A family of Matmul Specs: `1×m×k×n`, every power of two up to `max` in each dimension,
/// operands row-major in global memory, serial.
#[derive(Clone, Copy, Debug)]
pub struct MatmulFamily {
    /// Largest dimension.
    pub max: u32,
    /// Element type of every operand.
    pub dtype: Dtype,
}

impl MatmulFamily {
    /// The Specs of stage `2^log2`: those whose largest dimension is exactly that.
    pub fn stage(&self, log2: u32, target: &Target) -> Vec<Spec> {
        let size = 1u32 << log2;
        let powers: Vec<u32> = (0..=log2).map(|p| 1 << p).collect();
        let mut out = Vec::new();
        for &m in &powers {
            for &k in &powers {
                for &n in &powers {
                    if m.max(k).max(n) == size {
                        out.push(self.spec(m, k, n, target));
                    }
                }
            }
        }
        out
    }

    /// The stage names, smallest first.
    pub fn stages(&self) -> impl Iterator<Item = (u32, String)> + '_ {
        (0..=self.max.max(1).ilog2()).map(|log2| (log2, format!("matmul {} {}", self.dtype.name(), 1u32 << log2)))
    }

    /// `Matmul(1×m×k×n, ...)` at the target's full limits.
    pub fn spec(&self, m: u32, k: u32, n: u32, target: &Target) -> Spec {
        let d = self.dtype.name();
        let text =
            format!("Matmul(1x{m}x{k}x{n}, ({d}, GL, row_major), ({d}, GL, row_major), ({d}, GL, row_major), serial)");
        let spec = Spec::parse_for(&text, target).expect("family Specs are valid");
        spec.with_limits(target.max_limits())
    }
}

/// Runs every stage of `family` not yet recorded in the database at `path`, searching `space`
/// on `jobs` threads, printing progress to `progress`. Returns the database as saved.
pub fn precompute(
    family: MatmulFamily,
    target: &'static Target,
    space: SearchSpace,
    path: &Path,
    jobs: usize,
    progress: &mut dyn Write,
) -> Result<Database, String> {
    let (mut db, report) = file::load(path, target);
    if let file::LoadReport::Rebuilt(reason) = report {
        let _ = writeln!(progress, "ignoring {reason}; starting from an empty database");
    }
    let stages: Vec<(u32, String)> = family.stages().collect();
    for (index, (log2, name)) in stages.iter().enumerate() {
        let label = format!("[{}/{}] {name}", index + 1, stages.len());
        if db.stage_done(name) {
            let _ = writeln!(progress, "{label}: already done");
            continue;
        }
        let specs = family.stage(*log2, target);
        let start = Instant::now();
        for synth in run_stage(&db, &specs, space, jobs, &label, start, progress)? {
            synth.record_into(&mut db);
        }
        db.complete_stage(name);
        file::save(&mut db, path).map_err(|e| e.to_string())?;
        let _ = writeln!(progress, "\r{label}: {} Specs in {:.1?}, saved{:20}", specs.len(), start.elapsed(), "");
    }
    Ok(db)
}

/// The stages of `family` not yet recorded in `db`, smallest first.
pub fn pending_stages(family: &MatmulFamily, db: &Database) -> Vec<(u32, String)> {
    family.stages().filter(|(_, name)| !db.stage_done(name)).collect()
}

/// Solves `specs`, split round-robin over `jobs` threads, each reading a copy of `db`;
/// returns each thread's synthesizer, holding what it solved.
pub(crate) fn run_stage(
    db: &Database,
    specs: &[Spec],
    space: SearchSpace,
    jobs: usize,
    label: &str,
    start: Instant,
    progress: &mut dyn Write,
) -> Result<Vec<Synthesizer>, String> {
    let jobs = jobs.clamp(1, specs.len().max(1));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Synthesizer> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let mut synth = Synthesizer::with_database(db.clone());
                synth.set_search_space(space);
                let done = &done;
                scope.spawn(move || {
                    for spec in specs.iter().skip(j).step_by(jobs) {
                        // Unsatisfiable Specs are answers too; the database records them.
                        let _ = synth.optimal_cost(spec);
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    synth
                })
            })
            .collect();
        while handles.iter().any(|h| !h.is_finished()) {
            let n = done.load(std::sync::atomic::Ordering::Relaxed);
            let _ = write!(
                progress,
                "\r{label}: {} {n}/{} Specs, {:.0?}",
                bar(n, specs.len()),
                specs.len(),
                start.elapsed()
            );
            let _ = progress.flush();
            std::thread::sleep(Duration::from_millis(200));
        }
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a synthesis thread panicked".to_owned()))
            .collect::<Result<_, _>>()
    })?;
    Ok(results)
}

/// A 20-character progress bar.
fn bar(done: usize, total: usize) -> String {
    let filled = (done * 20).checked_div(total).unwrap_or(20);
    format!("[{}{}]", "#".repeat(filled), "-".repeat(20 - filled))
}
