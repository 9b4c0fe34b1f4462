//! Issue 6's targets, checked against one phase's figures and printed after its tables.
//!
//! Only wholly searched kernels count (rows labelled `Morello (synthesized…`, prepacked layouts
//! of `b` included, as oneDNN's weights are prepacked too); hand-scheduled rows are shown in
//! the tables but never meet a target. The rank-correlation target is `bench/run calibrate`'s.

use crate::workload::Workload;

/// Label prefix of the rows the search found wholly.
pub const SEARCHED_PREFIX: &str = "Morello (synthesized";

/// One row's figures, as the table prints them.
#[derive(Clone, Debug)]
pub struct Figures {
    /// The row's label.
    pub label: String,
    /// Median GFLOP/s.
    pub gflops: f64,
    /// Percent of the FMA peak (GEMMs) or of the read-bandwidth ceiling (vector-matrix).
    pub percent: f64,
    /// Ratio to the best peer, if any peer ran.
    pub ratio: Option<f64>,
}

/// The best wholly searched serial and parallel rows of one workload.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The workload.
    pub workload: Workload,
    /// The fastest searched kernel without parallel loops.
    pub serial: Option<Figures>,
    /// The fastest searched kernel with parallel loops (two-thread phase only).
    pub parallel: Option<Figures>,
}

impl Outcome {
    /// Picks the fastest searched serial and parallel rows of `rows` (every row of the table,
    /// correct ones only).
    pub fn new(workload: Workload, rows: &[Figures]) -> Self {
        let fastest = |parallel: bool| {
            rows.iter()
                .filter(|r| r.label.starts_with(SEARCHED_PREFIX) && r.label.contains("parallel") == parallel)
                .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
                .cloned()
        };
        Outcome { workload, serial: fastest(false), parallel: fastest(true) }
    }
}

/// Least ratio to the best peer and least percent of peak for f32 GEMMs from 256³ up.
const LARGE_RATIO: f64 = 1.0;
const LARGE_PERCENT: f64 = 85.0;
/// Least ratio to the best peer for the small GEMMs (48³, 64³, 100³, 8×512×512).
const SMALL_RATIO: f64 = 1.2;
/// Least percent of the read-bandwidth ceiling for vector-matrix products.
const VECMAT_PERCENT: f64 = 90.0;
/// Least speed-up of the searched parallel kernel over the searched serial one, two threads.
const PARALLEL_SPEEDUP: f64 = 1.8;

/// The smallest of a workload's dimensions, which tells the shapes of the targets apart.
fn smallest_dimension(w: &Workload) -> usize {
    w.m.min(w.k).min(w.n)
}

/// Whether issue 6 sets a two-thread target for `w` (1024³ and 2048³).
fn has_parallel_target(w: &Workload) -> bool {
    !w.is_vecmat() && smallest_dimension(w) >= 1024
}

