//! The shapes the benchmark runs, their inputs, and the reference every output is checked
//! against before it is timed.

use crate::aligned::Placed;
use half::bf16;
use morello_core::dtype::Dtype;
use morello_core::reference::semantics::gamma;

/// `c[m×n] = a[m×k] · b[k×n]`, all row-major, output f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// The reduction length.
    pub k: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Inputs in bf16 (the output stays f32).
    pub bf16: bool,
}

impl Workload {
    /// An f32 GEMM.
    pub const fn gemm(m: usize, k: usize, n: usize) -> Self {
        Workload { m, k, n, bf16: false }
    }

    /// A vector-matrix product `1×k · k×n`.
    pub const fn vecmat(k: usize, n: usize, bf16: bool) -> Self {
        Workload { m: 1, k, n, bf16 }
    }

    /// Floating-point operations of one product.
    pub fn flops(&self) -> f64 {
        2.0 * (self.m * self.k * self.n) as f64
    }

    /// Bytes of `b`, which a vector-matrix product must stream from memory.
    pub fn matrix_bytes(&self) -> f64 {
        (self.k * self.n * if self.bf16 { 2 } else { 4 }) as f64
    }

    /// Whether memory bandwidth, not compute, bounds it.
    pub fn is_vecmat(&self) -> bool {
        self.m == 1
    }

    /// A short name, e.g. `f32 256x256x256` or `bf16 1x2048x16384`.
    pub fn name(&self) -> String {
        format!("{} {}x{}x{}", if self.bf16 { "bf16" } else { "f32" }, self.m, self.k, self.n)
    }
}

/// A workload's inputs, in both f32 and (for bf16 workloads) bf16 form: the f32 values are the
/// bf16 values widened, so every implementation computes the same product.
///
/// A vector-matrix product is timed on cold data: its matrix `b` (64 or 128 MiB here) would
/// otherwise stay partly in the last-level cache between calls and beat the memory bandwidth.
/// So there are identical copies of `b` adding up to [`COLD_BYTES`], and each call reads the
/// next one ([`crate::peers::Contender::rotating`]).
///
/// Every buffer starts the same number of bytes past a cache line (see [`crate::aligned`]).
pub struct Inputs {
    /// `a`, as f32.
    pub a: Placed<f32>,
    /// `b`, as f32 (for bf16 workloads, only the reference reads it).
    pub b: Placed<f32>,
    /// `a` in bf16 (empty for f32 workloads).
    pub a16: Placed<bf16>,
    /// `b` in bf16 (empty for f32 workloads).
    pub b16: Placed<bf16>,
    /// Further copies of `b` in the dtype the contenders read, for vector-matrix products.
    more_b: Vec<Placed<f32>>,
    more_b16: Vec<Placed<bf16>>,
}

/// Bytes of matrix a vector-matrix product rotates through: more than the caches hold (the
/// VM's L3 behaves like 64–128 MiB).
pub const COLD_BYTES: f64 = 512.0 * 1024.0 * 1024.0;

impl Inputs {
    /// Deterministic values in [-1, 1), every buffer starting `offset` bytes past a cache line.
    pub fn new(w: &Workload, offset: usize) -> Self {
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (w.m * 31 + w.k * 17 + w.n) as u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let mut a: Vec<f32> = (0..w.m * w.k).map(|_| next()).collect();
        let mut b: Vec<f32> = (0..w.k * w.n).map(|_| next()).collect();
        let (mut a16, mut b16) = (Vec::new(), Vec::new());
        if w.bf16 {
            a16 = a.iter().map(|&x| bf16::from_f32(x)).collect();
            b16 = b.iter().map(|&x| bf16::from_f32(x)).collect();
            a = a16.iter().map(|x| x.to_f32()).collect();
            b = b16.iter().map(|x| x.to_f32()).collect();
        }
        let (a, b) = (Placed::new(&a, offset), Placed::new(&b, offset));
        let (a16, b16) = (Placed::new(&a16, offset), Placed::new(&b16, offset));
        let copies = if w.is_vecmat() { (COLD_BYTES / w.matrix_bytes()).ceil() as usize } else { 1 };
        let more_b = if w.bf16 { Vec::new() } else { vec![b.clone(); copies - 1] };
        let more_b16 = if w.bf16 { vec![b16.clone(); copies - 1] } else { Vec::new() };
        Inputs { a, b, a16, b16, more_b, more_b16 }
    }

