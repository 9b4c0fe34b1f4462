//! `morello-db bench`: the synthesis benchmark. Runs every Spec of the suite
//! ([`morello_core::suite`]) cold, each in a fresh process with an empty database, and prints
//! one table: time, Specs searched, peak memory, cost, and the gap to the exact optimum where
//! an exact search (the full search space) finishes within its own time limit.

use crate::cli::{number, target_id};
use morello_core::cost::impl_cost;
use morello_core::db::{Database, file};
use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::suite::{SuiteSpec, peak_resident_mib, suite};
use morello_core::target::TargetId;
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

/// The command's usage line.
pub const USAGE: &str = "morello-db bench [--target <avx2|avx512>] [--space <fast|full|fixed-output-layouts>] [--threads N] [--limit SECS] [--exact-limit SECS] [--only TEXT]";

/// What the benchmark runs.
#[derive(Clone, Debug, PartialEq)]
struct BenchOptions {
    target: TargetId,
    space: SearchSpace,
    threads: usize,
    /// Each search of `space` stops after this long.
    limit: Duration,
    /// Each exact search stops after this long (zero: no exact searches).
    exact_limit: Duration,
    /// Only Specs whose name contains this.
    only: Option<String>,
}

/// One search, as its process reports it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Measured {
    finished: bool,
    seconds: f64,
    specs: u64,
    peak_mib: f64,
    cost: Option<u64>,
    /// Loading the saved database and answering the same query again, in milliseconds.
    warm_ms: Option<f64>,
}

/// Runs `morello-db bench` with `args` (after the command's name): progress on standard error,
/// the table on standard output.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let specs: Vec<SuiteSpec> = suite()
        .into_iter()
        .filter(|s| options.only.as_ref().is_none_or(|only| s.name.contains(only.as_str())))
        .collect();
    if specs.is_empty() {
        return Err("no suite Spec matches --only".to_owned());
    }
    eprintln!(
        "synthesis benchmark: {} Specs for {}, {} search space, {} thread(s), each cold in its own process \
         (limit {} s; exact searches limited to {} s)",
        specs.len(),
        options.target.name(),
        options.space,
        options.threads,
        options.limit.as_secs(),
        options.exact_limit.as_secs()
    );
    let start = Instant::now();
    let mut rows = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let measured = measure(&options, s, options.space, options.limit)?;
        let exact = if options.space.is_full() {
            Some(measured.clone())
        } else if options.exact_limit.is_zero() {
            None
        } else {
            Some(measure(&options, s, SearchSpace::Full, options.exact_limit)?)
        };
        eprintln!("[{}/{}] {}: {}", i + 1, specs.len(), s.name, summary(&measured));
        rows.push((s.name, measured, exact));
    }
    print!("{}", render(&options, &rows, start.elapsed()));
    Ok(())
}

/// One line of progress.
fn summary(m: &Measured) -> String {
    match m.finished {
        true => format!("{:.2} s, {} Specs, {:.0} MiB", m.seconds, m.specs, m.peak_mib),
        false => format!("not finished in {:.0} s ({} Specs, {:.0} MiB)", m.seconds, m.specs, m.peak_mib),
    }
}

