//! Synthesis speed from an empty database and from a warm one (issue 5's figures).
//!
//! `cargo bench -p morello-core --bench synthesis` synthesizes the f32 Matmul 1×N×N×N (operands
//! row-major in global memory, serial) for the AVX-512 target, each N in a fresh process with
//! an empty database, and prints per N: the cold time, Specs searched, the process's peak
//! memory, the database's rectangles and values per rectangle, and the time to load the saved
//! database and answer the same query again.
//!
//! Each N runs under a deadline (`MORELLO_BENCH_LIMIT_SECS`, default: twice its target). A run
//! that reaches it stops, keeps what it had solved exactly, and is reported as unfinished;
//! its database figures then describe that partial database.
//! The search uses every core (`MORELLO_BENCH_THREADS` sets the number of threads; see
//! `Synthesizer::set_threads`). `MORELLO_BENCH_SIZES=4,16` chooses other sizes.
//! `MORELLO_BENCH_SLACKS=0,25` also runs each size with a bounded-suboptimal search (25% slack;
//! see `morello_core::search::Slack`), and `MORELLO_BENCH_SPACES=full,fixed-output-layouts` in a
//! narrowed search space (see `morello_core::search::SearchSpace`); each such run prints its
//! cost against the exact one's (slack 0 in the full space), when that ran first.

use morello_core::db::{Database, file};
use morello_core::search::{SearchMode, SearchSpace, Slack, Synthesizer};
use morello_core::spec::Spec;
use morello_core::suite::peak_resident_mib;
use morello_core::target::X86_AVX512;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "MORELLO_BENCH_CHILD";
const SLACK_ENV: &str = "MORELLO_BENCH_SLACK";
const SPACE_ENV: &str = "MORELLO_BENCH_SPACE";
const THREADS_ENV: &str = "MORELLO_BENCH_THREADS";

/// Sizes and their cold-synthesis targets.
const TARGETS: [(u32, u64); 3] = [(4, 1), (64, 30), (2048, 300)];

fn spec(n: u32) -> Spec {
    let text =
        format!("Matmul(1x{n}x{n}x{n}, (f32, GL, row_major), (f32, GL, row_major), (f32, GL, row_major), serial)");
    Spec::parse_for(&text, &X86_AVX512).unwrap().with_limits(X86_AVX512.max_limits())
}

/// One size, in this process: prints one `key=value` line for the parent.
fn child(n: u32, limit: Duration, variant: SearchMode, threads: usize) {
    let spec = spec(n);
    let mut synth = Synthesizer::with_database(Database::new(&X86_AVX512));
    synth.set_search_mode(variant);
    synth.set_threads(threads);
    synth.set_deadline(Instant::now() + limit);
    let start = Instant::now();
    let result = synth.synthesize(&spec);
    let cold = start.elapsed();
    let finished = result.is_ok();
    let cost = result.as_ref().ok().and_then(|imp| morello_core::cost::impl_cost(imp, &X86_AVX512)).map(|c| c.main);
    let searched = synth.stats().specs_solved;
    let mut db = synth.into_database();
    let stats = db.stats();
    let path = std::env::temp_dir().join(format!("morello-bench-{}-{n}.morellodb", std::process::id()));
    file::save(&mut db, &path).expect("saving the database");
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    drop(db);
    let peak = peak_resident_mib();

    let (mut warm_ms, mut warm_query_ms) = (f64::NAN, f64::NAN);
    if finished {
        let start = Instant::now();
        let (db, _) = file::load(&path, &X86_AVX512);
        let mut warm = Synthesizer::with_database(db);
        warm.set_search_mode(variant);
        let query = Instant::now();
        let imp = warm.synthesize(&spec).expect("the warm database answers");
        warm_query_ms = query.elapsed().as_secs_f64() * 1e3;
        warm_ms = start.elapsed().as_secs_f64() * 1e3;
        assert_eq!(warm.stats().specs_solved, 0, "the warm query searched");
        assert_eq!(morello_core::cost::impl_cost(&imp, &X86_AVX512).map(|c| c.main), cost);
    }
    let _ = std::fs::remove_file(&path);
    println!(
        "finished={finished} cold_s={:.3} cost={} searched={searched} peak_mib={peak:.0} tables={} rects={} \
         unsat_rects={} specs={} values_per_rect={:.1} bytes={bytes} warm_ms={warm_ms:.2} warm_query_ms={warm_query_ms:.2}",
        cold.as_secs_f64(),
        cost.map_or("-".to_owned(), |c| c.to_string()),
        stats.tables,
        stats.rectangles,
        stats.unsatisfiable_rectangles,
        stats.specs,
        stats.values_per_rectangle(),
    );
}

/// Threads per search: `MORELLO_BENCH_THREADS`, or every core.
fn threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .map(|s| s.parse().expect("MORELLO_BENCH_THREADS is a number"))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace().find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('='))).unwrap_or("?")
}

