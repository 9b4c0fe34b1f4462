//! Synthesizes the Morello kernels and compiles the oneDNN shim; links OpenBLAS and oneDNN.

fn main() {
    morello_build::Build::new().file("src/kernels.rs").compile("bench_kernels");
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
