fn main() {
    morello_build::Build::new().file("src/kernels.rs").compile("quickstart_kernels");
}
