fn main() {
    morello_build::Build::new().file("src/kernels.rs").compile("synth_kernels");
}
