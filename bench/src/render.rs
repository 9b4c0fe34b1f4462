//! `bench/run render FILE`: a results file as the Markdown table the top-level README shows.

use crate::results::{RowResults, RunResults, Timing, WorkloadResults};
use std::fmt::Write;

/// `run` as one Markdown table: per workload, the fastest wholly searched kernel of the
/// single-thread phase beside the fastest library. (The phases on more threads stay in the
/// file: most searched kernels are serial Specs, which a table beside libraries on every
/// thread would misrepresent.)
pub fn render(run: &RunResults) -> String {
    let mut out = String::new();
    let peaks: Vec<String> =
        run.phases.iter().map(|p| format!("{:.1} GFLOP/s on {}", p.fma_peak_gflops, threads(p.threads))).collect();
    let partial = run.only.as_ref().map_or(String::new(), |only| format!(", only workloads matching `{only}`"));
    let commit = run.commit.as_ref().map_or(String::new(), |c| format!(" at `{c}`"));
    let _ = writeln!(
        out,
        "{} kernels on {}, {} (`bench/run`{commit}{partial}; FMA peak {}):\n",
        run.target,
        run.cpu,
        run.date,
        peaks.join(", ")
    );
    let Some(first) = run.phases.first() else {
        out.push_str("(no phase ran)\n");
        return out;
    };
    let _ = writeln!(
        out,
        "| workload | Morello, {} | % of ceiling | fastest library | its GFLOP/s | Morello / library |\n\
         |---|---|---|---|---|---|",
        threads(first.threads)
    );
    for workload in &first.workloads {
        let searched = fastest(workload, RowResults::wholly_searched);
        let library = fastest(workload, |r| !r.morello);
        let mut line = format!("| {} |", workload.name);
        match searched {
            Some((_, t)) => {
                let _ = write!(line, " {:.1} GFLOP/s | {:.1}% |", t.gflops, t.percent_of_ceiling);
            }
            None => line.push_str(" not searched in this run | |"),
        }
        match library {
            Some((name, t)) => {
                let _ = write!(line, " {name} | {:.1} |", t.gflops);
            }
            None => line.push_str(" none | |"),
        }
        let _ = writeln!(out, "{line} {} |", ratio(searched, library));
    }
    out
}

/// The fastest correct row of `workload` that `wanted` accepts: its name and figures.
fn fastest(workload: &WorkloadResults, wanted: impl Fn(&RowResults) -> bool) -> Option<(&str, &Timing)> {
    workload
        .rows
        .iter()
        .filter(|r| wanted(r))
        .filter_map(|r| r.timing().map(|t| (r.contender.as_str(), t)))
        .max_by(|a, b| a.1.gflops.total_cmp(&b.1.gflops))
}

/// `morello / library` as `1.02×`, or `–` if either is missing.
fn ratio(morello: Option<(&str, &Timing)>, library: Option<(&str, &Timing)>) -> String {
    match (morello, library) {
        (Some((_, m)), Some((_, l))) if l.gflops > 0.0 => format!("{:.2}×", m.gflops / l.gflops),
        _ => "–".to_owned(),
    }
}

fn threads(count: usize) -> String {
    if count == 1 { "1 thread".to_owned() } else { format!("{count} threads") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::PhaseResults;

    fn row(contender: &str, morello: bool, gflops: f64) -> RowResults {
        let timing = Timing {
            gflops,
            best_gflops: gflops,
            percent_of_ceiling: gflops / 2.0,
            vs_best_peer: None,
            cpu_share: 1.0,
        };
        RowResults { contender: contender.to_owned(), morello, outcome: Ok(timing) }
    }

    fn phase(threads: usize, rows: Vec<RowResults>) -> PhaseResults {
        let workload = WorkloadResults {
            name: "f32 64x64x64".to_owned(),
            ceiling_gflops: 200.0,
            ceiling: "FMA peak".to_owned(),
            rows,
        };
        PhaseResults { threads, fma_peak_gflops: 200.0, read_gbps: 20.0, workloads: vec![workload] }
    }

    #[test]
    fn a_workload_shows_the_fastest_searched_kernel_beside_the_fastest_library() {
        let run = RunResults {
            date: "2026-12-07".to_owned(),
            cpu: "Some CPU".to_owned(),
            target: "AVX2".to_owned(),
            commit: None,
            only: None,
            offset: 0,
            phases: vec![
                phase(
                    1,
                    vec![
                        row("Morello (synthesized)", true, 90.0),
                        row("Morello (256³ blocks by hand, rest searched)", true, 120.0),
                        row("OpenBLAS sgemm", false, 100.0),
                        row("faer", false, 80.0),
                        RowResults { contender: "gemm".to_owned(), morello: false, outcome: Err("wrong".to_owned()) },
                    ],
                ),
                phase(2, vec![row("Morello (synthesized)", true, 150.0), row("faer", false, 100.0)]),
            ],
        };
        let table = render(&run);
        assert!(
            table.contains("| f32 64x64x64 | 90.0 GFLOP/s | 45.0% | OpenBLAS sgemm | 100.0 | 0.90× |\n"),
            "{table}"
        );
        assert!(table.starts_with("AVX2 kernels on Some CPU, 2026-12-07"), "{table}");
    }
}
