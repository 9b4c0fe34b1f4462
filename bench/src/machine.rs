//! What the machine can do, measured in the same run as the kernels: the f32 FMA peak and the
//! read bandwidth that bounds a vector-matrix product; and the process settings that make
//! measurements comparable (pinning, CPU share).

use crate::timing::measure_in_turns;
use morello_core::harness::{cpu_supports, missing_cpu_features};
use morello_core::target::{Target, TargetId};
use std::arch::x86_64::*;
use std::hint::black_box;
use std::time::Duration;

/// The instruction set the benchmark's kernels were built for (`build.rs` chooses), which the
/// FMA peak and read loops use too.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Isa {
    /// The AVX-512 target: 512-bit vectors.
    Avx512,
    /// The AVX2 target: 256-bit vectors and FMA.
    Avx2,
}

impl Isa {
    /// The kernels' instruction set.
    pub const KERNELS: Isa = if cfg!(kernels_avx2) { Isa::Avx2 } else { Isa::Avx512 };

    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "AVX-512",
            Isa::Avx2 => "AVX2",
        }
    }

    /// f32 lanes of the target's widest vector register.
    fn lanes(self) -> usize {
        (self.target().widest_vector_bytes() / 4) as usize
    }

    /// The Morello target of this instruction set, whose ISA features the CPU must have.
    fn target(self) -> &'static Target {
        match self {
            Isa::Avx512 => TargetId::X86Avx512.target(),
            Isa::Avx2 => TargetId::X86Avx2.target(),
        }
    }

    /// The features of this instruction set's target that this CPU lacks.
    pub fn missing_features(self) -> Vec<&'static str> {
        missing_cpu_features(self.target())
    }
}

/// Independent accumulators in the FMA loop: two FMA ports with a 4-cycle latency need at
/// least 8 in flight.
const FMA_CHAINS: usize = 12;
/// FMA loop iterations per call: 2²⁴, about 25 ms of FMAs on a 4 GHz core with two FMA pipes,
/// so that starting the other threads' loops in [`fma_peak_on`] (and the scheduler spreading
/// them over the CPUs) costs under 1% of a call; much shorter calls measured a two-thread peak
/// below what the libraries' GEMMs reach.
const FMA_ITERATIONS: u64 = 1 << 24;

/// Floating-point operations of one [`fma_peak_call`].
fn fma_flops_per_call() -> f64 {
    (FMA_ITERATIONS as usize * FMA_CHAINS * Isa::KERNELS.lanes() * 2) as f64
}

/// One call of the FMA peak loop: `FMA_CHAINS` independent chains of fused multiply-adds on
/// the kernels' widest vectors, kept in registers.
pub fn fma_peak_call() -> f32 {
    assert!(cpu_supports(Isa::KERNELS.target()), "the FMA peak loop needs {}", Isa::KERNELS.name());
    // SAFETY: the instruction set's features are present (checked above).
    unsafe {
        match Isa::KERNELS {
            Isa::Avx512 => fma_chains_512(FMA_ITERATIONS),
            Isa::Avx2 => fma_chains_256(FMA_ITERATIONS),
        }
    }
}

#[target_feature(enable = "avx512f")]
fn fma_chains_512(iterations: u64) -> f32 {
    let scale = _mm512_set1_ps(0.999_999);
    let step = _mm512_set1_ps(1e-7);
    let mut acc = [_mm512_set1_ps(1.0); FMA_CHAINS];
    for _ in 0..black_box(iterations) {
        for a in &mut acc {
            *a = _mm512_fmadd_ps(*a, scale, step);
        }
    }
    let mut total = _mm512_setzero_ps();
    for a in acc {
        total = _mm512_add_ps(total, a);
    }
    _mm512_reduce_add_ps(total)
}

#[target_feature(enable = "avx2,fma")]
fn fma_chains_256(iterations: u64) -> f32 {
    let scale = _mm256_set1_ps(0.999_999);
    let step = _mm256_set1_ps(1e-7);
    let mut acc = [_mm256_set1_ps(1.0); FMA_CHAINS];
    for _ in 0..black_box(iterations) {
        for a in &mut acc {
            *a = _mm256_fmadd_ps(*a, scale, step);
        }
    }
    let mut total = _mm256_setzero_ps();
    for a in acc {
        total = _mm256_add_ps(total, a);
    }
    sum_256(total)
}

/// The sum of a 256-bit vector's lanes.
#[target_feature(enable = "avx")]
fn sum_256(v: __m256) -> f32 {
    let mut lanes = [0f32; 8];
    // SAFETY: `lanes` holds 8 f32s; the store is unaligned.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), v) };
    lanes.iter().sum()
}

