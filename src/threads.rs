//! Threads for parallel loops in generated kernels.
//!
//! # The model
//!
//! A kernel with parallel loops hands each loop to [`Runtime`]'s `parallel_for`, which runs the
//! iterations on the **calling thread plus up to `max_threads − 1` workers** of one
//! process-wide pool. The pool has `available_parallelism − 1` workers, shared by every kernel
//! call in the process; a call only borrows workers that are idle at that moment, and runs the
//! rest of its iterations itself. So:
//!
//! * kernels called from many application threads at once never start threads of their own:
//!   at most the calling threads plus the pool's workers run iterations at once, and when the
//!   pool is busy each call simply runs on its own thread (so `N` busy application threads on
//!   `N` cores plus the pool can still exceed the cores: use a limit of 1 then);
//! * a parallel loop nested in another's iteration runs serially on the thread running that
//!   iteration;
//! * `max_threads` comes from [`set_max_threads`] (process default, initially the number of
//!   available cores) or [`with_max_threads`] (for one scope on one thread; 0 means the
//!   available cores in both); 1 makes every kernel serial, which is the right choice when the
//!   application already keeps every core busy.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A task generated C hands to `parallel_for`: `task(ctx, i)` runs iteration `i`.
pub type Task = unsafe extern "C" fn(ctx: *mut c_void, index: i64);

/// The runtime a kernel receives as its last argument (`morello_runtime` in the C). Its layout
/// is described in `morello_core::codegen::runtime`, and every `kernel!` asserts it.
#[repr(C)]
pub struct Runtime {
    /// Runs `task(ctx, i)` for every `i` in `0..n` and returns when all have returned.
    pub parallel_for: unsafe extern "C" fn(rt: *const Runtime, n: i64, task: Task, ctx: *mut c_void),
    /// The most threads a parallel loop may use.
    pub max_threads: i32,
}

impl Runtime {
    /// The runtime for a kernel called now on this thread (with this thread's thread limit).
    pub fn current() -> Runtime {
        Runtime { parallel_for: parallel_for_entry, max_threads: i32::try_from(max_threads()).unwrap_or(i32::MAX) }
    }
}

/// 0 means "the number of available cores".
static DEFAULT_MAX_THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SCOPED_MAX_THREADS: Cell<Option<usize>> = const { Cell::new(None) };
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

/// The number of cores this process may use, read once (the query reads files on Linux).
fn available() -> usize {
    static AVAILABLE: OnceLock<usize> = OnceLock::new();
    *AVAILABLE.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Sets the number of threads (including the caller's) a kernel call may use, for every
/// thread without a [`with_max_threads`] scope. 0 restores the default: the available cores.
pub fn set_max_threads(threads: usize) {
    DEFAULT_MAX_THREADS.store(threads, Ordering::Relaxed);
}

/// The number of threads a kernel called now on this thread may use.
pub fn max_threads() -> usize {
    let configured = SCOPED_MAX_THREADS.with(Cell::get).unwrap_or_else(|| DEFAULT_MAX_THREADS.load(Ordering::Relaxed));
    if configured == 0 { available() } else { configured }
}

/// Runs `f` with kernel calls on this thread limited to `threads` threads (the caller's
/// included; 0 means the available cores, as for [`set_max_threads`]).
pub fn with_max_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED_MAX_THREADS.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED_MAX_THREADS.with(|s| s.replace(Some(threads))));
    f()
}

unsafe extern "C" fn parallel_for_entry(rt: *const Runtime, n: i64, task: Task, ctx: *mut c_void) {
    // SAFETY: generated kernels pass back the runtime they were given.
    let max = unsafe { (*rt).max_threads };
    // SAFETY: generated kernels pass a task and context that stay valid until this returns.
    unsafe { parallel_for(n, usize::try_from(max).unwrap_or(1), task, ctx) };
}

/// The context pointer of a task, shared with workers for the duration of one call.
struct SharedCtx(*mut c_void);
// SAFETY: generated task functions only read the context (buffer pointers and loop values) and
// write disjoint parts of the buffers it points to, which is what parallel loops guarantee.
unsafe impl Send for SharedCtx {}
unsafe impl Sync for SharedCtx {}