/// The table, in Markdown.
fn render(options: &BenchOptions, rows: &[(&str, Measured, Option<Measured>)], elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nsynthesis benchmark: {}, {} search space, {} thread(s), cold, empty database; on {}\n",
        options.target.name(),
        options.space,
        options.threads,
        cpu_name()
    );
    let _ = writeln!(out, "| Spec | time | Specs searched | peak memory | cost | exact cost | gap | warm query |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    let mut total = 0.0;
    for (name, m, exact) in rows {
        total += m.seconds;
        let time = if m.finished { format!("{:.2} s", m.seconds) } else { format!("> {:.0} s", m.seconds) };
        let cost = m.cost.map_or("–".to_owned(), |c| c.to_string());
        let (exact_cost, gap) = match (exact, m.cost) {
            (Some(e), Some(c)) if e.finished => match e.cost {
                Some(best) => (best.to_string(), format!("{:+.2}%", (c as f64 / best as f64 - 1.0) * 100.0)),
                None => ("none".to_owned(), "–".to_owned()),
            },
            (Some(e), _) if !e.finished => (format!("> {:.0} s", e.seconds), "unknown".to_owned()),
            _ => ("–".to_owned(), "–".to_owned()),
        };
        let warm = m.warm_ms.map_or("–".to_owned(), |ms| format!("{ms:.1} ms"));
        let _ = writeln!(
            out,
            "| {name} | {time} | {} | {:.0} MiB | {cost} | {exact_cost} | {gap} | {warm} |",
            m.specs, m.peak_mib
        );
    }
    let finished = rows.iter().filter(|(_, m, _)| m.finished).count();
    let _ = writeln!(
        out,
        "\n{finished} of {} finished; searches took {total:.1} s in all; the benchmark {:.1} s",
        rows.len(),
        elapsed.as_secs_f64()
    );
    out
}

/// Runs one search in a fresh process (`morello-db bench-one`), for its own peak memory.
fn measure(options: &BenchOptions, s: &SuiteSpec, space: SearchSpace, limit: Duration) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding morello-db: {e}"))?;
    let output = Command::new(exe)
        .args(["bench-one", "--target", options.target.name(), "--space", space.name()])
        .args(["--threads", &options.threads.to_string(), "--limit", &limit.as_secs().to_string()])
        .args(["--spec", &s.text])
        .output()
        .map_err(|e| format!("running a benchmark process: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{}: the benchmark process failed:\n{stdout}{}",
            s.name,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    parse_measured(&stdout).ok_or_else(|| format!("{}: unreadable benchmark output: {stdout}", s.name))
}

/// Reads the `key=value` line [`run_one`] prints.
fn parse_measured(text: &str) -> Option<Measured> {
    let line = text.lines().find(|l| l.starts_with("finished="))?;
    let mut m = Measured::default();
    for field in line.split_whitespace() {
        let (key, value) = field.split_once('=')?;
        match key {
            "finished" => m.finished = value == "true",
            "seconds" => m.seconds = value.parse().ok()?,
            "specs" => m.specs = value.parse().ok()?,
            "peak_mib" => m.peak_mib = value.parse().ok()?,
            "cost" => m.cost = value.parse().ok(),
            "warm_ms" => m.warm_ms = value.parse().ok(),
            _ => {}
        }
    }
    Some(m)
}

/// `morello-db bench-one`: one cold search in this process; prints one `key=value` line.
pub fn run_one(args: &[String]) -> Result<(), String> {
    let at = args.iter().position(|a| a == "--spec").ok_or("bench-one needs --spec")?;
    let spec_text = args.get(at + 1).ok_or("`--spec` needs a value")?;
    let options = parse(&args[..at])?;
    let target = options.target.target();
    let spec = SuiteSpec { name: "", text: spec_text.clone() }.spec(target).map_err(|e| e.to_string())?;
    let mut synth = Synthesizer::with_database(Database::new(target));
    synth.set_search_space(options.space);
    synth.set_threads(options.threads);
    synth.set_deadline(Instant::now() + options.limit);
    let start = Instant::now();
    let result = synth.synthesize(&spec);
    let seconds = start.elapsed().as_secs_f64();
    let finished = !synth.timed_out();
    let cost = result.as_ref().ok().and_then(|imp| impl_cost(imp, target)).map(|c| c.main);
    let specs = synth.stats().specs_solved;
    let peak_mib = peak_resident_mib();
    let mut warm_ms = None;
    if finished {
        let path = std::env::temp_dir().join(format!("morello-bench-{}.morellodb", std::process::id()));
        let mut db = synth.into_database();
        file::save(&mut db, &path).map_err(|e| e.to_string())?;
        drop(db);
        let query = Instant::now();
        let (db, _) = file::load(&path, target);
        let mut warm = Synthesizer::with_database(db);
        warm.set_search_space(options.space);
        let again = warm.synthesize(&spec).map_err(|e| e.to_string())?;
        warm_ms = Some(query.elapsed().as_secs_f64() * 1e3);
        let _ = std::fs::remove_file(&path);
        if impl_cost(&again, target).map(|c| c.main) != cost {
            return Err(format!("the warm query of {spec} answered differently from the cold search"));
        }
    }
    let cost = cost.map_or("none".to_owned(), |c| c.to_string());
    let warm = warm_ms.map_or("none".to_owned(), |ms| format!("{ms:.3}"));
    println!(
        "finished={finished} seconds={seconds:.3} specs={specs} peak_mib={peak_mib:.1} cost={cost} warm_ms={warm}"
    );
    Ok(())
}

/// This machine's CPU model and logical CPUs, from `/proc/cpuinfo` ("an unknown CPU"
/// elsewhere): every figure names the CPU it was measured on.
fn cpu_name() -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match morello_core::harness::cpu_model_name() {
        Some(name) => format!("{name} ({cpus} logical CPUs)"),
        None => "an unknown CPU".to_owned(),
    }
}

