//! Compile Morello kernels from `build.rs`.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     morello_build::Build::new().file("src/kernels.rs").compile("kernels");
//! }
//! ```
//!
//! [`Build::compile`] finds every `kernel!` in the named files (with the same parser the macro
//! uses), applies each kernel's schedule, synthesizes whatever is left, writes C into
//! `OUT_DIR/morello/`, compiles it with the [`cc`] crate and the target's ISA flags, and links it
//! into the crate. The macro and this helper derive each kernel's symbol independently and
//! identically; a kernel whose file is not listed here fails to compile with a message saying
//! so, instead of a link error.
//!
//! Synthesis runs inside the build script, which Cargo compiles at `opt-level = 0` unless the
//! workspace's root `Cargo.toml` says otherwise. Add this to it:
//!
//! ```toml
//! [profile.dev.build-override]
//! opt-level = 3
//! [profile.release.build-override]
//! opt-level = 3
//! ```
//!
//! Synthesis results persist in a database (paper §4.1), one file per target, so a kernel is
//! searched for once and later builds only read it back. A long synthesis saves as it goes:
//! every minute, what it has solved so far (kernels finished or not), so a build stopped
//! partway (Ctrl-C, a killed CI job) resumes where it was. A search that takes more than a
//! few seconds says how far it has got, every few seconds, on the terminal the build runs in
//! (and on stderr, shown by `cargo build -vv`); one over ten seconds ends with a note saying
//! what it cost, on the terminal once, or, without one, as a Cargo warning (which Cargo
//! replays on later builds, so it is kept for builds no one watches).
//!
//! * by default the database lives in `morello/` under Cargo's target directory, shared by
//!   every crate of the workspace (concurrent build scripts lock it only while saving);
//! * `MORELLO_DB_DIR=<dir>` points elsewhere: a team's shared database, or one committed to
//!   the repository;
//! * `MORELLO_OFFLINE=1` never synthesizes: every kernel must come from the database, or the
//!   build fails saying which Spec is missing and how to add it. With a committed database
//!   this works like sqlx's offline query data.
//! * `MORELLO_SLACK=<percent>` trades optimality for search time: kernels may cost up to that
//!   many percent more than the optimum (in the cost model), and large Specs are searched
//!   several times faster. Such results live in a file of their own,
//!   `<target>.slack<percent>.morellodb`, never mixed with optima.
//! * Kernels are searched in the fast search space ([`SearchSpace::Fast`]): the paper's space
//!   without the relayouts no kernel gains from (of outputs; into strips narrower than a
//!   vector; reorderings beyond a transpose; transposes into L1 of rows that hold a vector).
//!   It finds most suite kernels' optima and is many times faster; `morello-db bench` measures
//!   both. Its results live in `<target>.fast.morellodb`.
//!   `MORELLO_SEARCH_SPACE=full` (or [`Build::search_space`] for one build) searches the
//!   paper's whole space for exact optima instead (`<target>.morellodb`);
//!   `MORELLO_SEARCH_SPACE=fixed-output-layouts` leaves out only output relayouts in global
//!   memory (`<target>.fixed-output-layouts.morellodb`).
//!
//! Kernels are synthesized on as many threads as Cargo's job count allows (`-j`, passed to
//! build scripts as `NUM_JOBS`), up to the machine's cores. Kernels that search for a Spec in
//! common (the same blocks under different schedules) share a thread, which solves it once.
//!
//! Environment: `MORELLO_VERBOSE=1` prints each kernel's synthesis statistics as it finishes,
//! and each checkpoint saved, to the build script's output (shown by `cargo build -vv`); `CC`
//! and `CFLAGS` are honored as by [`cc`].
//! The generated C stays in `OUT_DIR/morello/` for inspection.

#![warn(missing_docs)]
// The crate example is a whole `build.rs`, so its `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

pub mod bench_command;
mod cli;
pub mod database;
pub mod diagnostic;
pub mod fuzz_command;
mod phases;
pub mod precompute;
mod scan;
pub mod shard;
mod terminal;
mod workers;

pub use diagnostic::{BuildError, Diagnostic, SourceError};
pub use morello_core::search::SearchSpace;

use morello_core::search::SearchMode;
use phases::environment::Environment;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Synthesis taking longer than this prints a warning with advice.
const SLOW_SYNTHESIS: Duration = Duration::from_secs(10);

/// Configures which files' kernels to compile.
#[derive(Clone, Debug, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    space: SearchSpace,
}

/// What a successful build produced.
#[derive(Clone, Debug)]
pub struct BuildOutput {
    /// For each kernel, its name and exported symbol, in declaration order.
    pub kernels: Vec<(String, String)>,
    /// The generated C files.
    pub c_files: Vec<PathBuf>,
    /// Time spent synthesizing.
    pub synthesis_time: Duration,
    /// Specs searched (not answered by the database); 0 when every kernel came from it.
    pub specs_searched: u64,
    /// Kernels that needed a search: those the database did not answer whole.
    pub kernels_searched: usize,
}

