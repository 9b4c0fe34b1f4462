//! Compile-time diagnostics of `kernel!`, `spec!` and `schedule!`: each case must fail with a
//! message on the offending token (`tests/ui/*.stderr`). Regenerate the expected output after a
//! deliberate change with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
