fn main() {
    morello_build::Build::new().file("src/kernels.rs").compile("fig1_kernels");
}