fn main() {
    if let Ok(n) = std::env::var(CHILD_ENV) {
        let limit = std::env::var("MORELLO_BENCH_LIMIT").ok().and_then(|s| s.parse().ok()).unwrap_or(60.0);
        let slack = std::env::var(SLACK_ENV).map_or(Slack::EXACT, |s| s.parse().expect("a slack"));
        let space = std::env::var(SPACE_ENV).map_or(SearchSpace::Full, |s| s.parse().expect("a search space"));
        child(n.parse().expect("a size"), Duration::from_secs_f64(limit), SearchMode { slack, space }, threads());
        return;
    }
    let sizes: Vec<u32> = std::env::var("MORELLO_BENCH_SIZES")
        .map(|s| s.split(',').map(|x| x.trim().parse().expect("sizes are numbers")).collect())
        .unwrap_or_else(|_| TARGETS.iter().map(|t| t.0).collect());
    let slacks: Vec<Slack> = std::env::var("MORELLO_BENCH_SLACKS")
        .map(|s| s.split(',').map(|x| x.parse().expect("slacks are percentages")).collect())
        .unwrap_or_else(|_| vec![Slack::EXACT]);
    let spaces: Vec<SearchSpace> = std::env::var("MORELLO_BENCH_SPACES")
        .map(|s| s.split(',').map(|x| x.parse().unwrap_or_else(|e| panic!("MORELLO_BENCH_SPACES: {e}"))).collect())
        .unwrap_or_else(|_| vec![SearchSpace::Full]);
    let exe = std::env::current_exe().expect("the benchmark's path");
    println!("Synthesis of f32 Matmul 1xNxNxN (GL, row-major, serial) for x86-avx512, one process per N,");
    println!("each from an empty database, searching on {} thread(s);", threads());
    println!("warm = load the saved database + the same query.\n");
    println!(
        "{:>5} {:>20} {:>5} {:>8} {:>9} {:>10} {:>8} {:>9} {:>8} {:>12} {:>10} {:>9} {:>10}",
        "N",
        "space",
        "slack",
        "target",
        "cold",
        "searched",
        "peak",
        "tables",
        "rects",
        "values/rect",
        "file",
        "warm",
        "warm query"
    );
    // Exact costs per N, for the other runs' gaps.
    let mut exact_costs: BTreeMap<u32, u64> = BTreeMap::new();
    for &space in &spaces {
        for &slack in &slacks {
            let variant = SearchMode { slack, space };
            for &n in &sizes {
                let cost = run_size(&exe, n, variant, exact_costs.get(&n).copied());
                if let (true, Some(cost)) = (variant.is_exact(), cost) {
                    exact_costs.insert(n, cost);
                }
            }
        }
    }
}

/// Runs size `n` searching as `variant` says in a child process and prints its row, with the
/// gap to the exact search's cost `exact` if known; returns the cost found.
fn run_size(exe: &std::path::Path, n: u32, variant: SearchMode, exact: Option<u64>) -> Option<u64> {
    let target = TARGETS.iter().find(|t| t.0 == n).map(|t| t.1);
    let default_limit = target.map_or(600.0, |t| 2.0 * t as f64);
    let limit = std::env::var("MORELLO_BENCH_LIMIT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(default_limit);
    let out = Command::new(exe)
        .env(CHILD_ENV, n.to_string())
        .env(SLACK_ENV, variant.slack.as_percent().to_string())
        .env(SPACE_ENV, variant.space.name())
        .env("MORELLO_BENCH_LIMIT", limit.to_string())
        .output()
        .expect("running a benchmark process");
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find(|l| l.starts_with("finished=")) else {
        println!("{n:>5}: the benchmark process failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    };
    let finished = field(line, "finished") == "true";
    let cold = format!("{}{} s", if finished { "" } else { ">" }, field(line, "cold_s"));
    // A run stopped at its deadline has no warm figures.
    let ms = |key: &str| if finished { format!("{} ms", field(line, key)) } else { "-".to_owned() };
    let cost: Option<u64> = field(line, "cost").parse().ok();
    let gap = match (exact, cost) {
        (Some(exact), Some(cost)) if !variant.is_exact() => {
            format!(", {:+.2}% against the exact search", (cost as f64 / exact as f64 - 1.0) * 100.0)
        }
        _ => String::new(),
    };
    println!(
        "{n:>5} {:>20} {:>5} {:>8} {:>9} {:>10} {:>6} MiB {:>9} {:>8} {:>12} {:>8} B {:>9} {:>10}{}",
        variant.space.name(),
        variant.slack.to_string(),
        target.map_or("-".to_owned(), |t| format!("{t} s")),
        cold,
        field(line, "searched"),
        field(line, "peak_mib"),
        field(line, "tables"),
        field(line, "rects"),
        field(line, "values_per_rect"),
        field(line, "bytes"),
        ms("warm_ms"),
        ms("warm_query_ms"),
        if finished {
            format!("  (cost {}{gap})", field(line, "cost"))
        } else {
            format!("  (stopped at the {limit:.0} s deadline; partial database)")
        }
    );
    cost
}