/// The options `args` ask for.
fn parse(args: &[String]) -> Result<BenchOptions, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut options = BenchOptions {
        target: TargetId::X86Avx2,
        space: SearchSpace::Fast,
        threads: cores,
        limit: Duration::from_secs(120),
        exact_limit: Duration::ZERO,
        only: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("`--{name}` needs a value"));
        match flag.as_str() {
            "--target" => options.target = target_id(&value("target")?)?,
            "--space" => options.space = value("space")?.parse().map_err(|e| format!("--space: {e}"))?,
            "--threads" => options.threads = number(&value("threads")?, "threads")?.max(1) as usize,
            "--limit" => options.limit = Duration::from_secs(number(&value("limit")?, "limit")?),
            "--exact-limit" => {
                options.exact_limit = Duration::from_secs(number(&value("exact-limit")?, "exact-limit")?)
            }
            "--only" => options.only = Some(value("only")?),
            other => return Err(format!("`bench` takes no argument `{other}`\nusage: {USAGE}")),
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args;

    #[test]
    fn options_parse_and_bad_ones_are_named() {
        let o = parse(&args("--target avx512 --space full --threads 1 --limit 9 --exact-limit 30 --only 128")).unwrap();
        assert_eq!(
            (o.target, o.space, o.threads, o.limit.as_secs(), o.exact_limit.as_secs(), o.only.as_deref()),
            (TargetId::X86Avx512, SearchSpace::Full, 1, 9, 30, Some("128"))
        );
        assert_eq!(parse(&[]).unwrap().space, SearchSpace::Fast);
        assert!(parse(&args("--limit soon")).unwrap_err().contains("--limit soon is not a number"));
        assert!(parse(&args("--space quick")).unwrap_err().contains("`quick` is not a search space"));
        assert!(parse(&args("--frobnicate")).unwrap_err().contains("no argument `--frobnicate`"));
    }

    #[test]
    fn a_measured_line_reads_back() {
        let line = "finished=true seconds=1.250 specs=42 peak_mib=12.5 cost=99 warm_ms=3.000\n";
        let m = parse_measured(line).unwrap();
        assert_eq!(
            m,
            Measured { finished: true, seconds: 1.25, specs: 42, peak_mib: 12.5, cost: Some(99), warm_ms: Some(3.0) }
        );
        let unfinished =
            parse_measured("finished=false seconds=9.000 specs=7 peak_mib=1.0 cost=none warm_ms=none").unwrap();
        assert_eq!((unfinished.finished, unfinished.cost, unfinished.warm_ms), (false, None, None));
        assert!(parse_measured("garbage").is_none());
    }
}
