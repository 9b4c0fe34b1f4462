//! `morello-db`: fill and inspect Morello synthesis databases.
//!
//! ```text
//! morello-db precompute --target avx512 --matmul 64 [--dtype f32] [--space fast] [--jobs 2] [--db FILE] [--shard I/N --out FILE [--stage NAME]]
//! morello-db stages --target avx512 --matmul 64 [--dtype f32] [--space fast] [--db FILE]
//! morello-db merge --target avx512 [--space fast] [--db FILE] SHARD_FILE...
//! morello-db compare --target avx512 [--space fast] [--matmul 64 [--dtype f32]] --db FILE OTHER_FILE
//! morello-db synthesize --target avx512 --spec "Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL), serial)" [--deadline SECS] [--slack PERCENT] [--space SPACE] [--threads N] [--schedule "<steps>"] [--db FILE] [--emit-c FILE] [--explain FILE] [--profile N]
//! morello-db stats --target avx512 [--slack PERCENT] [--space SPACE] [--db FILE]
//! morello-db fuzz [--cases N] [--seed S] [--target avx2] [--sanitize] [--batch N] [--max-specs N] [--no-reduce] [--compile-only]
//! morello-db bench [--target avx2] [--space fast] [--threads N] [--limit SECS] [--exact-limit SECS] [--only TEXT]
//! ```
//!
//! `bench` is the synthesis benchmark: every Spec of `morello_core::suite` searched cold, each
//! in a fresh process with an empty database, in the search space build scripts use by default
//! (`--space` for another), then one table of time, Specs searched, peak memory, cost, the gap
//! to the exact optimum (with `--exact-limit SECS`: the full space searched too, for at most
//! that long), and the time to answer the query again from the saved database.
//!
//! `fuzz` checks random Specs and partial schedules end to end (synthesis, C from gcc and
//! clang, the reference evaluator; see `morello_core::fuzz`), prints every failure reduced and
//! as a ready regression test, then `N cases, M mismatches` and the cases per family. It exits
//! with failure when any case failed.
//!
//! `precompute` fills a database with a family of Matmuls, bottom-up in stages (see
//! `morello_build::precompute`). To spread a stage over many machines, run `precompute --shard
//! I/N --out FILE` for every `I` in `0..N` (each reads `--db` and writes only what it solved to
//! its own `FILE`; with `--stage NAME` it checks that `NAME` is the stage it solves), then
//! `merge` the `N` files into `--db`, which records the stage as done; `stages` prints the
//! stages still to do, one per line. `compare` checks that two databases give the same costs
//! where both answer (e.g. one filled in shards and one by a single process) and, with
//! `--matmul`, that both answer every Spec of the family; it fails if not. `deploy/` drives this loop with Ray, a Kubernetes Indexed
//! Job or a Slurm array.
//!
//! `synthesize` searches one Spec into the database, for shapes whose search is too slow for a
//! build script: a later build (or `MORELLO_OFFLINE=1` build) against the same file finds it.
//! With `--deadline`, everything solved before the deadline is saved, so a later run resumes.
//! The search uses every core unless `--threads N` says otherwise; the result is the same.
//! With `--slack P`, the search may return implementations up to `P` percent above the
//! optimum, much faster for large Specs; they go to the file build scripts use with
//! `MORELLO_SLACK=P`. Like build scripts, `morello-db` searches the fast search space by
//! default (`morello_core::search::SearchSpace::Fast`); `--space full` searches the paper's
//! whole space for exact optima (the file build scripts use with `MORELLO_SEARCH_SPACE=full`),
//! and `--space fixed-output-layouts` leaves out only output relayouts in global memory. With
//! `--emit-c FILE`, the kernel's C (exported
//! as `kernel`, with its implementation in the opening comment) is also written to `FILE`, to
//! read or to time outside a crate. With `--explain FILE` (`-` for standard output), the
//! implementation is written as a tree with the cost the model gives every node and its share
//! of the whole (`morello_core::cost::cost_tree`): where the cost goes, to compare schedules.
//! With `--schedule "<steps>"` (the `schedule!` language, e.g. `"tile([1, 256, 256, 256]);
//! synthesize_all;"`), the Spec is implemented by those steps and the search implements only
//! the Specs they leave, whether or not the steps end with `synthesize_all`. The cost, C and
//! tree are then the schedule's, to set what the model makes of a hand plan beside the search's
//! optimum (the same command without `--schedule`). With `--profile N`, it also prints where
//! the search went: the `N` most searched kinds of Spec (primitive, operand levels, volume)
//! with their searches, the share that exceeded their budget, the distinct Specs among them and
//! how close the static lower bound came to the optimum where one was found
//! (`morello_core::search::ProfileSummary`), for work on the search itself.
//!
//! Without `--db`, the file is `<dir>/<target>.fast.morellodb` (`<target>.morellodb` for the
//! full space; `<target>.slack<P>.fast.morellodb` with slack, and so on for the other spaces)
//! where `<dir>` is `$MORELLO_DB_DIR` or `target/morello` — the file build scripts of this
//! workspace use.

