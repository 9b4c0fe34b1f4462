fn main() {
    morello_build::Build::new()
        .file("src/kernels.rs")
        .file("src/scheduled.rs")
        .file("src/targets.rs")
        .file("src/concurrent.rs")
        .compile("e2e_kernels");
}
