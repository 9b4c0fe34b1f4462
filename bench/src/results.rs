//! A run's tables as data: what `bench/run` writes to `bench/results/` and `bench/run render`
//! reads back. Each phase (a thread count, a process of its own) writes its part; the driver
//! joins the parts with what identifies the run.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One run of the benchmark: both phases on one machine.
#[derive(Serialize, Deserialize, Debug)]
pub struct RunResults {
    /// The day the run finished, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The CPU's model name, as `/proc/cpuinfo` gives it.
    pub cpu: String,
    /// The kernels' target: `AVX-512` or `AVX2`.
    pub target: String,
    /// The commit the benchmark was built from (`bench/run` passes it), if known.
    #[serde(default)]
    pub commit: Option<String>,
    /// The workloads chosen with `--only`, if any.
    pub only: Option<String>,
    /// Bytes past a cache line every buffer starts.
    pub offset: usize,
    /// The phases, fewest threads first.
    pub phases: Vec<PhaseResults>,
}

/// One phase: every workload on a number of threads.
#[derive(Serialize, Deserialize, Debug)]
pub struct PhaseResults {
    pub threads: usize,
    /// The f32 FMA peak measured at the phase's start, GFLOP/s.
    pub fma_peak_gflops: f64,
    /// The read bandwidth measured at the phase's start, GB/s.
    pub read_gbps: f64,
    pub workloads: Vec<WorkloadResults>,
}

/// One workload's table.
#[derive(Serialize, Deserialize, Debug)]
pub struct WorkloadResults {
    /// The workload's name, such as `f32 256x256x256`.
    pub name: String,
    /// The ceiling timed in the same rounds, GFLOP/s.
    pub ceiling_gflops: f64,
    /// What the ceiling is: the FMA peak, or the bandwidth ceiling of a vector-matrix product.
    pub ceiling: String,
    pub rows: Vec<RowResults>,
}

/// One contender's row.
#[derive(Serialize, Deserialize, Debug)]
pub struct RowResults {
    pub contender: String,
    /// One of Morello's kernels (otherwise a library).
    pub morello: bool,
    /// The measured figures, or why there are none (a wrong output).
    pub outcome: Result<Timing, String>,
}

/// A correct contender's figures.
#[derive(Serialize, Deserialize, Debug, Clone, Copy)]
pub struct Timing {
    /// From the median time per call.
    pub gflops: f64,
    /// From the best time per call.
    pub best_gflops: f64,
    /// Percent of the workload's ceiling.
    pub percent_of_ceiling: f64,
    /// Ratio to the fastest library in the same table, if one ran.
    pub vs_best_peer: Option<f64>,
    /// CPU time over wall time during its repetitions.
    pub cpu_share: f64,
}

impl RowResults {
    /// The figures, if the output was correct.
    pub fn timing(&self) -> Option<&Timing> {
        self.outcome.as_ref().ok()
    }

    /// Whether the search found this kernel wholly, without a schedule (its label says so).
    pub fn wholly_searched(&self) -> bool {
        self.morello && self.contender.starts_with(crate::targets::SEARCHED_PREFIX)
    }
}

/// Writes `value` as JSON to `path`.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| format!("cannot encode {}: {e}", path.display()))?;
    std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Reads a JSON file written by [`write_json`].
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a results file: {e}", path.display()))
}

/// Where a run's results go in `dir`: `<date>-<cpu>-<target>.json`, the CPU's name in lower case
/// with every run of other characters than letters and digits as one dash.
pub fn file_name(dir: &Path, run: &RunResults) -> PathBuf {
    let slug = |text: &str| {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
        words.join("-")
    };
    let partial = if run.only.is_some() { "-partial" } else { "" };
    dir.join(format!("{}-{}-{}{partial}.json", run.date, slug(&run.cpu), slug(&run.target)))
}

/// The CPU's model name from `/proc/cpuinfo`, or `unknown CPU`.
pub fn cpu_name() -> String {
    morello_core::harness::cpu_model_name().unwrap_or_else(|| "unknown CPU".to_owned())
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_date(seconds / 86_400);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The Gregorian date `days` days after 1970-01-01: counted in 400-year eras of 146,097 days,
/// with years starting in March so that the leap day ends a year.
fn civil_date(days: u64) -> (u64, u64, u64) {
    let days = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = days / 146_097;
    let day_of_era = days % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_the_calendar() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(59), (1970, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_794), (2026, 12, 7));
    }

    #[test]
    fn file_names_slug_the_cpu_and_mark_partial_runs() {
        let mut run = RunResults {
            date: "2026-12-07".to_owned(),
            cpu: "Intel(R) Xeon(R) Processor".to_owned(),
            target: "AVX-512".to_owned(),
            commit: None,
            only: None,
            offset: 0,
            phases: Vec::new(),
        };
        assert_eq!(file_name(Path::new("r"), &run), Path::new("r/2026-12-07-intel-r-xeon-r-processor-avx-512.json"));
        run.only = Some("256".to_owned());
        assert!(file_name(Path::new("r"), &run).to_string_lossy().ends_with("-avx-512-partial.json"));
    }
}
