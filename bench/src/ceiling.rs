//! A workload's ceiling — the FMA peak for a GEMM, the read bandwidth for a vector-matrix
//! product — timed in the same rounds as the workload's contenders, so a row's percentage of it
//! compares two figures from the same stretch of the run. (On the shared development host the
//! read bandwidth moved by up to 30% within a minute; a ceiling measured once at a phase's
//! start made a memory-bound row's percentage swing with the host rather than with the kernel.)

use crate::machine::{self, Limits};
use crate::timing::Measurement;
use crate::workload::Workload;

/// What bounds a workload, and how to run one call of the loop that measures it.
#[derive(Clone, Copy, Debug)]
pub enum Ceiling {
    /// The FMA peak loop on every thread (GEMMs).
    FmaPeak {
        /// Threads the loop runs on.
        threads: usize,
    },
    /// Reading the phase's read buffer in [`machine::READ_STREAMS`] streams, in each of the
    /// [`machine::READ_PATTERNS`] (vector-matrix products); the faster counts (timing only the
    /// pattern chosen at the phase's start let rows pass 100% of a ceiling set too low).
    Read {
        /// Threads that read side by side.
        threads: usize,
    },
}

impl Ceiling {
    /// The ceiling of `w` on `threads` threads.
    pub fn of(w: &Workload, threads: usize) -> Self {
        if w.is_vecmat() { Ceiling::Read { threads } } else { Ceiling::FmaPeak { threads } }
    }

    /// How many loops measure this ceiling (each is timed; the fastest counts).
    pub fn loops(&self) -> usize {
        match self {
            Ceiling::FmaPeak { .. } => 1,
            Ceiling::Read { .. } => machine::READ_PATTERNS.len(),
        }
    }

    /// One call of measuring loop `index` (below [`Ceiling::loops`]); `read_buffer` is the
    /// phase's buffer larger than the caches ([`machine::read_buffer`]).
    pub fn call(&self, index: usize, read_buffer: &[f32]) {
        match *self {
            Ceiling::FmaPeak { threads } => machine::fma_peak_on(threads),
            Ceiling::Read { threads } => machine::read_on(read_buffer, threads, machine::READ_PATTERNS[index], false),
        }
    }

    /// `w`'s GFLOP/s at this ceiling when one call took `seconds`: the FMA loop's own rate,
    /// or the rate at which streaming `b` at the measured bandwidth would run.
    fn gflops(&self, w: &Workload, seconds: f64, read_buffer_len: usize) -> f64 {
        match *self {
            Ceiling::FmaPeak { threads } => machine::fma_flops_on(threads) / seconds / 1e9,
            Ceiling::Read { .. } => streaming_gflops(w, (read_buffer_len * 4) as f64 / seconds),
        }
    }

    /// `w`'s ceiling for the table: the in-turn measurements of this ceiling's loops (one per
    /// loop, in order), and the figure from the phase's start (`limits`).
    pub fn bound(&self, w: &Workload, loops: &[Measurement], read_buffer_len: usize, limits: &Limits) -> Bound {
        let (median, best) = self.measured(w, loops, read_buffer_len);
        Bound { median, best, at_start: self.at_start(w, limits), description: self.description() }
    }

    /// The median and best GFLOP/s of `w` at this ceiling, from the in-turn measurements of its
    /// loops (one per loop, in order): those of the loop with the fastest median.
    fn measured(&self, w: &Workload, loops: &[Measurement], read_buffer_len: usize) -> (f64, f64) {
        let fastest = loops.iter().min_by_key(|m| m.median).expect("a ceiling has a loop");
        let rate = |t: std::time::Duration| self.gflops(w, t.as_secs_f64(), read_buffer_len);
        (rate(fastest.median), rate(fastest.best))
    }

    /// The same ceiling as measured at the phase's start, GFLOP/s.
    fn at_start(&self, w: &Workload, limits: &Limits) -> f64 {
        match self {
            Ceiling::FmaPeak { .. } => limits.peak_gflops,
            Ceiling::Read { .. } => streaming_gflops(w, limits.read_gbps * 1e9),
        }
    }

