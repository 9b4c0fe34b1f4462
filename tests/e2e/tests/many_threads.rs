//! Many application threads calling the same kernels at once (issue 64, part 5).
//!
//! Sixteen threads each call kernels a few hundred times on inputs of their own and check
//! every output against the reference evaluator. The kernels cover what calls share: spare
//! heap buffers kept between calls (`morello_take_buffer`), parallel loops on the one
//! process-wide pool, both in one kernel (a heap buffer per parallel iteration), and plain
//! synthesized kernels. A deadlock aborts the test after a deadline instead of hanging it.

use morello::KernelError;
use morello_core::harness::cpu_supports;
use morello_core::reference::{Element, HostTensor, evaluate};
use morello_core::spec::Spec;
use morello_core::target::{PORTABLE, Target, X86_AVX2};
use morello_e2e::concurrent;
use std::sync::mpsc;
use std::time::Duration;

/// Application threads calling kernels at once.
const THREADS: usize = 16;
/// Calls per thread.
const CALLS: usize = 240;
/// Input sets per thread and kernel (each thread's own, from seeds no other thread uses).
const INPUT_SETS: u64 = 2;
/// How long a whole stress run may take before it counts as a deadlock.
const DEADLINE: Duration = Duration::from_secs(120);

/// An element type of the kernels under test: exactly representable as an f64.
trait Scalar: Element + Into<f64> + Send + Sync + 'static {
    /// What output buffers hold before a call, so an element the kernel forgot to write shows.
    const SENTINEL: Self;
}

impl Scalar for f32 {
    const SENTINEL: f32 = f32::NAN;
}

impl Scalar for u32 {
    const SENTINEL: u32 = 0xdead_beef;
}

/// Runs a kernel on input buffers (in parameter order) and an output buffer.
type Run<T> = fn(&[Vec<T>], &mut [T]) -> Result<(), KernelError>;

/// A kernel under test.
struct Kernel<T> {
    /// Its name, for messages.
    name: &'static str,
    /// Its Spec, as `kernel!` declared it.
    spec: &'static str,
    /// The target it was compiled for.
    target: &'static Target,
    /// Calls its `try_` wrapper.
    run: Run<T>,
}

/// A kernel with one set of random inputs, and the reference's output for them.
struct Case<T> {
    name: &'static str,
    seed: u64,
    run: Run<T>,
    inputs: Vec<Vec<T>>,
    /// The reference output, in buffer order.
    expected: Vec<f64>,
    /// The absolute error allowed in each element of `expected` (0 for exact kernels).
    tolerance: Vec<f64>,
}

impl<T: Scalar> Case<T> {
    /// Random inputs from `seed` (one seed per operand, counting up) and the reference output.
    fn new(kernel: &Kernel<T>, seed: u64) -> Case<T> {
        let spec: Spec = kernel.spec.parse().expect("kernel Specs parse");
        let operands = spec.operands();
        let out = operands.len() - 1;
        let mut tensors: Vec<HostTensor> = operands.iter().zip(seed..).map(|(t, s)| HostTensor::random(t, s)).collect();
        let inputs = tensors[..out].iter().map(HostTensor::to_elements).collect();
        let tolerances = evaluate(spec.logical(), &mut tensors);
        let expected: Vec<f64> = tensors[out].to_elements::<T>().into_iter().map(Into::into).collect();
        // Comparing whole buffers is only sound if every buffer element is a logical one.
        assert_eq!(expected.len() as u64, operands[out].volume(), "{}: the output has padding", kernel.name);
        let tolerance = tolerances.0[out].clone().expect("the output is written");
        assert_eq!(tolerance.len(), expected.len());
        Case { name: kernel.name, seed, run: kernel.run, inputs, expected, tolerance }
    }

    /// Calls the kernel into an output full of sentinels and checks every element.
    fn call(&self) -> Result<(), KernelError> {
        let mut out = vec![T::SENTINEL; self.expected.len()];
        (self.run)(&self.inputs, &mut out)?;
        // One adapter only: iterator chains are slow in the unoptimized test profile.
        for (i, &actual) in out.iter().enumerate() {
            let (actual, expected, tolerance): (f64, f64, f64) = (actual.into(), self.expected[i], self.tolerance[i]);
            // False for a NaN, so a sentinel left in a float output fails.
            let within = (actual - expected).abs() <= tolerance;
            if !within {
                panic!(
                    "{} (inputs from seed {}): buffer element {i} is {actual}, expected {expected} (tolerance {tolerance:e})",
                    self.name, self.seed
                );
            }
        }
        Ok(())
    }
}

/// A case of any element type.
trait Call: Send + Sync {
    /// Calls the kernel once and checks its output (panicking on a wrong element).
    fn call(&self) -> Result<(), KernelError>;
}

impl<T: Scalar> Call for Case<T> {
    fn call(&self) -> Result<(), KernelError> {
        Case::call(self)
    }
}

/// A kernel of any element type.
trait AnyKernel: Sync {
    /// The kernel's name, for messages.
    fn name(&self) -> &'static str;
    /// The target it was compiled for.
    fn target(&self) -> &'static Target;
    /// A case with random inputs from `seed` and their reference output.
    fn case(&self, seed: u64) -> Box<dyn Call>;
}

impl<T: Scalar> AnyKernel for Kernel<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn target(&self) -> &'static Target {
        self.target
    }

    fn case(&self, seed: u64) -> Box<dyn Call> {
        Box::new(Case::new(self, seed))
    }
}

static RELAYOUT_THROUGH_HEAP: Kernel<f32> = Kernel {
    name: "relayout_through_heap",
    spec: concurrent::RELAYOUT_THROUGH_HEAP_SPEC,
    target: &X86_AVX2,
    run: |i, out| concurrent::try_relayout_through_heap(&i[0], out),
};

