//! Timing by the method of `../shared/reference/measuring.md`: a warm-up call, then at least five
//! repetitions of at least 0.2 s each; the median and the best time per call.

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

/// Measures `f`.
pub fn measure(mut f: impl FnMut()) -> Measurement {
    f();
    let cpu_start = process_cpu_time();
    let wall_start = Instant::now();
    let mut per_call: Vec<Duration> = (0..REPETITIONS)
        .map(|_| {
            let start = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || start.elapsed() < REPETITION_TIME {
                f();
                calls += 1;
            }
            start.elapsed() / calls
        })
        .collect();
    let cpu_share = (process_cpu_time() - cpu_start).as_secs_f64() / wall_start.elapsed().as_secs_f64();
    per_call.sort();
    Measurement { median: per_call[REPETITIONS / 2], best: per_call[0], cpu_share }
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
