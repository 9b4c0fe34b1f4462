//! Timing by the method of `../shared/reference/measuring.md`: a warm-up call, then at least five
//! repetitions of at least 0.2 s each; the median and the best time per call.
//!
//! Contenders compared with each other are timed in turns ([`measure_in_turns`]): each round
//! runs one repetition of each, so a slow spell of the shared host (they last seconds) falls on
//! all of them alike instead of on whichever one it happened to meet.

use std::time::{Duration, Instant};

/// Repetitions timed per measurement.
const REPETITIONS: usize = 5;
/// The least time one repetition runs for.
const REPETITION_TIME: Duration = Duration::from_millis(200);

/// Time per call.
#[derive(Clone, Copy, Debug)]
pub struct Measurement {
    /// Median over the repetitions.
    pub median: Duration,
    /// Best repetition.
    pub best: Duration,
    /// Process CPU time over wall time while measuring (below 0.95 × threads: disturbed).
    pub cpu_share: f64,
}

/// Measures each of `runs` in turns: a warm-up call of each, then [`REPETITIONS`] rounds in
/// which each, after a pause of `settle` (in which the worker threads of the one before stop
/// spinning) and one more untimed call (which brings its data back into the caches the one
/// before used), runs for at least [`REPETITION_TIME`]. Returns one measurement per function,
/// in order; a function's CPU share counts its own repetitions. (One function alone is
/// measured the same way.)
pub fn measure_in_turns(runs: &mut [impl FnMut()], settle: Duration) -> Vec<Measurement> {
    for f in runs.iter_mut() {
        f();
    }
    let mut per_call: Vec<Vec<Duration>> = vec![Vec::with_capacity(REPETITIONS); runs.len()];
    let mut cpu = vec![Duration::ZERO; runs.len()];
    let mut wall = vec![Duration::ZERO; runs.len()];
    for _ in 0..REPETITIONS {
        for (i, f) in runs.iter_mut().enumerate() {
            std::thread::sleep(settle);
            f();
            let cpu_start = process_cpu_time();
            let wall_start = Instant::now();
            per_call[i].push(repetition(f));
            cpu[i] += process_cpu_time() - cpu_start;
            wall[i] += wall_start.elapsed();
        }
    }
    per_call
        .into_iter()
        .zip(cpu.iter().zip(&wall))
        .map(|(times, (cpu, wall))| summary(times, cpu.as_secs_f64() / wall.as_secs_f64()))
        .collect()
}

/// One repetition: calls `f` until at least [`REPETITION_TIME`] has passed (once at least);
/// the time per call.
fn repetition(f: &mut impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut calls = 0u32;
    while calls == 0 || start.elapsed() < REPETITION_TIME {
        f();
        calls += 1;
    }
    start.elapsed() / calls
}

/// The median and best of the repetitions' times per call.
fn summary(mut per_call: Vec<Duration>, cpu_share: f64) -> Measurement {
    per_call.sort();
    Measurement { median: per_call[per_call.len() / 2], best: per_call[0], cpu_share }
}

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

/// CPU time of the whole process so far.
fn process_cpu_time() -> Duration {
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid timespec to write.
    let status = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(t.sec as u64, t.nsec as u32)
}
