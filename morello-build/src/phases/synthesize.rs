//! Phase 4: synthesis, target by target, against each target's database, saving what was
//! found even when a kernel fails.

use super::environment::Environment;
use super::plan::TargetPlan;
use super::scan::Scanned;
use crate::database;
use crate::diagnostic::{BuildError, Diagnostic, Diagnostics};
use crate::workers::{self, Mode};
use morello_core::imp::Impl;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What synthesis produced.
pub struct Synthesized {
    /// One implementation per kernel, in declaration order.
    pub implementations: Vec<Impl>,
    /// Time spent synthesizing.
    pub time: Duration,
    /// Specs searched (not answered by the database).
    pub specs_searched: u64,
    /// Kernels the database did not answer whole.
    pub kernels_searched: usize,
}

/// Synthesizes every plan.
pub fn synthesize(
    scanned: &Scanned,
    plans: BTreeMap<&'static str, TargetPlan>,
    env: &Environment,
) -> Result<Synthesized, BuildError> {
    let mut problems = Diagnostics::default();
    let mut implementations: Vec<Option<Impl>> = vec![None; scanned.kernels.len()];
    let (mut time, mut specs_searched, mut kernels_searched) = (Duration::ZERO, 0, 0);
    let threads = workers::thread_budget();
    for (name, plan) in plans {
        let path = database::path(&env.db_dir, plan.target, env.search);
        if env.offline {
            // A committed database is an input of the build.
            println!("cargo::rerun-if-changed={}", path.display());
        }
        let start = Instant::now();
        // Offline, nothing is searched and nothing is saved.
        let checkpoint = (!env.offline).then_some(workers::Checkpoint {
            path: &path,
            every: workers::CHECKPOINT_EVERY,
            verbose: env.verbose,
        });
        // Each kernel is reported as it finishes: a first build can search for hours.
        let labels: Vec<String> = plan
            .kernels
            .iter()
            .map(|&i| format!("{}: {}", scanned.kernels[i].decl.name, scanned.kernels[i].decl.spec))
            .collect();
        let report_kernel = |solved: &workers::Solved| {
            if env.verbose {
                let joined = match solved.assists {
                    0 => String::new(),
                    n => format!(", joined {n} time(s) by idle workers"),
                };
                eprintln!(
                    "morello: {} ({} Specs searched, {} memo hits{joined}) in {:.2?}",
                    labels[solved.index], solved.searched, solved.memo_hits, solved.elapsed
                );
            }
        };
        let done = workers::synthesize(
            plan.jobs,
            database::open(&path, plan.target),
            Mode { offline: env.offline, search: env.search },
            threads,
            checkpoint,
            &report_kernel,
        );
        time += start.elapsed();
        let searched: u64 = done.solved.iter().map(|s| s.searched).sum();
        kernels_searched += done.solved.iter().filter(|s| s.searched > 0).count();
        for solved in done.solved {
            let index = plan.kernels[solved.index];
            let kernel = &scanned.kernels[index];
            match solved.result {
                Ok(imp) => implementations[index] = Some(imp),
                Err(e) => {
                    scanned.report(kernel, &kernel.decl.synthesis_error(e), &mut problems);
                    if env.offline {
                        problems.push(Diagnostic::Help(format!(
                            "{} is set, so morello only reads {}; build once without it (or run `morello-db \
                             precompute`) to add the missing implementations",
                            database::OFFLINE_ENV,
                            path.display()
                        )));
                    }
                }
            }
        }
        // What was found is kept even if another kernel failed.
        if searched > 0 {
            specs_searched += searched;
            let mut db = done.database;
            database::save(&mut db, &path).map_err(BuildError::build)?;
            if env.verbose {
                eprintln!(
                    "morello: saved {searched} newly searched Specs for {name} ({} checkpoint(s) saved while \
                     searching)",
                    done.checkpoints_while_searching
                );
            }
        }
    }
    problems.finish(())?;
    let implementations =
        implementations.into_iter().map(|imp| imp.expect("every kernel without an error has an implementation"));
    Ok(Synthesized { implementations: implementations.collect(), time, specs_searched, kernels_searched })
}
