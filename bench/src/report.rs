//! One phase of the benchmark: measure the machine, then every contender on every workload,
//! and print the table.

use crate::aligned::Placed;
use crate::machine::{self, Limits};
use crate::peers::{self, Contender};
use crate::timing::{Measurement, measure};
use crate::workload::{Inputs, Reference, Workload};
use std::process::ExitCode;

/// One contender's result on one workload.
struct Row {
    name: String,
    result: Result<Measurement, String>,
    is_morello: bool,
}

/// Runs every workload on `threads` threads, every buffer `offset` bytes past a cache line, and
/// prints the table; fails if any output is wrong.
pub fn run_phase(threads: usize, workloads: &[Workload], offset: usize) -> ExitCode {
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
    let limits = machine::measure_limits(threads);
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
    for w in workloads {
        let inputs = Inputs::new(w, offset);
        let reference = Reference::new(w, &inputs);
        let mut contenders: Vec<(Contender, bool)> = Vec::new();
        let morello = crate::contenders::morello(w, &inputs, threads);
        let has_morello = !morello.is_empty();
        contenders.extend(morello.into_iter().map(|c| (c, true)));
        contenders.extend(peers::contenders(w, &inputs, threads).into_iter().map(|c| (c, false)));
        let rows: Vec<Row> = contenders
            .into_iter()
            .map(|(mut c, is_morello)| {
                let mut out = Placed::filled(f32::NAN, w.m * w.n, offset);
                (c.run)(&mut out);
                let result = reference.check(w, &out).map(|()| measure(|| (c.run)(&mut out)));
                Row { name: c.name, result, is_morello }
            })
            .collect();
        all_correct &= rows.iter().all(|r| r.result.is_ok());
        print_workload(w, &reference.coverage(w), &limits, &rows, has_morello);
    }
    if all_correct { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn gflops(w: &Workload, m: &Measurement) -> f64 {
    w.flops() / m.median.as_secs_f64() / 1e9
}

fn print_workload(w: &Workload, coverage: &str, limits: &Limits, rows: &[Row], has_morello: bool) {
    let (ceiling, ceiling_name) = if w.is_vecmat() {
        (w.flops() / (w.matrix_bytes() / (limits.read_gbps * 1e9)) / 1e9, "of bandwidth ceiling")
    } else {
        (limits.peak_gflops, "of FMA peak")
    };
    println!("\n{} — checked against the f64 reference on {coverage}; ceiling {ceiling:.1} GFLOP/s", w.name());
    let best_peer = rows
        .iter()
        .filter(|r| !r.is_morello)
        .filter_map(|r| r.result.as_ref().ok())
        .map(|m| gflops(w, m))
        .fold(0.0, f64::max);
    // The name column fits the longest name, so every row's figures line up.
    let width = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(44);
    println!("  {:<width$} {:>9} {:>9} {:>7} {:>9} {:>6}", "implementation", "GFLOP/s", "best", "%", "vs peer", "cpu");
    for row in rows {
        match &row.result {
            Ok(m) => {
                let g = gflops(w, m);
                let best = w.flops() / m.best.as_secs_f64() / 1e9;
                // No peer ran (none implements the workload on this CPU): no ratio.
                let ratio = if best_peer > 0.0 { format!("{:.2}x", g / best_peer) } else { "-".to_owned() };
                println!(
                    "  {:<width$} {g:>9.1} {best:>9.1} {:>6.1}% {ratio:>9} {:>6.2}",
                    row.name,
                    100.0 * g / ceiling,
                    m.cpu_share
                );
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
    println!("  (% is {ceiling_name}; 'vs peer' is the ratio to the best peer; cpu is CPU time over wall time)");
}
