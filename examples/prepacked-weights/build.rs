fn main() {
    morello_build::Build::new().file("src/kernels.rs").compile("prepacked_kernels");
}