use morello_build::database;
use morello_build::precompute::{MatmulFamily, pending_stages, precompute};
use morello_build::shard::{Shard, precompute_shard};
use morello_core::db::Database;
use morello_core::db::file::{self, LoadReport};
use morello_core::dtype::Dtype;
use morello_core::search::{ResultsView, SearchMode, SearchSpace, Slack, Synthesizer};
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::{Target, TargetId};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  morello-db precompute --target <avx2|avx512|portable> --matmul <max size> [--dtype f32] [--space <fast|full|fixed-output-layouts>] [--jobs N] [--db FILE] [--shard I/N --out FILE [--stage NAME]]
  morello-db stages --target <avx2|avx512|portable> --matmul <max size> [--dtype f32] [--space <fast|full|fixed-output-layouts>] [--db FILE]
  morello-db merge --target <avx2|avx512|portable> [--space <fast|full|fixed-output-layouts>] [--db FILE] SHARD_FILE...
  morello-db compare --target <avx2|avx512|portable> [--space <fast|full|fixed-output-layouts>] [--matmul <max size> [--dtype f32]] --db FILE OTHER_FILE
  morello-db synthesize --target <avx2|avx512|portable> --spec \"<Spec>\" [--deadline SECS] [--slack PERCENT] [--space <fast|full|fixed-output-layouts>] [--threads N] [--schedule \"<steps>\"] [--db FILE] [--emit-c FILE] [--explain FILE|-] [--profile N]
  morello-db stats --target <avx2|avx512|portable> [--slack PERCENT] [--space <fast|full|fixed-output-layouts>] [--db FILE]
  morello-db fuzz [--cases N] [--seed S] [--target <avx2|avx512|portable>] [--sanitize] [--batch N] [--max-specs N] [--no-reduce] [--compile-only]
  morello-db bench [--target <avx2|avx512>] [--space <fast|full|fixed-output-layouts>] [--threads N] [--limit SECS] [--exact-limit SECS] [--only TEXT]";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("morello-db: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let (command, options) = args.split_first().ok_or_else(|| USAGE.to_owned())?;
    if command == "bench" {
        return morello_build::bench_command::run(options);
    }
    if command == "bench-one" {
        return morello_build::bench_command::run_one(options);
    }
    if command == "fuzz" {
        return match morello_build::fuzz_command::run(options)? {
            true => Ok(()),
            false => Err("some cases failed (see above)".to_owned()),
        };
    }
    let (options, files) = parse_options(options, ["merge", "compare"].contains(&command.as_str()))?;
    let allowed: &[&str] = match command.as_str() {
        "precompute" => &["target", "matmul", "dtype", "space", "jobs", "db", "shard", "out", "stage"],
        "stages" => &["target", "matmul", "dtype", "space", "db"],
        "merge" => &["target", "space", "db"],
        "compare" => &["target", "space", "db", "matmul", "dtype"],
        "synthesize" => &[
            "target", "spec", "deadline", "slack", "space", "threads", "schedule", "db", "emit-c", "explain", "profile",
        ],
        "stats" => &["target", "slack", "space", "db"],
        other => return Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    if let Some(name) = options.keys().find(|name| !allowed.contains(&name.as_str())) {
        return Err(format!("`{command}` takes no option `--{name}`\n{USAGE}"));
    }
    let target = target(&options)?;
    let slack: Slack = match options.get("slack") {
        Some(text) => text.parse().map_err(|e| format!("--slack: {e}"))?,
        None => Slack::EXACT,
    };
    let space: SearchSpace = match options.get("space") {
        Some(text) => text.parse().map_err(|e| format!("--space: {e}"))?,
        None => SearchSpace::default(),
    };
    let mode = SearchMode { slack, space };
    if let Some(file) = options.get("db") {
        check_mode_in_name(Path::new(file), target, mode)?;
    }
    let path = options.get("db").map(PathBuf::from).unwrap_or_else(|| {
        let dir = database::directory_from_env().unwrap_or_else(|| Path::new("target").join(database::SUBDIRECTORY));
        database::path(&dir, target, mode)
    });
    match command.as_str() {
        "precompute" => {
            let family = matmul_family(&options)?;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let jobs = number(&options, "jobs")?.map_or(cores, |j| j as usize);
            if let Some(shard) = options.get("shard") {
                return precompute_one_shard(&options, shard, family, target, mode, &path, jobs);
            }
            if let Some(name) = ["out", "stage"].into_iter().find(|name| options.contains_key(*name)) {
                return Err(format!("--{name} goes with --shard I/N"));
            }
            eprintln!(
                "precomputing Matmuls up to {} ({}) for {} into {}",
                family.max,
                family.dtype.name(),
                target.name,
                path.display()
            );
            let db = precompute(family, target, mode.space, &path, jobs, &mut std::io::stderr())?;
            print_stats(&db, &path);
            Ok(())
        }
        "stages" => {
            let family = matmul_family(&options)?;
            let (db, report) = file::load(&path, target);
            if let LoadReport::Rebuilt(reason) = report {
                return Err(reason.to_string());
            }
            for (_, name) in pending_stages(&family, &db) {
                println!("{name}");
            }
            Ok(())
        }
        "merge" => merge_shards(&files, target, mode, &path),
        "compare" => compare(&options, &files, target, mode, &path),
        "synthesize" => synthesize(&options, target, mode, &path),
        "stats" => {
            let (db, report) = file::load(&path, target);
            match report {
                LoadReport::Loaded => {}
                LoadReport::Missing => return Err(format!("{} does not exist", path.display())),
                LoadReport::Rebuilt(reason) => return Err(reason.to_string()),
            }
            print_stats(&db, &path);
            Ok(())
        }
        _ => unreachable!("commands are checked above"),
    }
}