struct Job {
    task: Task,
    ctx: SharedCtx,
    n: i64,
    next: AtomicI64,
    state: Mutex<JobState>,
    finished: Condvar,
}

#[derive(Default)]
struct JobState {
    /// The caller has stopped waiting for new helpers.
    closed: bool,
    /// Helpers currently running iterations.
    active: usize,
}

impl Job {
    fn run(&self) {
        let was = IN_TASK.with(|t| t.replace(true));
        // Claims the next iteration; never counts past `n`.
        let claim = || self.next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| (i < self.n).then_some(i + 1));
        while let Ok(i) = claim() {
            // SAFETY: `task` and `ctx` come from a kernel that is blocked in `parallel_for`
            // until every helper has left this job.
            unsafe { (self.task)(self.ctx.0, i) };
        }
        IN_TASK.with(|t| t.set(was));
    }
}

struct Pool {
    queue: Mutex<VecDeque<Arc<Job>>>,
    ready: Condvar,
    idle: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let workers = available().saturating_sub(1);
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            idle: AtomicUsize::new(0),
        }));
        for i in 0..workers {
            let spawned = std::thread::Builder::new().name(format!("morello-worker-{i}")).spawn(move || worker(pool));
            if spawned.is_ok() {
                pool.idle.fetch_add(1, Ordering::SeqCst);
            }
        }
        pool
    })
}

fn worker(pool: &'static Pool) {
    loop {
        let job = {
            let mut queue = pool.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(job) = queue.pop_front() {
                    break job;
                }
                queue = pool.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
        };
        let entered = {
            let mut state = job.state.lock().unwrap_or_else(|e| e.into_inner());
            if !state.closed {
                state.active += 1;
            }
            !state.closed
        };
        if entered {
            job.run();
            let mut state = job.state.lock().unwrap_or_else(|e| e.into_inner());
            state.active -= 1;
            if state.active == 0 {
                job.finished.notify_all();
            }
        }
        pool.idle.fetch_add(1, Ordering::SeqCst);
    }
}

