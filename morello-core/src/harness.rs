//! Compiles a generated kernel with a small driver program and runs it on host tensors.
//!
//! Used by tests (every generated kernel is checked against [`crate::reference`]) and by tools.
//! The driver reads each operand's buffer from standard input, calls the kernel with pointers
//! deliberately offset from any alignment boundary (kernels must not assume alignment), and
//! writes every buffer back to standard output.

use crate::codegen::CKernel;
use crate::reference::{HostTensor, Mismatch, Tolerances, compare, evaluate};
use crate::spec::LogicalSpec;
use crate::target::Target;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// A C compiler on this machine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CCompiler {
    /// The command to run.
    pub program: String,
}

/// Why a kernel could not be run.
#[derive(Debug, Error)]
pub enum HarnessError {
    /// File or process I/O failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The compiler rejected the C.
    #[error("{compiler} rejected the generated C:\n{stderr}")]
    Compile {
        /// The compiler.
        compiler: String,
        /// Its diagnostics.
        stderr: String,
    },
    /// The program failed.
    #[error("the kernel program failed ({status}):\n{stderr}")]
    Run {
        /// Exit status.
        status: String,
        /// Its standard error.
        stderr: String,
    },
    /// The kernel ran, and what it wrote differs from the reference evaluator's result.
    #[error("the kernel disagrees with the reference evaluator: {0}")]
    Wrong(#[from] Mismatch),
}

impl CCompiler {
    /// gcc.
    pub fn gcc() -> Self {
        CCompiler { program: "gcc".to_owned() }
    }

    /// clang.
    pub fn clang() -> Self {
        CCompiler { program: "clang".to_owned() }
    }

    /// Whether the compiler can be run.
    pub fn is_available(&self) -> bool {
        Command::new(&self.program).arg("--version").output().is_ok_and(|o| o.status.success())
    }

    /// Flags for compiling kernels for `target`: optimized, warnings as errors, and the
    /// target's ISA flags.
    pub fn flags(target: &Target) -> Vec<String> {
        let mut flags: Vec<String> =
            ["-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-pthread"].iter().map(|s| (*s).to_owned()).collect();
        flags.extend(target.compiler_flags().map(str::to_owned));
        flags
    }
}

/// This machine's CPU model name, from `/proc/cpuinfo` (`None` where it has none): what every
/// measured figure names.
pub fn cpu_model_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, name)| name.trim().to_owned()))
}

/// Whether this machine's CPU can run kernels for `target`.
pub fn cpu_supports(target: &Target) -> bool {
    target.isa.iter().all(|f| feature_detected(f.detect_name))
}

