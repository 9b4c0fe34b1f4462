//! One phase of the benchmark: measure the machine, then every contender on every workload,
//! and print the table.

use crate::aligned::Placed;
use crate::ceiling::{Bound, Ceiling};
use crate::machine;
use crate::peers::{self, Contender};
use crate::results::{self, PhaseResults, RowResults, Timing, WorkloadResults};
use crate::targets::{self, Figures};
use crate::timing::{Measurement, measure_in_turns};
use crate::workload::{Inputs, Reference, Workload};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// One contender's result on one workload.
struct Row {
    name: String,
    result: Result<Measurement, String>,
    is_morello: bool,
}

/// Where a phase hands what it measured to the driver.
pub struct Handover<'a> {
    /// Where the single-thread phase leaves its searched serial figures for the two-thread
    /// phase's targets.
    pub serial_figures: Option<&'a Path>,
    /// Where the phase writes its tables as data ([`PhaseResults`]).
    pub results: Option<&'a Path>,
}

/// Runs every workload on `threads` threads, every buffer `offset` bytes past a cache line, and
/// prints the table; fails if any output is wrong.
pub fn run_phase(threads: usize, workloads: &[Workload], offset: usize, handover: &Handover) -> ExitCode {
    let cpus: Vec<usize> = if threads == 1 { vec![1] } else { (0..threads).collect() };
    if let Err(e) = machine::pin_to(&cpus) {
        eprintln!("cannot pin to CPUs {cpus:?}: {e}");
        return ExitCode::FAILURE;
    }
    peers::set_threads(threads);
    morello::set_max_threads(threads);
    println!(
        "\n=== {threads} thread(s), pinned to CPU(s) {cpus:?}; 1-minute load {:.2}; buffers start {offset} bytes past a cache line",
        machine::load_average().unwrap_or(f64::NAN)
    );
    let read_buffer = machine::read_buffer();
    let settle = if threads > 1 { SETTLE_THREADS } else { Duration::ZERO };
    let limits = machine::measure_limits(threads, &read_buffer, settle);
    println!(
        "machine: f32 FMA peak {:.1} GFLOP/s ({}, best {:.1}); read bandwidth {:.2} GB/s ({} streams of {} line(s) a step, 512 MiB; best {:.2}; one stream {:.2}); kernels: {} target",
        limits.peak_gflops,
        machine::Isa::KERNELS.name(),
        limits.best_peak_gflops,
        limits.read_gbps,
        machine::READ_STREAMS,
        limits.read_lines,
        limits.best_read_gbps,
        limits.sequential_read_gbps,
        machine::Isa::KERNELS.name(),
    );
    let mut all_correct = true;
    let mut outcomes = Vec::new();
    let mut tables = Vec::new();
    for w in workloads {
        let inputs = Inputs::new(w, offset);
        let reference = Reference::new(w, &inputs);
        let mut contenders: Vec<(Contender, bool)> = Vec::new();
        let morello = crate::contenders::morello(w, &inputs, threads);
        let has_morello = !morello.is_empty();
        contenders.extend(morello.into_iter().map(|c| (c, true)));
        contenders.extend(peers::contenders(w, &inputs, threads).into_iter().map(|c| (c, false)));
        // Every output is checked before anything is timed; the correct ones are then timed in
        // turns, so the ratios between them come from the same stretch of the run.
        let mut checked: Vec<Checked> = contenders
            .into_iter()
            .map(|(mut contender, is_morello)| {
                let mut out = Placed::filled(f32::NAN, w.m * w.n, offset);
                (contender.run)(&mut out);
                let check = reference.check(w, &out);
                Checked { contender, out, check, is_morello }
            })
            .collect();
        let ceiling = Ceiling::of(w, threads);
        let read_buffer = &read_buffer;
        let ceiling_loops = (0..ceiling.loops()).map(|i| Box::new(move || ceiling.call(i, read_buffer)) as Run);
        let (timed, ceiling_times) = time_correct(&mut checked, settle, ceiling_loops.collect());
        let mut timed = timed.into_iter();
        let rows: Vec<Row> = checked
            .into_iter()
            .map(|c| {
                let result = c.check.and_then(|()| {
                    let measured = timed.next().expect("one measurement per correct output");
                    // The last timed call's output, computed with whatever the calls before
                    // left behind (Morello's kernels keep their heap buffers), is checked too.
                    reference.check(w, &c.out).map(|()| measured).map_err(|e| format!("after timing: {e}"))
                });
                Row { name: c.contender.name, result, is_morello: c.is_morello }
            })
            .collect();
        all_correct &= rows.iter().all(|r| r.result.is_ok());
        let bound = ceiling.bound(w, &ceiling_times, read_buffer.len(), &limits);
        let figures = print_workload(w, &reference.coverage(w), &bound, &rows, has_morello);
        outcomes.push(targets::Outcome::new(*w, &figures));
        tables.push(workload_results(w, &bound, &rows));
    }
    let single_thread = hand_over_serial_figures(threads, &outcomes, handover.serial_figures);
    targets::print(&outcomes, threads, &single_thread);
    if let Some(path) = handover.results {
        let phase = PhaseResults {
            threads,
            fma_peak_gflops: limits.peak_gflops,
            read_gbps: limits.read_gbps,
            workloads: tables,
        };
        if let Err(e) = results::write_json(path, &phase) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    if all_correct { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// The single-thread phase writes its searched serial figures to `path` and returns none; a
/// phase on several threads reads them back (none if the file is missing or there is no path:
/// the targets then compare with the serial kernels of this phase).
fn hand_over_serial_figures(threads: usize, outcomes: &[targets::Outcome], path: Option<&Path>) -> Vec<(String, f64)> {
    let Some(path) = path else { return Vec::new() };
    if threads == 1 {
        if let Err(e) = std::fs::write(path, targets::serialize(&targets::serial_figures(outcomes))) {
            eprintln!("cannot write the single-thread figures to {}: {e}", path.display());
        }
        return Vec::new();
    }
    std::fs::read_to_string(path).map(|text| targets::parse(&text)).unwrap_or_default()
}

/// A contender whose output was checked, with the buffer it wrote.
struct Checked<'a> {
    contender: Contender<'a>,
    out: Placed<f32>,
    check: Result<(), String>,
    is_morello: bool,
}

/// How long the two-thread phase lets a library's worker threads go idle before the next
/// contender's repetition: OpenBLAS's and OpenMP's workers spin for a while after a call, and
/// would run beside the next contender.
const SETTLE_THREADS: Duration = Duration::from_millis(150);

/// One timed call.
type Run<'a> = Box<dyn FnMut() + 'a>;

/// Times, in turns, the workload's `ceiling` loops (one call of each) and the contenders whose
/// output was correct, pausing `settle` before each repetition; one measurement per correct
/// contender, in order, and one per ceiling loop.
fn time_correct<'a>(
    checked: &'a mut [Checked],
    settle: Duration,
    ceiling: Vec<Run<'a>>,
) -> (Vec<Measurement>, Vec<Measurement>) {
    let loops = ceiling.len();
    let mut runs = ceiling;
    for c in checked.iter_mut().filter(|c| c.check.is_ok()) {
        runs.push(Box::new(move || (c.contender.run)(&mut c.out)));
    }
    let mut measured = measure_in_turns(&mut runs, settle);
    let contenders = measured.split_off(loops);
    (contenders, measured)
}

fn gflops(w: &Workload, m: &Measurement) -> f64 {
    w.flops() / m.median.as_secs_f64() / 1e9
}

/// The fastest correct library's GFLOP/s among `rows` (0 if none ran).
fn best_peer(w: &Workload, rows: &[Row]) -> f64 {
    rows.iter()
        .filter(|r| !r.is_morello)
        .filter_map(|r| r.result.as_ref().ok())
        .map(|m| gflops(w, m))
        .fold(0.0, f64::max)
}

/// A row's figures, given the workload's ceiling and its fastest library's GFLOP/s.
fn timing(w: &Workload, m: &Measurement, ceiling: f64, best_peer: f64) -> Timing {
    let g = gflops(w, m);
    Timing {
        gflops: g,
        best_gflops: w.flops() / m.best.as_secs_f64() / 1e9,
        percent_of_ceiling: 100.0 * g / ceiling,
        // No peer ran (none implements the workload on this CPU): no ratio.
        vs_best_peer: (best_peer > 0.0).then(|| g / best_peer),
        cpu_share: m.cpu_share,
    }
}

/// One workload's table as data.
fn workload_results(w: &Workload, bound: &Bound, rows: &[Row]) -> WorkloadResults {
    let peer = best_peer(w, rows);
    WorkloadResults {
        name: w.name(),
        ceiling_gflops: bound.median,
        ceiling: bound.description.to_owned(),
        rows: rows
            .iter()
            .map(|row| RowResults {
                contender: row.name.clone(),
                morello: row.is_morello,
                outcome: row.result.as_ref().map(|m| timing(w, m, bound.median, peer)).map_err(Clone::clone),
            })
            .collect(),
    }
}

/// Prints one workload's table; returns the figures of its correct rows.
fn print_workload(w: &Workload, coverage: &str, bound: &Bound, rows: &[Row], has_morello: bool) -> Vec<Figures> {
    let ceiling = bound.median;
    println!(
        "\n{} — checked against the f64 reference on {coverage}; ceiling {ceiling:.1} GFLOP/s timed in the same rounds (best {:.1}; {:.1} at the phase's start)",
        w.name(),
        bound.best,
        bound.at_start
    );
    let best_peer = best_peer(w, rows);
    // The name column fits the longest name, so every row's figures line up.
    let width = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(44);
    println!("  {:<width$} {:>9} {:>9} {:>7} {:>9} {:>6}", "implementation", "GFLOP/s", "best", "%", "vs peer", "cpu");
    let mut figures = Vec::new();
    for row in rows {
        match &row.result {
            Ok(m) => {
                let t = timing(w, m, ceiling, best_peer);
                let shown = t.vs_best_peer.map_or("-".to_owned(), |r| format!("{r:.2}x"));
                println!(
                    "  {:<width$} {:>9.1} {:>9.1} {:>6.1}% {shown:>9} {:>6.2}",
                    row.name, t.gflops, t.best_gflops, t.percent_of_ceiling, t.cpu_share
                );
                figures.push(Figures {
                    label: row.name.clone(),
                    gflops: t.gflops,
                    percent: t.percent_of_ceiling,
                    ratio: t.vs_best_peer,
                });
            }
            Err(e) => println!("  {:<width$} WRONG OUTPUT: {e}", row.name),
        }
    }
    if !has_morello {
        println!("  {:<width$} no synthesized kernel for this shape (see bench/README.md)", "Morello");
    }
    if crate::contenders::narrowed_left_out(w) {
        println!(
            "  (the kernels wholly searched in the narrowed space are left out: built with MORELLO_BENCH_NARROWED=skip)"
        );
    }
    println!(
        "  (% is {} timed in the same rounds; 'vs peer' is the ratio to the best peer; cpu is CPU time over wall time)",
        bound.description
    );
    figures
}