    /// Every copy of `b` (f32 workloads), the first one first.
    pub fn b_copies(&self) -> Vec<&[f32]> {
        std::iter::once(&self.b).chain(&self.more_b).map(|b| &**b).collect()
    }

    /// Every copy of `b` in bf16 (bf16 workloads), the first one first.
    pub fn b16_copies(&self) -> Vec<&[bf16]> {
        std::iter::once(&self.b16).chain(&self.more_b16).map(|b| &**b).collect()
    }
}

/// The most multiply-adds the reference computes per output check; beyond that it checks
/// every column of evenly spaced rows.
const FULL_CHECK_MACS: usize = 1 << 28;
/// Rows checked when not all are.
const SAMPLED_ROWS: usize = 16;

/// The rows of `c` the reference checks.
pub fn checked_rows(w: &Workload) -> Vec<usize> {
    if w.m * w.k * w.n <= FULL_CHECK_MACS {
        (0..w.m).collect()
    } else {
        (0..SAMPLED_ROWS).map(|i| i * w.m / SAMPLED_ROWS + (i * 7) % (w.m / SAMPLED_ROWS)).collect()
    }
}

/// The reference: per checked element, the product in f64 and the error an f32 computation may
/// make, `γ(k+1)·Σ|a·b|` with f32's unit roundoff (the reference evaluator's bound for dot
/// products, from its [`gamma`]).
pub struct Reference {
    rows: Vec<usize>,
    values: Vec<f64>,
    tolerances: Vec<f64>,
}

impl Reference {
    /// Computes the reference for `w` on `inputs`.
    pub fn new(w: &Workload, inputs: &Inputs) -> Self {
        let rows = checked_rows(w);
        let gamma = gamma(w.k as u64 + 1, Dtype::F32.unit_roundoff());
        let mut values = Vec::with_capacity(rows.len() * w.n);
        let mut tolerances = Vec::with_capacity(rows.len() * w.n);
        for &i in &rows {
            let mut sums = vec![0f64; w.n];
            let mut magnitudes = vec![0f64; w.n];
            for p in 0..w.k {
                let x = f64::from(inputs.a[i * w.k + p]);
                for (j, (s, mag)) in sums.iter_mut().zip(&mut magnitudes).enumerate() {
                    let term = x * f64::from(inputs.b[p * w.n + j]);
                    *s += term;
                    *mag += term.abs();
                }
            }
            values.extend(sums);
            tolerances.extend(magnitudes.iter().map(|m| gamma * m));
        }
        Reference { rows, values, tolerances }
    }

    /// `Ok` if `c` agrees with the reference on every checked element; otherwise where not.
    pub fn check(&self, w: &Workload, c: &[f32]) -> Result<(), String> {
        for (r, &i) in self.rows.iter().enumerate() {
            for j in 0..w.n {
                let (expected, tolerance) = (self.values[r * w.n + j], self.tolerances[r * w.n + j]);
                let actual = f64::from(c[i * w.n + j]);
                // NaN (an output never written) fails too.
                let agrees = (actual - expected).abs() <= tolerance;
                if !agrees {
                    return Err(format!("c[{i}][{j}] = {actual}, expected {expected} ± {tolerance:e}"));
                }
            }
        }
        Ok(())
    }

    /// How much of the output the check covers, for the report.
    pub fn coverage(&self, w: &Workload) -> String {
        if self.rows.len() == w.m {
            "all outputs".to_owned()
        } else {
            format!("all columns of {} rows", self.rows.len())
        }
    }
}
