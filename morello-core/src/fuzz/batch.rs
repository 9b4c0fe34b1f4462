//! Many kernels in one program: their translation units concatenated (vector types and helpers
//! are guarded, see [`crate::codegen::emit_c`]) with a driver whose first argument picks the
//! kernel to run. One compiler call then serves a whole batch of fuzz cases instead of parsing
//! the intrinsics headers once per case.

use crate::codegen::CKernel;
use crate::harness::{
    CCompiler, DRIVER_INCLUDES, HarnessError, compile_program, driver_call, driver_prelude, execute_with, scratch_dir,
};
use crate::reference::HostTensor;
use crate::target::Target;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a program is instrumented.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Instrument {
    /// An ordinary optimized build.
    None,
    /// AddressSanitizer and UndefinedBehaviorSanitizer; any report aborts the run.
    AddressUndefined,
    /// ThreadSanitizer (for kernels with parallel loops).
    Thread,
}

impl Instrument {
    /// Extra compiler flags.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Instrument::None => &[],
            Instrument::AddressUndefined => {
                &["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
            }
            Instrument::Thread => &["-fsanitize=thread", "-g"],
        }
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Instrument::None => "plain",
            Instrument::AddressUndefined => "address,undefined",
            Instrument::Thread => "thread",
        }
    }
}

/// A compiled batch: an executable that runs kernel `i` of the batch when given `i`.
pub struct Program {
    dir: PathBuf,
    exe: PathBuf,
    instrument: Instrument,
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The C source of a program running `kernels` (each with arguments shaped like its list).
pub fn program_source(kernels: &[(&CKernel, &[HostTensor])]) -> String {
    let mut s = String::from(DRIVER_INCLUDES);
    for (kernel, _) in kernels {
        s.push_str(&kernel.source);
        s.push('\n');
    }
    s.push_str(&driver_prelude());
    s.push_str("int main(int argc, char **argv) {\n    if (argc < 2) return 2;\n    switch (atoi(argv[1])) {\n");
    for (i, (kernel, args)) in kernels.iter().enumerate() {
        s.push_str(&format!("    case {i}: {{\n"));
        s.push_str(&driver_call(&kernel.symbol, args));
        s.push_str("        break;\n    }\n");
    }
    s.push_str("    default:\n        return 2;\n    }\n    return 0;\n}\n");
    s
}

/// Compiles a program running `kernels` with `compiler` for `target`.
pub fn compile(
    kernels: &[(&CKernel, &[HostTensor])],
    compiler: &CCompiler,
    target: &Target,
    instrument: Instrument,
) -> Result<Program, HarnessError> {
    let dir = scratch_dir()?;
    let program = Program { exe: dir.join("fuzz"), dir, instrument };
    let source = program.dir.join("fuzz.c");
    std::fs::write(&source, program_source(kernels))?;
    compile_program(compiler, target, instrument.flags(), &[source], &program.exe)?;
    Ok(program)
}

impl Program {
    /// Runs kernel `index` of the batch on `args`, updating them with what it wrote. A
    /// sanitizer's report fails the run with the report as its message.
    pub fn run(&self, index: usize, args: &mut [HostTensor]) -> Result<(), HarnessError> {
        let mut command = Command::new(&self.exe);
        command.arg(index.to_string());
        // The driver never frees its argument buffers, and kernels keep spare buffers between
        // calls on purpose: leak reports would only be noise.
        command.env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0");
        command.env("TSAN_OPTIONS", "halt_on_error=1:report_signal_unsafe=0");
        execute_with(command, args)
    }

    /// How the program is instrumented.
    pub fn instrument(&self) -> Instrument {
        self.instrument
    }

    /// The executable.
    pub fn path(&self) -> &Path {
        &self.exe
    }
}

/// Whether `compiler` can build and run programs with `instrument` on this machine (a
/// sanitizer's runtime library may be missing, or the kernel may refuse its memory layout).
pub fn instrument_works(compiler: &CCompiler, instrument: Instrument) -> bool {
    let Ok(dir) = scratch_dir() else { return false };
    let source = dir.join("probe.c");
    let exe = dir.join("probe");
    let works = std::fs::write(
        &source,
        "#include <pthread.h>\nstatic void *f(void *p) { return p; }\n\
         int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); return 0; }\n",
    )
    .is_ok()
        && Command::new(&compiler.program)
            .args(instrument.flags())
            .arg("-pthread")
            .arg(&source)
            .arg("-o")
            .arg(&exe)
            .output()
            .is_ok_and(|o| o.status.success())
        && Command::new(&exe).output().is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    works
}