/// Calls `task(ctx, i)` once for every `i` in `0..n` on at most `max_threads` threads (the
/// caller's included), returning when all calls have returned. See the module documentation.
///
/// # Safety
///
/// `task` must be safe to call with `ctx` and every index in `0..n`, concurrently from several
/// threads, for as long as this call lasts.
pub(crate) unsafe fn parallel_for(n: i64, max_threads: usize, task: Task, ctx: *mut c_void) {
    if n <= 0 {
        return;
    }
    let wanted = max_threads.saturating_sub(1).min(usize::try_from(n - 1).unwrap_or(usize::MAX));
    let nested = IN_TASK.with(Cell::get);
    let helpers = if wanted == 0 || nested { 0 } else { reserve(pool(), wanted) };
    let job = Arc::new(Job {
        task,
        ctx: SharedCtx(ctx),
        n,
        next: AtomicI64::new(0),
        state: Mutex::new(JobState::default()),
        finished: Condvar::new(),
    });
    if helpers > 0 {
        let pool = pool();
        let mut queue = pool.queue.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..helpers {
            queue.push_back(Arc::clone(&job));
        }
        drop(queue);
        pool.ready.notify_all();
    }
    job.run();
    let mut state = job.state.lock().unwrap_or_else(|e| e.into_inner());
    state.closed = true;
    while state.active > 0 {
        state = job.finished.wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

/// Takes up to `wanted` idle workers; returns how many.
fn reserve(pool: &Pool, wanted: usize) -> usize {
    let mut taken = 0;
    let _ = pool.idle.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |idle| {
        taken = idle.min(wanted);
        Some(idle - taken)
    });
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32};

    /// Tests share the one pool; running them one at a time keeps their counts their own.
    static POOL_TESTS: Mutex<()> = Mutex::new(());

    fn serialized() -> std::sync::MutexGuard<'static, ()> {
        POOL_TESTS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a test task records. Tasks never panic (a panic cannot unwind out of an
    /// `extern "C"` function): they record, and the test asserts afterwards.
    #[derive(Default)]
    struct Counts {
        hits: Vec<AtomicU32>,
        threads: Mutex<std::collections::BTreeSet<String>>,
        nested: bool,
        /// A nested loop ran an iteration other than once, or on another thread.
        nested_wrong: AtomicBool,
        /// Threads inside tasks right now, and the most ever at once (shared between callers).
        running: Option<(&'static AtomicUsize, &'static AtomicUsize)>,
    }

    unsafe extern "C" fn count(ctx: *mut c_void, i: i64) {
        // SAFETY: the tests pass a `Counts` that outlives the loop.
        let counts = unsafe { &*(ctx as *const Counts) };
        if let Some((running, most)) = counts.running {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
        }
        counts.hits[i as usize].fetch_add(1, Ordering::SeqCst);
        let name = format!("{:?}", std::thread::current().id());
        counts.threads.lock().unwrap_or_else(|e| e.into_inner()).insert(name);
        if counts.nested {
            let inner = Counts { hits: (0..4).map(|_| AtomicU32::new(0)).collect(), ..Counts::default() };
            // SAFETY: `count` with a `Counts` that outlives the call.
            unsafe { parallel_for(4, 8, count, &inner as *const Counts as *mut c_void) };
            let once = inner.hits.iter().all(|h| h.load(Ordering::SeqCst) == 1);
            let one_thread = inner.threads.lock().unwrap_or_else(|e| e.into_inner()).len() == 1;
            if !(once && one_thread) {
                counts.nested_wrong.store(true, Ordering::SeqCst);
            }
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
        if let Some((running, _)) = counts.running {
            running.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn run(counts: Counts, threads: usize) -> Counts {
        // SAFETY: `count` with a `Counts` that outlives the call.
        unsafe { parallel_for(counts.hits.len() as i64, threads, count, &counts as *const Counts as *mut c_void) };
        counts
    }

    fn counts(n: usize) -> Counts {
        Counts { hits: (0..n).map(|_| AtomicU32::new(0)).collect(), ..Counts::default() }
    }

    fn all_once(c: &Counts) -> bool {
        c.hits.iter().all(|h| h.load(Ordering::SeqCst) == 1)
    }

    #[test]
    fn every_iteration_runs_exactly_once() {
        let _serial = serialized();
        for (n, threads) in [(1, 4), (7, 2), (64, 8), (100, 1)] {
            let c = run(counts(n), threads);
            assert!(all_once(&c), "n={n} threads={threads}");
            assert!(c.threads.lock().unwrap().len() <= threads.max(1));
        }
    }

    #[test]
    fn one_thread_means_the_callers() {
        let _serial = serialized();
        let c = run(counts(32), 1);
        let threads = c.threads.lock().unwrap();
        assert_eq!(threads.len(), 1);
        assert!(threads.contains(&format!("{:?}", std::thread::current().id())));
    }

    #[test]
    fn nested_loops_are_serial_and_complete() {
        let _serial = serialized();
        let c = run(Counts { nested: true, ..counts(16) }, 4);
        assert!(all_once(&c));
        assert!(!c.nested_wrong.load(Ordering::SeqCst), "a nested loop ran in parallel or not exactly once");
    }

    #[test]
    fn concurrent_callers_never_exceed_the_pool() {
        let _serial = serialized();
        static RUNNING: AtomicUsize = AtomicUsize::new(0);
        static MOST: AtomicUsize = AtomicUsize::new(0);
        let workers = available() - 1;
        let callers = 4;
        std::thread::scope(|s| {
            for _ in 0..callers {
                s.spawn(|| {
                    let c = run(Counts { running: Some((&RUNNING, &MOST)), ..counts(40) }, 16);
                    assert!(all_once(&c));
                });
            }
        });
        let most = MOST.load(Ordering::SeqCst);
        assert!(
            most <= callers + workers,
            "{most} threads ran tasks at once; callers and pool hold {}",
            callers + workers
        );
        // Every reserved worker came back.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while pool().idle.load(Ordering::SeqCst) != workers && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(pool().idle.load(Ordering::SeqCst), workers);
    }

    #[test]
    fn limits_nest_and_restore() {
        set_max_threads(0);
        assert_eq!(max_threads(), available());
        with_max_threads(3, || {
            assert_eq!(max_threads(), 3);
            with_max_threads(1, || assert_eq!(max_threads(), 1));
            with_max_threads(0, || assert_eq!(max_threads(), available()));
            assert_eq!(max_threads(), 3);
        });
        assert_eq!(max_threads(), available());
    }
}
