//! Morello's synthesized kernels side by side with OpenBLAS, oneDNN, faer, gemm and
//! matrixmultiply, in one process per thread count, on the same inputs, after checking every
//! output against a reference; with the machine's FMA peak and read bandwidth measured in the
//! same run. See `bench/README.md` for the method.
//!
//! Usage: `bench/run [--only TEXT] [--offset BYTES] [--results-dir DIR]`. Without `--phase`,
//! the program runs itself twice: pinned to one core with every library on one thread, then on
//! both cores with two threads; with `--results-dir` it then writes the run's tables as data
//! there (`results.rs`). `bench/run render FILE` prints such a file as a Markdown table.

mod aligned;
mod ceiling;
mod contenders;
/// The kernels of `kernels.in.rs`, written out by `build.rs` for the benchmark's target.
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
}
/// The kernels of `kernels_narrowed.in.rs`, for the benchmark's target; left out with
/// `MORELLO_BENCH_NARROWED=skip` (`build.rs`).
#[cfg(narrowed_kernels)]
mod kernels_narrowed {
    include!(concat!(env!("OUT_DIR"), "/kernels_narrowed.rs"));
}
mod machine;
mod peers;
mod prepack;
mod render;
mod report;
mod results;
mod targets;
mod timing;
mod workload;

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use workload::Workload;

/// The shapes of the benchmark (issue 6): f32 GEMMs, and the gemma.cpp vector-matrix shape in
/// f32 and bf16·bf16→f32.
const WORKLOADS: [Workload; 9] = [
    Workload::gemm(48, 48, 48),
    Workload::gemm(64, 64, 64),
    Workload::gemm(100, 100, 100),
    Workload::gemm(256, 256, 256),
    Workload::gemm(1024, 1024, 1024),
    Workload::gemm(2048, 2048, 2048),
    Workload::gemm(8, 512, 512),
    Workload::vecmat(2048, 16384, false),
    Workload::vecmat(2048, 16384, true),
];

/// Command-line options.
struct Options {
    /// Run one phase on this many threads (internal: the driver passes it).
    phase: Option<usize>,
    /// Only workloads whose name contains this.
    only: Option<String>,
    /// Every input and output buffer starts this many bytes past a cache line.
    offset: usize,
    /// Where the single-thread phase leaves its figures for the two-thread phase (internal).
    serial_figures: Option<PathBuf>,
    /// Where a phase writes its tables as data for the driver (internal).
    results_part: Option<PathBuf>,
    /// Where the driver writes the run's tables as data.
    results_dir: Option<PathBuf>,
}

const USAGE: &str =
    "usage: morello-bench [--only TEXT] [--offset BYTES] [--results-dir DIR] | morello-bench render FILE";

fn parse_options() -> Result<Options, String> {
    let mut options =
        Options { phase: None, only: None, offset: 0, serial_figures: None, results_part: None, results_dir: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--phase" => options.phase = Some(value()?.parse().map_err(|e| format!("--phase: {e}"))?),
            "--only" => options.only = Some(value()?),
            "--offset" => options.offset = value()?.parse().map_err(|e| format!("--offset: {e}"))?,
            "--serial-figures" => options.serial_figures = Some(PathBuf::from(value()?)),
            "--results-part" => options.results_part = Some(PathBuf::from(value()?)),
            "--results-dir" => options.results_dir = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    if options.offset >= aligned::LINE_BYTES || !options.offset.is_multiple_of(4) {
        return Err(format!(
            "--offset {} must be a multiple of 4 (an f32) below {}",
            options.offset,
            aligned::LINE_BYTES
        ));
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "render") {
        return render_files(&args[1..]);
    }
    let options = match parse_options() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let isa = machine::Isa::KERNELS;
    let missing = isa.missing_features();
    if !missing.is_empty() {
        eprintln!(
            "this benchmark was built for {} kernels, and this CPU lacks {}; build it where it runs \
             (MORELLO_BENCH_TARGET=avx2 chooses the AVX2 kernels)",
            isa.name(),
            missing.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let workloads: Vec<Workload> = WORKLOADS
        .iter()
        .filter(|w| options.only.as_ref().is_none_or(|only| w.name().contains(only.as_str())))
        .copied()
        .collect();
    match options.phase {
        Some(threads) => {
            let handover = report::Handover {
                serial_figures: options.serial_figures.as_deref(),
                results: options.results_part.as_deref(),
            };
            report::run_phase(threads, &workloads, options.offset, &handover)
        }
        None => drive(&options),
    }
}

/// `render FILE...`: prints each results file as a Markdown table.
fn render_files(files: &[String]) -> ExitCode {
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    for (i, file) in files.iter().enumerate() {
        match results::read_json::<results::RunResults>(std::path::Path::new(file)) {
            Ok(run) => print!("{}{}", if i > 0 { "\n" } else { "" }, render::render(&run)),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Runs the single-thread phase, then the two-thread one, each in a fresh process: some
/// libraries fix their thread count at first use.
fn drive(options: &Options) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("cannot find this program's path to run its phases: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The single-thread phase's searched serial figures, which the two-thread phase's targets
    // compare with.
    let scratch = |what: &str| std::env::temp_dir().join(format!("morello-bench-{what}-{}", std::process::id()));
    let figures = scratch("serial.tsv");
    let parts: Vec<PathBuf> = PHASE_THREADS.iter().map(|t| scratch(&format!("phase{t}.json"))).collect();
    let mut status = run_phases(&exe, options, &figures, &parts);
    if status == ExitCode::SUCCESS
        && let Some(dir) = &options.results_dir
        && let Err(e) = write_results(dir, options, &parts)
    {
        eprintln!("{e}");
        status = ExitCode::FAILURE;
    }
    for path in parts.iter().chain([&figures]) {
        let _ = std::fs::remove_file(path);
    }
    status
}

/// The thread counts of the phases, in order.
const PHASE_THREADS: [usize; 2] = [1, 2];

/// Joins the phases' tables (`parts`) into the run's results file in `dir`.
fn write_results(dir: &std::path::Path, options: &Options, parts: &[PathBuf]) -> Result<(), String> {
    let phases = parts.iter().map(|p| results::read_json(p)).collect::<Result<Vec<_>, _>>()?;
    let run = results::RunResults {
        date: results::today(),
        cpu: results::cpu_name(),
        target: machine::Isa::KERNELS.name().to_owned(),
        commit: std::env::var("MORELLO_BENCH_COMMIT").ok().filter(|c| !c.is_empty()),
        only: options.only.clone(),
        offset: options.offset,
        phases,
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = results::file_name(dir, &run);
    results::write_json(&path, &run)?;
    println!("\nresults written to {} (bench/run render {0} prints them as Markdown)", path.display());
    Ok(())
}

/// Runs the two phases, handing the first one's figures to the second through `figures`.
fn run_phases(exe: &std::path::Path, options: &Options, figures: &std::path::Path, parts: &[PathBuf]) -> ExitCode {
    for (threads, part) in PHASE_THREADS.into_iter().zip(parts) {
        let count = threads.to_string();
        let mut phase = Command::new(exe);
        phase.arg("--phase").arg(&count).arg("--offset").arg(options.offset.to_string());
        phase.arg("--serial-figures").arg(figures).arg("--results-part").arg(part);
        if let Some(only) = &options.only {
            phase.arg("--only").arg(only);
        }
        for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "RAYON_NUM_THREADS", "MATMUL_NUM_THREADS"] {
            phase.env(var, &count);
        }
        match phase.status() {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("the {threads}-thread phase failed ({status})");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("cannot start the {threads}-thread phase: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