/// The target line for `outcome` in a phase of `threads` threads, `None` where that phase sets
/// none. `single_thread` is the single-thread phase's fastest searched serial figure for the
/// workload (GFLOP/s), which a two-thread phase compares its searched parallel kernel with; if
/// it is unknown, the searched serial kernel timed in this phase stands in, and the line says so.
pub fn verdict(outcome: &Outcome, threads: usize, single_thread: Option<f64>) -> Option<String> {
    let w = &outcome.workload;
    let name = w.name();
    if threads > 1 {
        if !has_parallel_target(w) {
            return None;
        }
        let serial = match single_thread {
            Some(g) => Some((g, "the single-thread phase's searched serial")),
            None => outcome.serial.as_ref().map(|s| (s.gflops, "the searched serial timed in this phase")),
        };
        return Some(match (&outcome.parallel, serial) {
            (Some(p), Some((serial, which))) => {
                let speedup = p.gflops / serial;
                format!(
                    "{name}: searched parallel {:.1} GFLOP/s, {speedup:.2}× {which} {serial:.1} \
                     (target ≥ {PARALLEL_SPEEDUP:.1}×): {}",
                    p.gflops,
                    met(speedup >= PARALLEL_SPEEDUP)
                )
            }
            _ => format!(
                "{name}: no wholly searched serial and parallel kernels with correct outputs in this run \
                 (target not measured)"
            ),
        });
    }
    let Some(s) = &outcome.serial else {
        return Some(format!(
            "{name}: no wholly searched kernel with a correct output in this run (target not measured)"
        ));
    };
    // Three decimals: at 0.996 the table's two would print "1.00×" beside "NOT met".
    let ratio = s.ratio.map_or("no peer".to_owned(), |r| format!("{r:.3}×"));
    let ratio_at_least = |least: f64| s.ratio.is_some_and(|r| r >= least);
    let (target, ok) = if w.is_vecmat() {
        (format!("≥ {VECMAT_PERCENT:.0}% of the read ceiling"), s.percent >= VECMAT_PERCENT)
    } else if smallest_dimension(w) >= 256 {
        (
            format!("≥ {LARGE_RATIO:.1}× and ≥ {LARGE_PERCENT:.0}% of peak"),
            ratio_at_least(LARGE_RATIO) && s.percent >= LARGE_PERCENT,
        )
    } else {
        (format!("≥ {SMALL_RATIO:.1}×"), ratio_at_least(SMALL_RATIO))
    };
    Some(format!(
        "{name}: {} {:.1} GFLOP/s, {ratio} the best peer, {:.1}% (target {target}): {}",
        s.label,
        s.gflops,
        s.percent,
        met(ok)
    ))
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// Prints the target lines of a phase of `threads` threads; `single_thread` gives the
/// single-thread phase's fastest searched serial figure by workload name (for a two-thread
/// phase).
pub fn print(outcomes: &[Outcome], threads: usize, single_thread: &[(String, f64)]) {
    let figure = |w: &Workload| single_thread.iter().find(|(name, _)| *name == w.name()).map(|&(_, g)| g);
    let lines: Vec<String> = outcomes.iter().filter_map(|o| verdict(o, threads, figure(&o.workload))).collect();
    if lines.is_empty() {
        return;
    }
    println!("\nissue 6 targets, {threads} thread(s), from the medians of this run (wholly searched kernels only):");
    for line in lines {
        println!("  {line}");
    }
    if threads == 1 {
        println!("  (rank correlation of predicted cost and time: `bench/run calibrate`)");
    }
}

/// The fastest searched serial figure of each workload that has one, by workload name: what the
/// single-thread phase hands to the two-thread one ([`serialize`], [`parse`]).
pub fn serial_figures(outcomes: &[Outcome]) -> Vec<(String, f64)> {
    outcomes.iter().filter_map(|o| o.serial.as_ref().map(|s| (o.workload.name(), s.gflops))).collect()
}

/// One `name<TAB>GFLOP/s` line per figure.
pub fn serialize(figures: &[(String, f64)]) -> String {
    figures.iter().map(|(name, g)| format!("{name}\t{g}\n")).collect()
}

/// Reads what [`serialize`] wrote; lines it cannot read are skipped.
pub fn parse(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let (name, g) = line.split_once('\t')?;
            Some((name.to_owned(), g.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, gflops: f64, percent: f64, ratio: f64) -> Figures {
        Figures { label: label.to_owned(), gflops, percent, ratio: Some(ratio) }
    }

    #[test]
    fn only_wholly_searched_rows_count() {
        let w = Workload::gemm(256, 256, 256);
        let rows = [
            row("Morello (full-k tiles by hand, b in panels)", 250.0, 95.0, 1.1),
            row("Morello (synthesized)", 240.0, 90.0, 0.99),
            row("oneDNN prepacked", 242.0, 91.0, 1.0),
        ];
        let outcome = Outcome::new(w, &rows);
        assert_eq!(outcome.serial.as_ref().unwrap().gflops, 240.0);
        let line = verdict(&outcome, 1, None).unwrap();
        assert!(line.ends_with("NOT met"), "{line}");
        let faster = [row("Morello (synthesized)", 245.0, 90.0, 1.01)];
        assert!(verdict(&Outcome::new(w, &faster), 1, None).unwrap().ends_with(": met"));
    }

    #[test]
    fn a_ratio_just_short_of_the_target_does_not_print_as_reaching_it() {
        let w = Workload::gemm(256, 256, 256);
        let line = verdict(&Outcome::new(w, &[row("Morello (synthesized)", 227.9, 96.7, 0.9966)]), 1, None).unwrap();
        assert!(line.contains("0.997× the best peer") && line.ends_with("NOT met"), "{line}");
    }

    #[test]
    fn each_shape_has_its_target() {
        let small = Outcome::new(Workload::gemm(64, 64, 64), &[row("Morello (synthesized)", 1.0, 99.0, 1.1)]);
        assert!(verdict(&small, 1, None).unwrap().ends_with("NOT met"), "small GEMMs need 1.2×");
        let vecmat = Outcome::new(Workload::vecmat(2048, 16384, true), &[row("Morello (synthesized)", 1.0, 91.0, 0.5)]);
        assert!(verdict(&vecmat, 1, None).unwrap().ends_with(": met"), "vector-matrix counts the ceiling only");
        let large = Outcome::new(Workload::gemm(1024, 1024, 1024), &[row("Morello (synthesized)", 1.0, 84.0, 1.3)]);
        assert!(verdict(&large, 1, None).unwrap().ends_with("NOT met"), "85% of peak too");
        assert!(verdict(&small, 2, None).is_none(), "no two-thread target below 1024³");
    }

    #[test]
    fn two_threads_compare_searched_parallel_with_searched_serial() {
        let w = Workload::gemm(2048, 2048, 2048);
        let rows = [
            row("Morello (synthesized, narrowed space)", 100.0, 90.0, 0.9),
            row("Morello (synthesized parallel, narrowed space)", 185.0, 80.0, 0.9),
            row("Morello (parallel full-k tiles by hand, b in panels)", 250.0, 99.0, 1.2),
        ];
        let line = verdict(&Outcome::new(w, &rows), 2, None).unwrap();
        assert!(line.contains("1.85×") && line.contains("in this phase") && line.ends_with(": met"), "{line}");
        let against_phase_one = verdict(&Outcome::new(w, &rows), 2, Some(110.0)).unwrap();
        assert!(against_phase_one.contains("1.68×") && against_phase_one.ends_with("NOT met"), "{against_phase_one}");
        let serial_only = verdict(&Outcome::new(w, &rows[..1]), 2, None).unwrap();
        assert!(serial_only.contains("not measured"), "{serial_only}");
    }

    #[test]
    fn serial_figures_survive_the_file_between_phases() {
        let w = Workload::gemm(1024, 1024, 1024);
        let outcomes = [Outcome::new(w, &[row("Morello (synthesized, narrowed space)", 212.25, 94.0, 1.03)])];
        let figures = serial_figures(&outcomes);
        assert_eq!(parse(&serialize(&figures)), figures);
        assert_eq!(figures, vec![("f32 1024x1024x1024".to_owned(), 212.25)]);
        assert!(parse("garbage\nf32 1x1x1\tnot a number\n").is_empty());
    }
}