/// The ISA features of `target` (their detection names, such as `avx512bf16`) that this
/// machine's CPU lacks: empty where [`cpu_supports`] holds.
pub fn missing_cpu_features(target: &Target) -> Vec<&'static str> {
    target.isa.iter().filter(|f| !feature_detected(f.detect_name)).map(|f| f.detect_name).collect()
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn feature_detected(name: &str) -> bool {
    match name {
        "avx2" => std::is_x86_feature_detected!("avx2"),
        "fma" => std::is_x86_feature_detected!("fma"),
        "avx512f" => std::is_x86_feature_detected!("avx512f"),
        "avx512bw" => std::is_x86_feature_detected!("avx512bw"),
        "avx512vl" => std::is_x86_feature_detected!("avx512vl"),
        "avx512bf16" => std::is_x86_feature_detected!("avx512bf16"),
        _ => false,
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn feature_detected(_: &str) -> bool {
    false
}

/// Compiles `kernel` for `target` with `compiler` without running it (for targets this CPU
/// cannot run).
pub fn compile_only(kernel: &CKernel, compiler: &CCompiler, target: &Target) -> Result<(), HarnessError> {
    let dir = scratch_dir()?;
    let result = (|| {
        std::fs::write(dir.join("kernel.c"), &kernel.source)?;
        let output = Command::new(&compiler.program)
            .args(CCompiler::flags(target))
            .arg("-c")
            .arg(dir.join("kernel.c"))
            .arg("-o")
            .arg(dir.join("kernel.o"))
            .output()?;
        if output.status.success() {
            Ok(())
        } else {
            Err(HarnessError::Compile {
                compiler: compiler.program.clone(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            })
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Compiles `kernel` for `target` with `compiler`, runs it on `args` (one host tensor per
/// operand, updated in place with what the kernel wrote).
pub fn run_kernel(
    kernel: &CKernel,
    args: &mut [HostTensor],
    compiler: &CCompiler,
    target: &Target,
) -> Result<(), HarnessError> {
    let dir = scratch_dir()?;
    let result = compile_driver(&dir, kernel, args, compiler, target).and_then(|exe| execute(&exe, args));
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Runs `kernel`, an implementation of `spec`, on random inputs (one seed per operand) and
/// compares what it wrote with what [`crate::reference::evaluate`] computes from the same inputs.
pub fn check_against_reference(
    kernel: &CKernel,
    spec: &LogicalSpec,
    compiler: &CCompiler,
    target: &Target,
) -> Result<(), HarnessError> {
    ReferenceRun::new(spec).check(kernel, compiler, target)
}

/// The random inputs of a Spec and what the reference evaluator computes from them, for
/// checking many implementations of the same Spec while evaluating the reference once (it is
/// the slow part for large Specs).
#[derive(Clone, Debug)]
pub struct ReferenceRun {
    spec: LogicalSpec,
    inputs: Vec<HostTensor>,
    expected: Vec<HostTensor>,
    tolerances: Tolerances,
}

impl ReferenceRun {
    /// Random inputs for `spec` (one seed per operand, as [`check_against_reference`] uses) and
    /// the reference's results on them.
    pub fn new(spec: &LogicalSpec) -> ReferenceRun {
        let inputs: Vec<HostTensor> =
            spec.operands().iter().zip(1..).map(|(t, seed)| HostTensor::random(t, seed)).collect();
        let mut expected = inputs.clone();
        let tolerances = evaluate(spec, &mut expected);
        ReferenceRun { spec: spec.clone(), inputs, expected, tolerances }
    }

    /// Runs `kernel`, an implementation of this run's Spec, on its inputs and compares what it
    /// wrote with the reference's results.
    pub fn check(&self, kernel: &CKernel, compiler: &CCompiler, target: &Target) -> Result<(), HarnessError> {
        let mut args = self.inputs.clone();
        run_kernel(kernel, &mut args, compiler, target)?;
        Ok(compare(&self.spec, &self.expected, &args, &self.tolerances)?)
    }
}

/// Like [`run_kernel`] for several argument sets of the same shapes and dtypes, compiling once.
pub fn run_kernel_on_each(
    kernel: &CKernel,
    runs: &mut [Vec<HostTensor>],
    compiler: &CCompiler,
    target: &Target,
) -> Result<(), HarnessError> {
    let Some(first) = runs.first() else { return Ok(()) };
    let dir = scratch_dir()?;
    let result = compile_driver(&dir, kernel, first, compiler, target)
        .and_then(|exe| runs.iter_mut().try_for_each(|args| execute(&exe, args)));
    let _ = std::fs::remove_dir_all(&dir);
    result
}

pub(crate) fn scratch_dir() -> std::io::Result<PathBuf> {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("morello-harness-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Compiles the kernel with a driver for arguments shaped like `args`; returns the executable.
fn compile_driver(
    dir: &std::path::Path,
    kernel: &CKernel,
    args: &[HostTensor],
    compiler: &CCompiler,
    target: &Target,
) -> Result<PathBuf, HarnessError> {
    std::fs::write(dir.join("kernel.c"), &kernel.source)?;
    std::fs::write(dir.join("main.c"), driver(kernel, args))?;
    let exe = dir.join("kernel");
    compile_program(compiler, target, &[], &[dir.join("kernel.c"), dir.join("main.c")], &exe)?;
    Ok(exe)
}

/// Compiles and links `sources` into the program `exe` with `compiler`, the target's flags and
/// `extra` flags.
pub(crate) fn compile_program(
    compiler: &CCompiler,
    target: &Target,
    extra: &[&str],
    sources: &[PathBuf],
    exe: &std::path::Path,
) -> Result<(), HarnessError> {
    let output = Command::new(&compiler.program)
        .args(CCompiler::flags(target))
        .args(extra)
        .args(sources)
        .arg("-o")
        .arg(exe)
        .output()?;
    if output.status.success() {
        Ok(())
    } else {
        Err(HarnessError::Compile {
            compiler: compiler.program.clone(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}

/// Runs a compiled driver on `args`, updating them with what the kernel wrote.
fn execute(exe: &std::path::Path, args: &mut [HostTensor]) -> Result<(), HarnessError> {
    execute_with(Command::new(exe), args)
}

/// Runs `command`, a compiled driver, on `args`, updating them with what the kernel wrote.
pub(crate) fn execute_with(mut command: Command, args: &mut [HostTensor]) -> Result<(), HarnessError> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let input: Vec<u8> = args.iter().flat_map(|a| a.bytes().iter().copied()).collect();
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output()?;
    writer.join().expect("stdin writer thread")?;
    if !output.status.success() {
        return Err(HarnessError::Run {
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    if output.stdout.len() != input_len(args) {
        return Err(HarnessError::Run { status: "short output".to_owned(), stderr: String::new() });
    }
    let mut at = 0;
    for a in args.iter_mut() {
        let n = a.bytes().len();
        a.bytes_mut().copy_from_slice(&output.stdout[at..at + n]);
        at += n;
    }
    Ok(())
}

fn input_len(args: &[HostTensor]) -> usize {
    args.iter().map(|a| a.bytes().len()).sum()
}

/// A runtime for the driver: `parallel_for` on pthreads, up to `max_threads` threads pulling
/// iterations from a shared counter.
const DRIVER_RUNTIME: &str = r"
struct morello_job { void (*task)(void *, int64_t); void *ctx; int64_t n; int64_t next; };

static void *morello_worker(void *p) {
    struct morello_job *job = p;
    for (;;) {
        int64_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->n) break;
        job->task(job->ctx, i);
    }
    return NULL;
}

static void morello_parallel_for(const morello_runtime *rt, int64_t n, void (*task)(void *, int64_t), void *ctx) {
    struct morello_job job = { task, ctx, n, 0 };
    pthread_t threads[16];
    int64_t helpers = rt->max_threads - 1;
    if (helpers > n - 1) helpers = n - 1;
    if (helpers > 16) helpers = 16;
    int started = 0;
    for (int64_t k = 0; k < helpers; k++) {
        if (pthread_create(&threads[started], NULL, morello_worker, &job) != 0) break;
        started++;
    }
    morello_worker(&job);
    for (int k = 0; k < started; k++) pthread_join(threads[k], NULL);
}
";

/// The driver's C source.
fn driver(kernel: &CKernel, args: &[HostTensor]) -> String {
    let mut s = String::from(DRIVER_INCLUDES);
    s.push_str(&kernel.header);
    s.push_str(&driver_prelude());
    s.push_str("int main(void) {\n");
    s.push_str(&driver_call(&kernel.symbol, args));
    s.push_str("    return 0;\n}\n");
    s
}

/// The headers a driver includes.
pub(crate) const DRIVER_INCLUDES: &str =
    "#include <pthread.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n";

/// The driver's runtime and buffer functions (after [`DRIVER_INCLUDES`] and the runtime's
/// typedef).
pub(crate) fn driver_prelude() -> String {
    let mut s = String::from(DRIVER_RUNTIME);
    s.push_str(
        "\n\n/* n bytes that start `offset` bytes past malloc's alignment. */\n\
         static unsigned char *placed(size_t n, size_t offset) {\n    \
         unsigned char *p = malloc(n + 64);\n    if (!p) abort();\n    return p + offset;\n}\n\n\
         /* Reads n bytes into a placed buffer. */\n\
         static void *load(size_t n, size_t offset) {\n    \
         unsigned char *p = placed(n, offset);\n    if (n && fread(p, 1, n, stdin) != n) abort();\n    return p;\n}\n\n\
         /* A placed buffer of n bytes of 0x5a. */\n\
         static void *filled(size_t n, size_t offset) {\n    \
         unsigned char *p = placed(n, offset);\n    memset(p, 0x5a, n);\n    return p;\n}\n\n",
    );
    s
}

/// Statements that read the arguments of kernel `symbol` (shaped like `args`) from standard
/// input, call it twice — first on other data (every byte 0x5a), so that the checked call runs
/// with the heap buffers the first one kept (`Helper::SpareBuffers`) holding its leftovers —
/// and write every buffer to standard output.
pub(crate) fn driver_call(symbol: &str, args: &[HostTensor]) -> String {
    let mut s = String::new();
    for (i, a) in args.iter().enumerate() {
        s.push_str(&format!(
            "    {t} *p{i} = load({n}, {size});\n",
            t = a.dtype().c_type(),
            n = a.bytes().len(),
            size = a.dtype().size_bytes(),
        ));
    }
    s.push_str("    const morello_runtime rt = { morello_parallel_for, 4 };\n");
    let mut warm_up: Vec<String> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let (t, n, size) = (a.dtype().c_type(), a.bytes().len(), a.dtype().size_bytes());
        s.push_str(&format!("    {t} *w{i} = filled({n}, {size});\n"));
        warm_up.push(format!("w{i}"));
    }
    warm_up.push("&rt".to_owned());
    s.push_str(&format!("    {symbol}({});\n", warm_up.join(", ")));
    let mut call: Vec<String> = (0..args.len()).map(|i| format!("p{i}")).collect();
    call.push("&rt".to_owned());
    s.push_str(&format!("    {symbol}({});\n", call.join(", ")));
    for (i, a) in args.iter().enumerate() {
        s.push_str(&format!("    fwrite(p{i}, 1, {}, stdout);\n", a.bytes().len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetId;

    #[test]
    fn missing_features_agree_with_cpu_supports() {
        for id in TargetId::ALL {
            let target = id.target();
            let missing = missing_cpu_features(target);
            assert_eq!(missing.is_empty(), cpu_supports(target), "{id}: missing {missing:?}");
            assert!(missing.iter().all(|m| target.has_feature(m)), "{id}: {missing:?}");
        }
        // Portable C needs no ISA feature.
        assert!(missing_cpu_features(TargetId::Portable.target()).is_empty());
    }

    #[test]
    fn one_reference_run_checks_many_kernels() {
        let target = TargetId::Portable.target();
        let text = "Matmul(1x4x8x4, (f32, GL), (f32, GL), (f32, GL), serial)";
        let spec = crate::spec::Spec::parse_for(text, target).unwrap().with_limits(target.max_limits());
        let imp = crate::search::Synthesizer::new(target).synthesize(&spec).unwrap();
        let good = crate::codegen::emit_c(&imp, "kernel", target).unwrap();
        // The same kernel, then one more to the first output element.
        let end = good.source.rfind('}').unwrap();
        let mut bad = good.clone();
        bad.source = format!("{}    p2[0] += 1.0f;\n{}", &good.source[..end], &good.source[end..]);
        let run = ReferenceRun::new(spec.logical());
        let gcc = CCompiler::gcc();
        assert!(matches!(run.check(&bad, &gcc, target), Err(HarnessError::Wrong(_))));
        // The failed check left the run's inputs and expected results as they were.
        run.check(&good, &gcc, target).unwrap();
        check_against_reference(&good, spec.logical(), &gcc, target).unwrap();
    }
}