/// `morello-db synthesize`: one Spec into the database at `path`.
fn synthesize(
    options: &BTreeMap<String, String>,
    target: &'static Target,
    mode: SearchMode,
    path: &Path,
) -> Result<(), String> {
    let text = options.get("spec").ok_or_else(|| format!("synthesize needs --spec \"<Spec>\"\n{USAGE}"))?;
    let spec = Spec::parse_for(text, target).map_err(|e| format!("--spec: {e}"))?;
    let scheduled = match options.get("schedule") {
        Some(steps) => Some(run_schedule(spec.clone(), steps, target).map_err(|e| format!("--schedule: {e}"))?.0),
        None => None,
    };
    let (db, report) = file::load(path, target);
    if let LoadReport::Rebuilt(reason) = report {
        eprintln!("ignoring {}: {reason}; it will be rebuilt", path.display());
    }
    let mut synth = Synthesizer::with_database(db);
    synth.set_search_mode(mode);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match number(options, "threads")? {
        Some(0) => return Err("--threads 0: a search needs at least one thread".to_owned()),
        threads => synth.set_threads(threads.map_or(cores, |t| t as usize)),
    }
    if let Some(secs) = number(options, "deadline")? {
        synth.set_deadline(Instant::now() + Duration::from_secs(u64::from(secs)));
    }
    let profile_rows = number(options, "profile")?;
    if profile_rows.is_some() {
        synth.enable_profile();
    }
    let kind = if mode.is_exact() { String::new() } else { format!(" ({mode})") };
    eprintln!(
        "synthesizing {spec}{kind} for {} on {} thread(s) into {} ...",
        target.name,
        synth.threads(),
        path.display()
    );
    let how = if scheduled.is_some() { "scheduled" } else { "synthesized" };
    let progress = synth.results_view();
    let result = with_heartbeat(&progress, || match scheduled {
        Some(partial) => partial.synthesize_all(&mut synth).map_err(|e| e.to_string()),
        None => synth.synthesize(&spec).map_err(|e| e.to_string()),
    });
    let stats = synth.stats();
    eprintln!(
        "searched {} Specs ({} answered by the database) in {:.1} s",
        stats.specs_solved,
        stats.db_hits,
        stats.elapsed.as_secs_f64()
    );
    if let (Some(rows), Some(profile)) = (profile_rows, synth.profile()) {
        eprintln!(
            "where the search went, by kind of Spec (the {rows} most searched):\n{}",
            profile.table(rows as usize)
        );
    }
    let mut db = synth.into_database();
    database::save(&mut db, path)?;
    let imp = result
        .map_err(|e| format!("{e}; what was solved is saved in {}, and a rerun resumes from it", path.display()))?;
    let cost = morello_core::cost::impl_cost(&imp, target).expect("a synthesized implementation is complete").main;
    println!("{how} {spec}: cost {cost}");
    if let Some(c_file) = options.get("emit-c") {
        let kernel = morello_core::codegen::emit_c(&imp, EMITTED_SYMBOL, target).map_err(|e| e.to_string())?;
        std::fs::write(c_file, kernel.source).map_err(|e| format!("writing {c_file}: {e}"))?;
        println!("C of the kernel `{EMITTED_SYMBOL}` written to {c_file}");
    }
    if let Some(explain) = options.get("explain") {
        let tree = morello_core::cost::cost_tree(&imp, target).expect("a synthesized implementation is complete");
        if explain == "-" {
            print!("{tree}");
        } else {
            std::fs::write(explain, tree).map_err(|e| format!("writing {explain}: {e}"))?;
            println!("costs of the implementation's nodes written to {explain}");
        }
    }
    print_stats(&db, path);
    Ok(())
}

