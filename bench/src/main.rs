//! Morello's synthesized kernels side by side with OpenBLAS, oneDNN, faer, gemm and
//! matrixmultiply, in one process per thread count, on the same inputs, after checking every
//! output against a reference; with the machine's FMA peak and read bandwidth measured in the
//! same run. See `bench/README.md` for the method.
//!
//! Usage: `bench/run [--only TEXT] [--offset BYTES]`. Without `--phase`, the program runs itself
//! twice: pinned to one core with every library on one thread, then on both cores with two
//! threads.

mod aligned;
mod ceiling;
mod contenders;
// `build.rs` chooses the target and compiles that file's kernels.
#[cfg_attr(kernels_avx2, path = "kernels_avx2.rs")]
#[cfg_attr(not(kernels_avx2), path = "kernels_avx512.rs")]
mod kernels;
// Left out with `MORELLO_BENCH_NARROWED=skip` (`build.rs`).
#[cfg(narrowed_kernels)]
#[cfg_attr(kernels_avx2, path = "kernels_narrowed_avx2.rs")]
#[cfg_attr(not(kernels_avx2), path = "kernels_narrowed_avx512.rs")]
mod kernels_narrowed;
mod machine;
mod peers;
mod prepack;
mod report;
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
}

const USAGE: &str = "usage: morello-bench [--only TEXT] [--offset BYTES]";

fn parse_options() -> Result<Options, String> {
    let mut options = Options { phase: None, only: None, offset: 0, serial_figures: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--phase" => options.phase = Some(value()?.parse().map_err(|e| format!("--phase: {e}"))?),
            "--only" => options.only = Some(value()?),
            "--offset" => options.offset = value()?.parse().map_err(|e| format!("--offset: {e}"))?,
            "--serial-figures" => options.serial_figures = Some(PathBuf::from(value()?)),
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
        Some(threads) => report::run_phase(threads, &workloads, options.offset, options.serial_figures.as_deref()),
        None => drive(&options),
    }
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
    let figures = std::env::temp_dir().join(format!("morello-bench-serial-{}.tsv", std::process::id()));
    let status = run_phases(&exe, options, &figures);
    let _ = std::fs::remove_file(&figures);
    status
}

/// Runs the two phases, handing the first one's figures to the second through `figures`.
fn run_phases(exe: &std::path::Path, options: &Options, figures: &std::path::Path) -> ExitCode {
    for threads in [1, 2] {
        let count = threads.to_string();
        let mut phase = Command::new(exe);
        phase.arg("--phase").arg(&count).arg("--offset").arg(options.offset.to_string());
        phase.arg("--serial-figures").arg(figures);
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
