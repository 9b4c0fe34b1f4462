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
//! few seconds says on stderr how far it has got (shown live by `cargo build -vv`), and one
//! over ten seconds ends with a Cargo warning saying what it cost.
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
pub mod fuzz_command;
pub mod precompute;
mod report;
mod scan;
pub mod shard;
mod workers;

pub use morello_core::search::SearchSpace;

use morello_core::search::SearchMode;

use morello_core::codegen::emit_c;
use morello_core::imp::Impl;
use morello_core::job::SynthesisJob;
use morello_core::symbol::build_marker_env;
use morello_core::syntax::KernelDecl;
use morello_core::target::Target;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use workers::Mode;

/// Synthesis taking longer than this prints a warning with advice.
const SLOW_SYNTHESIS: Duration = Duration::from_secs(10);

/// Configures which files' kernels to compile.
#[derive(Clone, Debug, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    space: SearchSpace,
}

/// Why the kernels could not be built: a complete, human-readable report.
#[derive(Clone, Debug)]
pub struct BuildError {
    report: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for BuildError {}

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

    /// Like [`Build::compile`], but returns the report instead of exiting.
    pub fn try_compile(&mut self, lib_name: &str) -> Result<BuildOutput, BuildError> {
        let env = |name: &str| {
            std::env::var(name).map_err(|_| BuildError {
                report: format!("error: morello-build must run from a build script (`{name}` is not set)"),
            })
        };
        let out_dir = PathBuf::from(env("OUT_DIR")?);
        let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
        let package = env("CARGO_PKG_NAME")?;
        let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        println!("cargo::rerun-if-env-changed=MORELLO_VERBOSE");
        println!("cargo::rerun-if-env-changed={}", database::DB_DIR_ENV);
        println!("cargo::rerun-if-env-changed={}", database::OFFLINE_ENV);
        println!("cargo::rerun-if-env-changed={}", database::SLACK_ENV);
        println!("cargo::rerun-if-env-changed={}", database::SEARCH_SPACE_ENV);
        let verbose = std::env::var_os("MORELLO_VERBOSE").is_some();
        let offline = database::offline();
        let search = database::search_mode(self.space).map_err(|report| BuildError { report })?;
        let db_dir = database::directory(&out_dir);

        let mut report = String::new();
        let mut kernels: Vec<KernelDecl> = Vec::new();
        let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
        for file in &self.files {
            println!("cargo::rerun-if-changed={}", file.display());
            let path = manifest_dir.join(file);
            let source = std::fs::read_to_string(&path).map_err(|e| BuildError {
                report: format!(
                    "error: morello: cannot read {}: {e}; check the path given to `Build::file`",
                    file.display()
                ),
            })?;
            match scan::find_kernels(&source) {
                Ok(found) => {
                    for decl in found {
                        let name = decl.plain_name();
                        // Case-insensitive: each kernel also defines a `NAME_SPEC` constant.
                        if let Some(previous) = origin.insert(name.to_uppercase(), file.clone()) {
                            let at = decl.name.span().start();
                            report += &format!(
                                "error: {}:{}:{}: a kernel named `{name}` is already declared in {}; kernel names must be unique in a crate\n",
                                file.display(),
                                at.line,
                                at.column + 1,
                                previous.display()
                            );
                        }
                        kernels.push(decl);
                    }
                }
                Err(e) => report += &report::render(file, &source, &e),
            }
        }
        if !report.is_empty() {
            return Err(BuildError { report });
        }
        if !kernels.is_empty() && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "msvc") {
            return Err(BuildError {
                report: "error: morello: the generated C uses GNU vector extensions, so it needs gcc or clang; \
                         MSVC targets are not supported (use a -gnu target)"
                    .to_owned(),
            });
        }
        for decl in &kernels {
            if let Some(needed) = decl.target.arch
                && needed != arch
            {
                let file = &origin[&decl.plain_name().to_uppercase()];
                let at = decl.name.span().start();
                report += &format!(
                    "error: {}:{}:{}: kernel `{}` targets {} (an {needed} target), but this crate is being built for \
                     `{arch}`; use `#[target(portable)]` for scalar C that builds anywhere\n",
                    file.display(),
                    at.line,
                    at.column + 1,
                    decl.plain_name(),
                    decl.target.name,
                );
            }
        }
        if !report.is_empty() {
            return Err(BuildError { report });
        }