/// Rows read side by side by [`read_call`] for the bandwidth ceiling, as a vector-matrix
/// kernel reads its matrix. One core may read one sequential stream faster (see
/// [`Limits::sequential_read_gbps`]).
pub const READ_STREAMS: usize = 8;

/// Cache lines each stream reads per step in the second read pattern. On some CPUs one line a
/// step reads well below what the libraries' vector-matrix products reach: the loads in
/// flight, not the memory, set that pattern's ceiling, and 4 lines a step does not.
pub const READ_LINES: usize = 4;

/// Cache lines per stream a step of the read patterns timed for the bandwidth ceiling: one,
/// and [`READ_LINES`]. Which is faster changes from minute to minute on a shared host, so the
/// faster counts.
pub const READ_PATTERNS: [usize; 2] = [1, READ_LINES];

/// A buffer larger than the caches (the VM's L3 behaves like 64–128 MiB), for [`read_call`].
pub fn read_buffer() -> Vec<f32> {
    const BYTES: usize = 512 << 20;
    (0..BYTES / 4).map(|i| (i % 7) as f32).collect()
}

/// Reads all of `buffer` once, in `STREAMS` interleaved sequential streams, each reading
/// `LINES` cache lines a step in the kernels' widest vectors, and returns a sum so the reads
/// cannot be skipped.
pub fn read_call<const STREAMS: usize, const LINES: usize>(buffer: &[f32]) -> f32 {
    assert!(cpu_supports(Isa::KERNELS.target()), "the read loop needs {}", Isa::KERNELS.name());
    // SAFETY: the instruction set's features are present (checked above).
    unsafe {
        match Isa::KERNELS {
            Isa::Avx512 => read_streams_512::<STREAMS, LINES>(buffer),
            Isa::Avx2 => read_streams_256::<STREAMS, LINES>(buffer),
        }
    }
}

#[target_feature(enable = "avx512f")]
fn read_streams_512<const STREAMS: usize, const LINES: usize>(buffer: &[f32]) -> f32 {
    // One 64-byte vector is one line.
    let step = 16 * LINES;
    let stream_len = buffer.len() / STREAMS / step * step;
    let mut acc = [_mm512_setzero_ps(); STREAMS];
    let mut i = 0;
    while i < stream_len {
        for (s, a) in acc.iter_mut().enumerate() {
            let piece = &buffer[s * stream_len + i..s * stream_len + i + step];
            // SAFETY: each chunk holds 16 f32s; the loads are unaligned.
            let lines = piece.chunks_exact(16).map(|chunk| unsafe { _mm512_loadu_ps(chunk.as_ptr()) });
            // One accumulator per stream: more would not fit in the registers with the loads.
            *a = _mm512_add_ps(*a, lines.reduce(|x, y| _mm512_add_ps(x, y)).expect("a step reads a line"));
        }
        i += step;
    }
    acc.iter().map(|&a| _mm512_reduce_add_ps(a)).sum()
}

#[target_feature(enable = "avx2")]
fn read_streams_256<const STREAMS: usize, const LINES: usize>(buffer: &[f32]) -> f32 {
    // Two 32-byte vectors make a line.
    let step = 16 * LINES;
    let stream_len = buffer.len() / STREAMS / step * step;
    let mut acc = [_mm256_setzero_ps(); STREAMS];
    let mut i = 0;
    while i < stream_len {
        for (s, a) in acc.iter_mut().enumerate() {
            let piece = &buffer[s * stream_len + i..s * stream_len + i + step];
            // SAFETY: each chunk holds 8 f32s; the loads are unaligned.
            let halves = piece.chunks_exact(8).map(|chunk| unsafe { _mm256_loadu_ps(chunk.as_ptr()) });
            *a = _mm256_add_ps(*a, halves.reduce(|x, y| _mm256_add_ps(x, y)).expect("a step reads a line"));
        }
        i += step;
    }
    acc.iter().map(|&a| sum_256(a)).sum()
}

/// The machine's limits as measured now: medians, and the best repetition.
pub struct Limits {
    /// f32 FMA peak, GFLOP/s.
    pub peak_gflops: f64,
    /// The best repetition's FMA rate, GFLOP/s.
    pub best_peak_gflops: f64,
    /// Read bandwidth of data that does not fit in cache, [`READ_STREAMS`] streams per
    /// thread, GB/s: the vector-matrix ceiling. The better median of the [`READ_PATTERNS`]
    /// (`read_lines` says which).
    pub read_gbps: f64,
    /// Lines per stream a step of the pattern that set [`Limits::read_gbps`].
    pub read_lines: usize,
    /// That pattern's best repetition, GB/s.
    pub best_read_gbps: f64,
    /// Read bandwidth with one sequential stream per thread, GB/s.
    pub sequential_read_gbps: f64,
}