/// The exported name of the kernel `synthesize --emit-c` writes.
const EMITTED_SYMBOL: &str = "kernel";

/// Runs `work`, printing the elapsed time and the Specs `progress` has solved to stderr every
/// [`HEARTBEAT`] until it returns, so a long search shows how far it has got.
fn with_heartbeat<R>(progress: &ResultsView, work: impl FnOnce() -> R) -> R {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(HEARTBEAT) {
                let (solved, secs) = (progress.entries(), start.elapsed().as_secs());
                eprintln!("  still searching after {secs} s: {solved} Specs answered so far");
            }
        });
        let result = work();
        drop(done);
        result
    })
}

/// How often [`with_heartbeat`] reports.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// Results found with slack or in a narrowed space are not optima: a file named for one
/// search mode (see [`database::path`]) must not receive another's.
fn check_mode_in_name(file: &Path, target: &Target, mode: SearchMode) -> Result<(), String> {
    if database::named_for(file, mode) {
        return Ok(());
    }
    let example = database::path(Path::new(""), target, mode);
    Err(format!(
        "--db {}: {mode} are kept apart from others; name the file `{}` (in any directory)",
        file.display(),
        example.display()
    ))
}

/// `--name value` pairs, then (where `files` allows) the arguments after them.
fn parse_options(args: &[String], files: bool) -> Result<(BTreeMap<String, String>, Vec<String>), String> {
    let mut out = BTreeMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let Some(name) = flag.strip_prefix("--") else {
            if files {
                let rest = std::iter::once(flag).chain(it).cloned().collect();
                return Ok((out, rest));
            }
            return Err(format!("unexpected argument `{flag}`\n{USAGE}"));
        };
        let value = it.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        out.insert(name.to_owned(), value.clone());
    }
    Ok((out, Vec::new()))
}

/// The Matmul family `--matmul` and `--dtype` name.
fn matmul_family(options: &BTreeMap<String, String>) -> Result<MatmulFamily, String> {
    let max = number(options, "matmul")?.ok_or("--matmul <max size> is required: the family's largest dimension")?;
    if !max.is_power_of_two() {
        return Err(format!("--matmul {max} is not a power of two"));
    }
    let dtype = match options.get("dtype") {
        None => Dtype::F32,
        Some(name) => Dtype::from_name(name).ok_or_else(|| format!("unknown dtype `{name}`"))?,
    };
    Ok(MatmulFamily { max, dtype })
}

/// `morello-db precompute --shard I/N --out FILE`: one shard of the next stage.
fn precompute_one_shard(
    options: &BTreeMap<String, String>,
    shard: &str,
    family: MatmulFamily,
    target: &'static Target,
    mode: SearchMode,
    base: &Path,
    jobs: usize,
) -> Result<(), String> {
    let shard: Shard = shard.parse().map_err(|e| format!("--shard: {e}"))?;
    let out = options.get("out").ok_or("--shard needs --out FILE, where the shard's answers go")?;
    let out = Path::new(out);
    check_mode_in_name(out, target, mode)?;
    let expected = options.get("stage").map(String::as_str);
    match precompute_shard(family, target, mode.space, base, shard, expected, out, jobs, &mut std::io::stderr())? {
        Some(stage) => println!("{stage}"),
        None => println!("every stage is done"),
    }
    Ok(())
}

