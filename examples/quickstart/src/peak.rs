//! The machine's f32 FMA peak on one core, for the vectors the kernel uses: independent
//! chains of fused multiply-adds, enough of them to hide the instruction's latency.

use std::hint::black_box;
use std::time::Instant;

/// Independent accumulator chains: more than latency × throughput on current x86 cores.
const CHAINS: usize = 12;

/// FMA loop iterations per measurement (a few tens of milliseconds).
const ITERATIONS: u64 = 1 << 22;

/// The vector width to measure: the kernel's target.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Vectors {
    /// 256-bit `ymm` FMAs (the AVX2 target).
    Avx2,
    /// 512-bit `zmm` FMAs (the AVX-512 target).
    Avx512,
}

impl Vectors {
    /// The target's name.
    pub fn target_name(self) -> &'static str {
        match self {
            Vectors::Avx2 => "AVX2",
            Vectors::Avx512 => "AVX-512",
        }
    }
}

/// The best of 5 measurements of the FMA rate, in GFLOP/s.
pub fn fma_peak_gflops(vectors: Vectors) -> f64 {
    let lanes = match vectors {
        Vectors::Avx2 => 8,
        Vectors::Avx512 => 16,
    };
    let flops = (2 * CHAINS * lanes) as f64 * ITERATIONS as f64;
    (0..5)
        .map(|_| {
            let start = Instant::now();
            // SAFETY: the caller chose `vectors` for a CPU that has those instructions (the
            // kernel of that target passed its CPU check).
            let sum = unsafe {
                match vectors {
                    Vectors::Avx2 => fma_loop_avx2(black_box(ITERATIONS)),
                    Vectors::Avx512 => fma_loop_avx512(black_box(ITERATIONS)),
                }
            };
            black_box(sum);
            flops / start.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max)
}

/// `iterations` steps of [`CHAINS`] independent 256-bit FMAs.
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_loop_avx2(iterations: u64) -> f32 {
    use std::arch::x86_64::*;
    let (x, y) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
    let mut acc = [_mm256_set1_ps(1.0); CHAINS];
    for _ in 0..iterations {
        for a in &mut acc {
            *a = _mm256_fmadd_ps(*a, x, y);
        }
    }
    let total = acc.iter().fold(_mm256_setzero_ps(), |s, &a| _mm256_add_ps(s, a));
    _mm256_cvtss_f32(total)
}

/// `iterations` steps of [`CHAINS`] independent 512-bit FMAs.
#[target_feature(enable = "avx512f")]
unsafe fn fma_loop_avx512(iterations: u64) -> f32 {
    use std::arch::x86_64::*;
    let (x, y) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
    let mut acc = [_mm512_set1_ps(1.0); CHAINS];
    for _ in 0..iterations {
        for a in &mut acc {
            *a = _mm512_fmadd_ps(*a, x, y);
        }
    }
    let total = acc.iter().fold(_mm512_setzero_ps(), |s, &a| _mm512_add_ps(s, a));
    _mm512_reduce_add_ps(total)
}
