//! Synthesizes the Morello kernels (the large wholly searched GEMMs in a narrowed search space)
//! and compiles the oneDNN shim; links OpenBLAS and oneDNN.
//!
//! The kernels are built for the AVX-512 target on a CPU with the features its kernels use, and
//! for the AVX2 target otherwise; `MORELLO_BENCH_TARGET=avx2` (or `avx512`) chooses.
//! `MORELLO_BENCH_NARROWED=skip` leaves out the narrowed-space kernels. The
//! benchmark is built to run where it is built, so the build script's CPU is the one measured.

use morello_core::harness::cpu_supports;
use morello_core::target::TargetId;
use std::path::PathBuf;

/// What the benchmark's kernel files (`src/*.in.rs`) leave to the target: each `@name@` in
/// them is replaced by the value of the field `name`.
struct KernelParameters {
    /// The target's name in `#[target(..)]`.
    target: &'static str,
    /// Columns of the panels a full-`k` register tile reads: its width.
    panel: u32,
    /// Columns of the strips of `gemm8x512x512_full_k`.
    strip: u32,
    /// The register tiles of such a strip, in words.
    strip_tiles: &'static str,
    /// The schedule steps down to them.
    strip_steps: &'static str,
}

/// 16 columns: two 8-lane ymm registers per row of a 6-row register tile.
const AVX2: KernelParameters = KernelParameters {
    target: "avx2",
    panel: 16,
    strip: 16,
    strip_tiles: "two 4×16 tiles of `c`, 8 ymm registers",
    strip_steps: "tile([1, 8, 512, 16]);\n        tile([1, 4, 512, 16]);",
};

/// 64 columns: four 16-lane zmm registers per row of a 6-row register tile.
const AVX512: KernelParameters = KernelParameters {
    target: "avx512",
    panel: 64,
    strip: 32,
    strip_tiles: "an 8×32 tile of `c`, two zmm registers a row",
    strip_steps: "tile([1, 8, 512, 32]);",
};

/// Writes `template` with `parameters` filled in to `OUT_DIR/name`, and returns that path.
fn write_kernels(template: &str, name: &str, parameters: &KernelParameters) -> PathBuf {
    println!("cargo::rerun-if-changed={template}");
    let text = std::fs::read_to_string(template).unwrap_or_else(|e| panic!("{template}: {e}"));
    let panel = parameters.panel.to_string();
    let strip = parameters.strip.to_string();
    let text = text
        .replace("@target@", parameters.target)
        .replace("@panel@", &panel)
        .replace("@strip@", &strip)
        .replace("@strip_tiles@", parameters.strip_tiles)
        .replace("@strip_steps@", parameters.strip_steps);
    if let Some(at) = text.find('@') {
        panic!("{template}: an unknown parameter at `{}`", &text[at..(at + 20).min(text.len())]);
    }
    let path = PathBuf::from(std::env::var("OUT_DIR").expect("set by Cargo")).join(name);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    path
}

fn main() {
    println!("cargo::rerun-if-env-changed=MORELLO_BENCH_TARGET");
    println!("cargo::rustc-check-cfg=cfg(kernels_avx2)");
    let avx512 = match std::env::var("MORELLO_BENCH_TARGET").as_deref() {
        Ok("avx512") => true,
        Ok("avx2") => false,
        Ok(other) => panic!("MORELLO_BENCH_TARGET is `{other}`; expected `avx512` or `avx2`"),
        Err(_) => cpu_supports(TargetId::X86Avx512.target()),
    };
    let parameters = if avx512 {
        &AVX512
    } else {
        println!("cargo::rustc-cfg=kernels_avx2");
        &AVX2
    };
    let kernels = write_kernels("src/kernels.in.rs", "kernels.rs", parameters);
    let narrowed = write_kernels("src/kernels_narrowed.in.rs", "kernels_narrowed.rs", parameters);
    morello_build::Build::new().file(kernels).compile("bench_kernels");
    // The large GEMMs wholly searched, in a search space narrowed to make that affordable: the
    // longest searches of the first build (hours on AVX2), which `MORELLO_BENCH_NARROWED=skip`
    // leaves out, with their rows.
    println!("cargo::rerun-if-env-changed=MORELLO_BENCH_NARROWED");
    println!("cargo::rustc-check-cfg=cfg(narrowed_kernels)");
    let narrowed_wanted = match std::env::var("MORELLO_BENCH_NARROWED").as_deref() {
        Ok("skip") => false,
        Ok("build") | Err(_) => true,
        Ok(other) => panic!("MORELLO_BENCH_NARROWED is `{other}`; expected `build` (the default) or `skip`"),
    };
    if narrowed_wanted {
        println!("cargo::rustc-cfg=narrowed_kernels");
        morello_build::Build::new()
            .file(narrowed)
            .search_space(morello_build::SearchSpace::FixedOutputLayouts)
            .compile("bench_kernels_narrowed");
    }
    println!("cargo::rerun-if-changed=src/onednn.c");
    cc::Build::new()
        .file("src/onednn.c")
        .flag("-fopenmp")
        .opt_level(2)
        .warnings_into_errors(true)
        .compile("bench_onednn");
    for lib in ["dnnl", "gomp", "openblas"] {
        println!("cargo::rustc-link-lib=dylib={lib}");
    }
}