        let c_dir = out_dir.join("morello");
        std::fs::create_dir_all(&c_dir)
            .map_err(|e| BuildError { report: format!("error: morello: cannot create {}: {e}", c_dir.display()) })?;
        let mut output = BuildOutput {
            kernels: Vec::new(),
            c_files: Vec::new(),
            synthesis_time: Duration::ZERO,
            specs_searched: 0,
            kernels_searched: 0,
        };
        // Schedules first (their errors need no search), grouped by target.
        let mut jobs: BTreeMap<&'static str, (&'static Target, Vec<usize>, Vec<SynthesisJob>)> = BTreeMap::new();
        for (index, decl) in kernels.iter().enumerate() {
            match decl.synthesis_job() {
                Ok(job) => {
                    let entry = jobs.entry(decl.target.name).or_insert_with(|| (decl.target, Vec::new(), Vec::new()));
                    entry.1.push(index);
                    entry.2.push(job);
                }
                Err(e) => report += &render_kernel_error(&origin, &manifest_dir, decl, &e),
            }
        }
        if !report.is_empty() {
            return Err(BuildError { report });
        }
        let threads = workers::thread_budget();
        let mut implementations: Vec<Option<Impl>> = vec![None; kernels.len()];
        for (name, (target, indices, target_jobs)) in jobs {
            let path = database::path(&db_dir, target, search);
            if offline {
                // A committed database is an input of the build.
                println!("cargo::rerun-if-changed={}", path.display());
            }
            let start = Instant::now();
            // Offline, nothing is searched and nothing is saved.
            let checkpoint =
                (!offline).then_some(workers::Checkpoint { path: &path, every: workers::CHECKPOINT_EVERY, verbose });
            // Each kernel is reported as it finishes: a first build can search for hours.
            let labels: Vec<String> =
                indices.iter().map(|&i| format!("{}: {}", kernels[i].name, kernels[i].spec)).collect();
            let report_kernel = |solved: &workers::Solved| {
                if verbose {
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
                target_jobs,
                database::open(&path, target),
                Mode { offline, search },
                threads,
                checkpoint,
                &report_kernel,
            );
            output.synthesis_time += start.elapsed();
            let searched: u64 = done.solved.iter().map(|s| s.searched).sum();
            output.kernels_searched += done.solved.iter().filter(|s| s.searched > 0).count();
            for solved in done.solved {
                let decl = &kernels[indices[solved.index]];
                match solved.result {
                    Ok(imp) => implementations[indices[solved.index]] = Some(imp),
                    Err(e) => {
                        report += &render_kernel_error(&origin, &manifest_dir, decl, &decl.synthesis_error(e));
                        if offline {
                            report += &format!(
                                "help: {} is set, so morello only reads {}; build once without it (or run \
                                 `morello-db precompute`) to add the missing implementations\n",
                                database::OFFLINE_ENV,
                                path.display()
                            );
                        }
                    }
                }
            }
            // What was found is kept even if another kernel failed.
            if searched > 0 {
                output.specs_searched += searched;
                let mut db = done.database;
                database::save(&mut db, &path).map_err(|report| BuildError { report })?;
                if verbose {
                    eprintln!(
                        "morello: saved {searched} newly searched Specs for {name} ({} checkpoint(s) saved while \
                         searching)",
                        done.checkpoints_while_searching
                    );
                }
            }
        }
        if !report.is_empty() {
            return Err(BuildError { report });
        }
        let mut per_target: BTreeMap<&'static str, (&'static Target, Vec<PathBuf>)> = BTreeMap::new();
        for (decl, imp) in kernels.iter().zip(implementations) {
            let imp = imp.expect("every kernel without an error has an implementation");
            let symbol = decl.symbol(&package);
            let kernel = emit_c(&imp, &symbol, decl.target)
                .map_err(|e| BuildError { report: format!("error: morello: {e}") })?;
            let path = c_dir.join(format!("{symbol}.c"));
            write_if_changed(&path, &kernel.source)?;
            output.c_files.push(path.clone());
            output.kernels.push((decl.plain_name(), symbol));
            per_target.entry(decl.target.short_name).or_insert_with(|| (decl.target, Vec::new())).1.push(path);
        }
        if output.synthesis_time > SLOW_SYNTHESIS {
            println!(
                "cargo::warning=morello: searching {} of {} kernel(s) took {:.1?} ({} Specs searched); the \
                 results are saved in {} for later builds.{}{}",
                output.kernels_searched,
                kernels.len(),
                output.synthesis_time,
                output.specs_searched,
                db_dir.display(),
                profile_advice(morello_core::COMPILED_OPT_LEVEL),
                faster_search_advice(search)
            );
        }
        // One library per target: each is compiled with its own ISA flags only.
        for (short_name, (target, files)) in &per_target {
            let mut cc = cc::Build::new();
            cc.files(files).opt_level(3).flag("-std=gnu11");
            for flag in target.compiler_flags() {
                cc.flag(flag);
            }
            let name = format!("{lib_name}_{short_name}");
            cc.try_compile(&name).map_err(|e| BuildError {
                report: format!(
                    "error: morello: compiling the generated C in {} for {} failed: {e}\n\
                     (set CC_ENABLE_DEBUG_OUTPUT=1 to see the compiler invocation)",
                    c_dir.display(),
                    target.name
                ),
            })?;
        }
        for (_, symbol) in &output.kernels {
            println!("cargo::rustc-env={}=1", build_marker_env(symbol));
        }
        Ok(output)
    }
}

/// A kernel's error as a report naming its file, line and column.
fn render_kernel_error(
    origin: &BTreeMap<String, PathBuf>,
    manifest_dir: &Path,
    decl: &KernelDecl,
    error: &syn::Error,
) -> String {
    let file = &origin[&decl.plain_name().to_uppercase()];
    let source = std::fs::read_to_string(manifest_dir.join(file)).unwrap_or_default();
    report::render(file, &source, error)
}

/// Writes `contents` unless the file already holds exactly that, so unchanged kernels do not
/// trigger recompilation.
fn write_if_changed(path: &Path, contents: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|existing| existing == contents) {
        return Ok(());
    }
    std::fs::write(path, contents)
        .map_err(|e| BuildError { report: format!("error: morello: cannot write {}: {e}", path.display()) })
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