impl Build {
    /// A build with no files.
    pub fn new() -> Self {
        Build::default()
    }

    /// Adds a Rust source file (relative to the crate root) whose `kernel!`s to compile.
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_owned());
        self
    }

    /// Searches for this build's kernels in `space` instead of the fast search space (see
    /// [`SearchSpace`]): `SearchSpace::Full` finds exact optima, searching many times longer.
    /// `MORELLO_SEARCH_SPACE`, when set, overrides this for every build. Results are kept in
    /// the database file of their space.
    pub fn search_space(&mut self, space: SearchSpace) -> &mut Self {
        self.space = space;
        self
    }

    /// Compiles the kernels into static libraries `lib_name_<target>` (one per target used,
    /// e.g. `kernels_avx2`) and links them. On failure, prints a report naming the file, line
    /// and fix, and exits the build script with an error.
    pub fn compile(&mut self, lib_name: &str) {
        if let Err(e) = self.try_compile(lib_name) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }

    /// Like [`Build::compile`], but returns the problems instead of exiting. The phases:
    /// read the environment, scan the files, plan (apply schedules), synthesize, emit C,
    /// compile, link.
    pub fn try_compile(&mut self, lib_name: &str) -> Result<BuildOutput, BuildError> {
        let env = Environment::read(self.space)?;
        let scanned = phases::scan::scan(&self.files, &env)?;
        let plans = phases::plan::plan(&scanned)?;
        let synthesized = phases::synthesize::synthesize(&scanned, plans, &env)?;
        let emitted = phases::emit::emit(&scanned, &synthesized.implementations, &env)?;
        if synthesized.time > SLOW_SYNTHESIS {
            terminal::note(&format!(
                "morello: searching {} of {} kernel(s) took {:.1?} ({} Specs searched); the results are saved in \
                 {} for later builds.{}{}",
                synthesized.kernels_searched,
                scanned.kernels.len(),
                synthesized.time,
                synthesized.specs_searched,
                env.db_dir.display(),
                profile_advice(morello_core::COMPILED_OPT_LEVEL),
                faster_search_advice(env.search)
            ));
        }
        phases::compile::compile(&emitted, lib_name)?;
        phases::compile::link(&emitted);
        Ok(BuildOutput {
            kernels: emitted.kernels,
            c_files: emitted.c_files,
            synthesis_time: synthesized.time,
            specs_searched: synthesized.specs_searched,
            kernels_searched: synthesized.kernels_searched,
        })
    }
}

/// What to change when this build script's copy of the compiler, compiled at `opt_level`, is
/// unoptimized (which makes synthesis many times slower), as a sentence; nothing when it is
/// optimized.
fn profile_advice(opt_level: &str) -> &'static str {
    match opt_level {
        "0" => {
            " The search ran unoptimized: set `[profile.dev.build-override] opt-level = 3` (and the same for \
             release) in the workspace's root Cargo.toml."
        }
        _ => "",
    }
}

/// What a slow build could opt into that `search` does not use yet, as a sentence or nothing.
fn faster_search_advice(search: SearchMode) -> String {
    let mut advice = Vec::new();
    if search.space != SearchSpace::Fast {
        advice.push(format!(
            "the default search space (`{}` unset, or `fast`) searches many times faster for kernels at \
             most a few percent above the optimum",
            database::SEARCH_SPACE_ENV
        ));
    }
    if search.slack.is_exact() {
        advice.push(format!(
            "`{}=10` searches several times faster for kernels at most 10% above the optimum",
            database::SLACK_ENV
        ));
    }
    if advice.is_empty() { String::new() } else { format!(" For large Specs, {}.", advice.join(", and ")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::search::Slack;

    #[test]
    fn the_slow_search_warning_blames_the_profile_only_when_the_search_was_unoptimized() {
        assert!(profile_advice("0").contains("opt-level = 3"));
        for optimized in ["1", "2", "3", "s", "z"] {
            assert_eq!(profile_advice(optimized), "", "opt-level {optimized}");
        }
    }

    #[test]
    fn the_slow_search_warning_suggests_only_what_the_build_does_not_use() {
        let exact = faster_search_advice(SearchMode::EXACT);
        assert!(exact.contains("default search space") && exact.contains("MORELLO_SLACK"), "{exact}");
        let default = faster_search_advice(SearchMode { slack: Slack::EXACT, space: SearchSpace::Fast });
        assert!(!default.contains("search space") && default.contains("MORELLO_SLACK"), "{default}");
        let both = SearchMode { slack: Slack::percent(10).unwrap(), space: SearchSpace::Fast };
        assert_eq!(faster_search_advice(both), "");
    }
}