/// Floating-point operations of one [`fma_peak_on`] call on `threads` threads.
pub fn fma_flops_on(threads: usize) -> f64 {
    fma_flops_per_call() * threads as f64
}

/// One call of the FMA peak loop on each of `threads` threads, side by side.
pub fn fma_peak_on(threads: usize) {
    on_threads(threads, |_| {
        black_box(fma_peak_call());
    });
}

/// Reads all of `buffer` once, split into `threads` equal parts read side by side, each in
/// [`READ_STREAMS`] streams of `lines` cache lines a step (one of [`READ_PATTERNS`]), or in one
/// sequential stream if `sequential`.
pub fn read_on(buffer: &[f32], threads: usize, lines: usize, sequential: bool) {
    let read: fn(&[f32]) -> f32 = match (sequential, lines) {
        (true, _) => read_call::<1, 1>,
        (false, 1) => read_call::<READ_STREAMS, 1>,
        (false, READ_LINES) => read_call::<READ_STREAMS, READ_LINES>,
        (false, other) => panic!("no read pattern of {other} lines a step"),
    };
    let per_thread = buffer.len().div_ceil(threads);
    on_threads(threads, |t| {
        if let Some(part) = buffer.chunks(per_thread).nth(t) {
            black_box(read(part));
        }
    });
}

/// Runs `work(t)` for each `t` below `threads`: on this thread if `threads` is 1, else each on
/// a thread of its own, pinned to the `t`-th CPU [`pin_to`] gave this process (if there is
/// one), while this thread waits, so no two loops share a CPU whatever the scheduler does.
fn on_threads(threads: usize, work: impl Fn(usize) + Sync) {
    if threads == 1 {
        return work(0);
    }
    let cpus = pinned_cpus();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (work, cpu) = (&work, cpus.get(t).copied());
            s.spawn(move || {
                if let Some(cpu) = cpu {
                    // Unpinned, the loop still runs; only its placement is left to the scheduler.
                    let _ = pin_to(&[cpu]);
                }
                work(t)
            });
        }
    })
}

/// Measures the FMA peak and the bandwidth of reading `buffer` (larger than the caches,
/// [`read_buffer`]) on `threads` threads (each thread runs its own loop; the figures are
/// totals), pausing `settle` before each repetition as the contenders' timing does. (Without
/// the pause, the start of a two-thread phase had measured one thread's worth; the cause,
/// presumably worker threads the libraries had just started, was not traced.)
pub fn measure_limits(threads: usize, buffer: &[f32], settle: Duration) -> Limits {
    let measure = |f: &mut dyn FnMut()| measure_in_turns(&mut [f], settle).remove(0);
    let fma = measure(&mut || fma_peak_on(threads));
    let (read, read_lines) = READ_PATTERNS
        .iter()
        .map(|&lines| (measure(&mut || read_on(buffer, threads, lines, false)), lines))
        .min_by_key(|(m, _)| m.median)
        .expect("there are read patterns");
    let sequential = measure(&mut || read_on(buffer, threads, 1, true));
    let flops = fma_flops_on(threads);
    let bytes = (buffer.len() * 4) as f64;
    let per_second = |amount: f64, t: Duration| amount / t.as_secs_f64() / 1e9;
    Limits {
        peak_gflops: per_second(flops, fma.median),
        best_peak_gflops: per_second(flops, fma.best),
        read_gbps: per_second(bytes, read.median),
        read_lines,
        best_read_gbps: per_second(bytes, read.best),
        sequential_read_gbps: per_second(bytes, sequential.median),
    }
}

unsafe extern "C" {
    fn sched_setaffinity(pid: i32, size: usize, mask: *const u64) -> i32;
}

/// The CPUs the process's first [`pin_to`] call chose: the phase's CPUs.
static PHASE_CPUS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// The CPUs the phase was pinned to (empty before [`pin_to`]).
fn pinned_cpus() -> &'static [usize] {
    PHASE_CPUS.get().map_or(&[], Vec::as_slice)
}

/// Pins the calling thread (and threads it starts later) to CPUs `cpus`; the first call's CPUs
/// are the phase's, over which [`fma_peak_on`] and [`read_on`] spread their threads.
pub fn pin_to(cpus: &[usize]) -> std::io::Result<()> {
    let mut mask = [0u64; 16];
    for &c in cpus {
        mask[c / 64] |= 1 << (c % 64);
    }
    // SAFETY: the mask is a valid cpu_set_t of 1024 bits; pid 0 is the calling thread.
    let status = unsafe { sched_setaffinity(0, std::mem::size_of_val(&mask), mask.as_ptr()) };
    if status != 0 {
        return Err(std::io::Error::last_os_error());
    }
    PHASE_CPUS.get_or_init(|| cpus.to_vec());
    Ok(())
}

/// The 1-minute load average, if readable.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}
