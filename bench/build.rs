//! Synthesizes the Morello kernels (the large wholly searched GEMMs in a narrowed search space)
//! and compiles the oneDNN shim; links OpenBLAS and oneDNN.
//!
//! The kernels are built for the AVX-512 target on a CPU with the features its kernels use, and
//! for the AVX2 target otherwise; `MORELLO_BENCH_TARGET=avx2` (or `avx512`) chooses.
//! `MORELLO_BENCH_NARROWED=skip` leaves out the narrowed-space kernels. The
//! benchmark is built to run where it is built, so the build script's CPU is the one measured.

use morello_core::harness::cpu_supports;
use morello_core::target::TargetId;

fn main() {
    println!("cargo::rerun-if-env-changed=MORELLO_BENCH_TARGET");
    println!("cargo::rustc-check-cfg=cfg(kernels_avx2)");
    let avx512 = match std::env::var("MORELLO_BENCH_TARGET").as_deref() {
        Ok("avx512") => true,
        Ok("avx2") => false,
        Ok(other) => panic!("MORELLO_BENCH_TARGET is `{other}`; expected `avx512` or `avx2`"),
        Err(_) => cpu_supports(TargetId::X86Avx512.target()),
    };
    let (kernels, narrowed) = if avx512 {
        ("src/kernels_avx512.rs", "src/kernels_narrowed_avx512.rs")
    } else {
        println!("cargo::rustc-cfg=kernels_avx2");
        ("src/kernels_avx2.rs", "src/kernels_narrowed_avx2.rs")
    };
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
