//! Records the optimization level this crate is compiled at, so that a slow synthesis in a
//! user's build script can say whether an unoptimized build of the search is the cause
//! (`morello_core::COMPILED_OPT_LEVEL`).

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo::rustc-env=MORELLO_CORE_OPT_LEVEL={level}");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
}