static MATMUL_ROW_BLOCKS: Kernel<f32> = Kernel {
    name: "matmul_row_blocks",
    spec: concurrent::MATMUL_ROW_BLOCKS_SPEC,
    target: &X86_AVX2,
    run: |i, out| concurrent::try_matmul_row_blocks(&i[0], &i[1], out),
};

static MATMUL_HEAP_PER_ITERATION: Kernel<f32> = Kernel {
    name: "matmul_heap_per_iteration",
    spec: concurrent::MATMUL_HEAP_PER_ITERATION_SPEC,
    target: &X86_AVX2,
    run: |i, out| concurrent::try_matmul_heap_per_iteration(&i[0], &i[1], out),
};

static MATMUL_HEAP_PER_ITERATION_PORTABLE: Kernel<f32> = Kernel {
    name: "matmul_heap_per_iteration_portable",
    spec: concurrent::MATMUL_HEAP_PER_ITERATION_PORTABLE_SPEC,
    target: &PORTABLE,
    run: |i, out| concurrent::try_matmul_heap_per_iteration_portable(&i[0], &i[1], out),
};

static MATMUL_SYNTHESIZED: Kernel<f32> = Kernel {
    name: "matmul_synthesized",
    spec: concurrent::MATMUL_SYNTHESIZED_SPEC,
    target: &X86_AVX2,
    run: |i, out| concurrent::try_matmul_synthesized(&i[0], &i[1], out),
};

static MATMUL_U32_SYNTHESIZED: Kernel<u32> = Kernel {
    name: "matmul_u32_synthesized",
    spec: concurrent::MATMUL_U32_SYNTHESIZED_SPEC,
    target: &X86_AVX2,
    run: |i, out| concurrent::try_matmul_u32_synthesized(&i[0], &i[1], out),
};

/// Every kernel of `kernels` this CPU can run; checks that the others refuse to run.
fn runnable(kernels: &[&'static dyn AnyKernel]) -> Vec<&'static dyn AnyKernel> {
    let mut kept = Vec::new();
    for &kernel in kernels {
        let supported = cpu_supports(kernel.target());
        match kernel.case(0).call() {
            Ok(()) => {
                assert!(supported, "{} ran although this CPU lacks its features", kernel.name());
                kept.push(kernel);
            }
            Err(KernelError::UnsupportedCpu { missing, .. }) => {
                assert!(!supported, "{} refused although the CPU has {missing:?}", kernel.name());
                eprintln!("note: this CPU lacks {missing:?}; {} is not stress-tested", kernel.name());
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(!kept.is_empty(), "no kernel to stress-test");
    kept
}

/// Runs `f`, aborting the process (failing the test) if it has not returned by `deadline`:
/// a deadlocked pool or spare-buffer handoff must fail the test, not hang it.
fn before_deadline<R>(deadline: Duration, f: impl FnOnce() -> R) -> R {
    let (done, watch) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(deadline) {
            eprintln!("deadlock: the kernel calls did not finish within {deadline:?}");
            std::process::abort();
        }
    });
    let result = f();
    let _ = done.send(());
    watchdog.join().expect("the watchdog does not panic");
    result
}

/// `THREADS` threads, each calling `kernels` `CALLS` times in turn on its own inputs, starting
/// at a different kernel so that different kernels run at once; thread `t` runs under a
/// thread limit of `limits[t % limits.len()]`.
fn stress(kernels: &[&'static dyn AnyKernel], limits: &[usize]) {
    before_deadline(DEADLINE, || {
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let limit = limits[t % limits.len()];
                s.spawn(move || {
                    // Seeds 1000·(t+1)… leave room for every operand of every input set.
                    let base = 1000 * (t as u64 + 1);
                    let cases: Vec<Vec<Box<dyn Call>>> = kernels
                        .iter()
                        .enumerate()
                        .map(|(k, kernel)| {
                            (0..INPUT_SETS).map(|set| kernel.case(base + 100 * k as u64 + 10 * set)).collect()
                        })
                        .collect();
                    morello::with_max_threads(limit, || {
                        for call in 0..CALLS {
                            let kernel = (t + call) % cases.len();
                            let set = (call / cases.len()) % cases[kernel].len();
                            cases[kernel][set].call().expect("the kernel runs on this CPU");
                        }
                    });
                });
            }
        });
    });
}

#[test]
fn many_threads_call_many_kernels_at_once() {
    let kernels = runnable(&[
        &RELAYOUT_THROUGH_HEAP,
        &MATMUL_ROW_BLOCKS,
        &MATMUL_HEAP_PER_ITERATION,
        &MATMUL_HEAP_PER_ITERATION_PORTABLE,
        &MATMUL_SYNTHESIZED,
        &MATMUL_U32_SYNTHESIZED,
    ]);
    // The default limit (every core), a few threads, and serial calls, side by side.
    stress(&kernels, &[0, 2, 1, 4]);
}

#[test]
fn many_threads_share_the_pool_through_parallel_kernels() {
    let kernels = runnable(&[&MATMUL_ROW_BLOCKS, &MATMUL_HEAP_PER_ITERATION, &MATMUL_HEAP_PER_ITERATION_PORTABLE]);
    // Calls ask for every core (0) or for more workers than a small pool has (8), so the
    // application threads compete for the pool's workers.
    stress(&kernels, &[0, 8]);
}

#[test]
fn many_threads_share_one_kernels_spare_buffers() {
    let kernels = runnable(&[&RELAYOUT_THROUGH_HEAP]);
    // More calls at once than the site keeps spares, so buffers are taken, allocated, given
    // back and freed concurrently.
    stress(&kernels, &[0]);
}