/// `morello-db compare`: whether the database at `path` and the one file in `files` give the
/// same costs where both answer, and (with `--matmul`) both answer every Spec of the family.
fn compare(
    options: &BTreeMap<String, String>,
    files: &[String],
    target: &'static Target,
    mode: SearchMode,
    path: &Path,
) -> Result<(), String> {
    let [other] = files else {
        return Err(format!("compare needs one file to compare --db with\n{USAGE}"));
    };
    let [mine, theirs] = [path, Path::new(other)].map(|file| -> Result<Database, String> {
        check_mode_in_name(file, target, mode)?;
        match file::load(file, target) {
            (db, LoadReport::Loaded) => Ok(db),
            (_, LoadReport::Missing) => Err(format!("{} does not exist", file.display())),
            (_, LoadReport::Rebuilt(reason)) => Err(format!("{}: {reason}", file.display())),
        }
    });
    let (mine, theirs) = (mine?, theirs?);
    let c = mine.compare(&theirs);
    println!(
        "{} points compared: {} same, {} equally good decisions, {} different costs, {} answered by one only",
        c.points, c.same, c.ties, c.different, c.missing
    );
    if !c.agrees() {
        return Err(format!("{} and {other} give different answers", path.display()));
    }
    if options.contains_key("matmul") {
        let family = matmul_family(options)?;
        let specs: Vec<Spec> = family.stages().flat_map(|(log2, _)| family.stage(log2, target)).collect();
        for spec in &specs {
            let [a, b] = [&mine, &theirs].map(|db| db.get(spec).map(|e| e.decision.map(|d| d.cost.main)));
            if a.is_none() || a != b {
                return Err(format!("{spec}: {} answers {a:?}, {other} {b:?}", path.display()));
            }
        }
        println!("all {} Specs of the family answered by both, at the same cost", specs.len());
    }
    Ok(())
}

/// `morello-db merge`: shard files into the database at `path`.
fn merge_shards(files: &[String], target: &'static Target, mode: SearchMode, path: &Path) -> Result<(), String> {
    if files.is_empty() {
        return Err(format!("merge needs the shard files to merge\n{USAGE}"));
    }
    let mut shards = Vec::new();
    for name in files {
        check_mode_in_name(Path::new(name), target, mode)?;
        let (db, report) = file::load(Path::new(name), target);
        match report {
            LoadReport::Loaded => shards.push((name.clone(), db)),
            LoadReport::Missing => return Err(format!("{name} does not exist")),
            LoadReport::Rebuilt(reason) => return Err(format!("{name}: {reason}")),
        }
    }
    let (mut db, report) = file::load(path, target);
    if let LoadReport::Rebuilt(reason) = report {
        return Err(reason.to_string());
    }
    let completed = morello_build::shard::merge(&mut db, &shards)?;
    database::save(&mut db, path)?;
    eprintln!("merged {} shard file(s); stage(s) done: {}", files.len(), completed.join(", "));
    print_stats(&db, path);
    Ok(())
}

fn target(options: &BTreeMap<String, String>) -> Result<&'static Target, String> {
    let name = options.get("target").ok_or_else(|| format!("--target is required\n{USAGE}"))?;
    TargetId::from_name(name).map(TargetId::target).ok_or_else(|| format!("unknown target `{name}`"))
}

fn number(options: &BTreeMap<String, String>, name: &str) -> Result<Option<u32>, String> {
    options.get(name).map(|v| v.parse().map_err(|_| format!("--{name} {v} is not a number"))).transpose()
}

fn print_stats(db: &Database, path: &Path) {
    let s = db.stats();
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    println!("database            {}", path.display());
    println!("target              {}", db.target().name);
    println!("tables              {}", s.tables);
    println!("rectangles          {} ({} of them unsatisfiable)", s.rectangles, s.unsatisfiable_rectangles);
    println!("Specs covered       {}", s.specs);
    println!("values / rectangle  {:.1}", s.values_per_rectangle());
    println!("file size           {bytes} bytes");
    println!("bytes / Spec        {:.6}", if s.specs == 0 { 0.0 } else { bytes as f64 / s.specs as f64 });
    println!("completed stages    {}", if db.stages().is_empty() { "-".to_owned() } else { db.stages().join(", ") });
}