    /// What a row's percentage is of, for the table's footnote.
    fn description(&self) -> &'static str {
        match self {
            Ceiling::FmaPeak { .. } => "of the FMA peak",
            Ceiling::Read { .. } => "of the read-bandwidth ceiling",
        }
    }
}

/// A workload's ceiling in GFLOP/s, as the table prints it ([`Ceiling::bound`]).
pub struct Bound {
    /// Median of the in-turn repetitions of the fastest loop.
    pub median: f64,
    /// That loop's best in-turn repetition.
    pub best: f64,
    /// As measured at the phase's start ([`machine::measure_limits`]).
    pub at_start: f64,
    /// What the percentages are of.
    pub description: &'static str,
}

/// The GFLOP/s of `w` if it ran as fast as its matrix `b` streams at `bytes_per_second`.
fn streaming_gflops(w: &Workload, bytes_per_second: f64) -> f64 {
    w.flops() / (w.matrix_bytes() / bytes_per_second) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn took(seconds: f64) -> Measurement {
        Measurement {
            median: Duration::from_secs_f64(seconds),
            best: Duration::from_secs_f64(seconds / 2.0),
            cpu_share: 1.0,
        }
    }

    #[test]
    fn a_read_ceiling_is_the_rate_of_streaming_the_matrix_at_the_measured_bandwidth() {
        // 2^27 f32s (512 MiB) read in 0.25 s: 2^31 / 0.25 bytes a second.
        let buffer_len = 1 << 27;
        let bytes_per_second = (buffer_len * 4) as f64 / 0.25;
        let read = Ceiling::Read { threads: 1 };
        // f32: two flops per 4-byte element of `b`; bf16: two per 2-byte element. The faster
        // pattern counts.
        let loops = [took(0.5), took(0.25)];
        let (f32_median, f32_best) = read.measured(&Workload::vecmat(2048, 16384, false), &loops, buffer_len);
        let (bf16_median, _) = read.measured(&Workload::vecmat(2048, 16384, true), &loops, buffer_len);
        assert!((f32_median - bytes_per_second / 2.0 / 1e9).abs() < 1e-9);
        assert!((f32_best - 2.0 * f32_median).abs() < 1e-9);
        assert!((bf16_median - bytes_per_second / 1e9).abs() < 1e-9);
    }

    #[test]
    fn an_fma_ceiling_counts_every_thread_and_ignores_the_workload() {
        let one = Ceiling::FmaPeak { threads: 1 }.measured(&Workload::gemm(48, 48, 48), &[took(0.01)], 0).0;
        let two = Ceiling::FmaPeak { threads: 2 }.measured(&Workload::gemm(2048, 2048, 2048), &[took(0.01)], 0).0;
        assert!((two - 2.0 * one).abs() < 1e-9 * two);
        assert!((one - machine::fma_flops_on(1) / 0.01 / 1e9).abs() < 1e-9 * one);
    }

    #[test]
    fn gemms_are_bound_by_the_fma_peak_and_vector_matrix_products_by_reading() {
        let limits = Limits {
            peak_gflops: 200.0,
            best_peak_gflops: 210.0,
            read_gbps: 30.0,
            read_lines: 4,
            best_read_gbps: 31.0,
            sequential_read_gbps: 29.0,
        };
        let fma = Ceiling::of(&Workload::gemm(8, 512, 512), 2);
        assert!(matches!(fma, Ceiling::FmaPeak { threads: 2 }));
        assert_eq!(fma.loops(), 1);
        let read = Ceiling::of(&Workload::vecmat(2048, 16384, true), 1);
        assert!(matches!(read, Ceiling::Read { threads: 1 }));
        assert_eq!(read.loops(), 2);
        assert_eq!(read.at_start(&Workload::vecmat(2048, 16384, true), &limits), 30.0);
        assert_eq!(read.at_start(&Workload::vecmat(2048, 16384, false), &limits), 15.0);
        assert_eq!(Ceiling::FmaPeak { threads: 1 }.at_start(&Workload::gemm(48, 48, 48), &limits), 200.0);
    }
}
