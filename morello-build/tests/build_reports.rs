//! The build helper reports problems with file, line, column and a fix, and produces C and a
//! static library for valid kernels. One test, because it sets the process environment that
//! Cargo gives build scripts.

use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src").join(name), text).unwrap();
}

#[test]
fn build_helper_reports_and_builds() {
    let root = std::env::temp_dir().join(format!("morello-build-test-{}", std::process::id()));
    let out = root.join("out");
    let db_dir = root.join("db");
    std::fs::create_dir_all(&out).unwrap();
    // SAFETY: this test binary runs this single test; nothing reads the environment concurrently.
    unsafe {
        for (k, v) in [
            ("OUT_DIR", out.to_str().unwrap()),
            ("CARGO_MANIFEST_DIR", root.to_str().unwrap()),
            ("CARGO_PKG_NAME", "report-test"),
            ("CARGO_CFG_TARGET_ARCH", "x86_64"),
            ("TARGET", "x86_64-unknown-linux-gnu"),
            ("HOST", "x86_64-unknown-linux-gnu"),
            ("OPT_LEVEL", "0"),
            ("DEBUG", "false"),
            ("MORELLO_DB_DIR", db_dir.to_str().unwrap()),
        ] {
            std::env::set_var(k, v);
        }
    }

    write(
        &root,
        "typo.rs",
        "morello::kernel! {\n    pub fn k(Matmull(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)));\n}\n",
    );
    let err = morello_build::Build::new().file("src/typo.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("error: src/typo.rs:2:14: unknown primitive `Matmull`; did you mean `Matmul`?"), "{err}");
    assert!(err.contains("2 |     pub fn k(Matmull(") && err.contains("|              ^^^^^^^"), "{err}");

    write(
        &root,
        "unsat.rs",
        "morello::kernel! {\n    pub fn k(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 32, 1024]);\n}\n",
    );
    let err = morello_build::Build::new().file("src/unsat.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("error: src/unsat.rs:2:14: no implementation of"), "{err}");

    let err = morello_build::Build::new().file("src/missing.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("cannot read src/missing.rs") && err.contains("Build::file"), "{err}");

    write(
        &root,
        "dup.rs",
        "morello::kernel! {\n    pub fn k(FillZero(4, (f32, GL)));\n}\nmorello::kernel! {\n    pub fn k(FillZero(8, (f32, GL)));\n}\n",
    );
    let err = morello_build::Build::new().file("src/dup.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("src/dup.rs:5:12: a kernel named `k` is already declared"), "{err}");

    write(
        &root,
        "good.rs",
        "mod inner {\n    morello::kernel! {\n        pub fn zero(FillZero(4x4, (u32, GL)));\n        \
         #[target(portable)]\n        pub fn zero_anywhere(FillZero(4x4, (u32, GL)));\n    }\n}\n",
    );
    let built = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert_eq!(built.kernels.len(), 2);
    assert!(built.kernels[0].1.starts_with("morello_report_test_zero_"));
    let source = std::fs::read_to_string(&built.c_files[0]).unwrap();
    assert!(source.contains(&format!("void {}(", built.kernels[0].1)));
    assert!(source.contains("Target: x86-avx2"));
    assert!(std::fs::read_to_string(&built.c_files[1]).unwrap().contains("Target: portable"));
    // One library per target, each compiled with its own flags.
    assert!(out.join("libgood_avx2.a").exists());
    assert!(out.join("libgood_portable.a").exists());

    // The database: the first build searched and saved; a rebuild (even offline) only reads.
    let db_file = db_dir.join("x86-avx2.morellodb");
    assert!(built.specs_searched > 0 && db_file.exists(), "{db_file:?}");
    let again = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert_eq!(again.specs_searched, 0, "a warm build searched");
    // SAFETY: as above.
    unsafe { std::env::set_var("MORELLO_OFFLINE", "1") };
    let offline = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert_eq!(offline.specs_searched, 0);
    assert_eq!(std::fs::read_to_string(&offline.c_files[0]).unwrap(), source, "offline C differs");
    write(&root, "new.rs", "morello::kernel! {\n    pub fn fresh(FillZero(8x8, (u32, GL)));\n}\n");
    let err = morello_build::Build::new().file("src/new.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("src/new.rs:2:18: the database has no implementation of"), "{err}");
    assert!(err.contains("MORELLO_OFFLINE is set") && err.contains("x86-avx2.morellodb"), "{err}");
    // SAFETY: as above.
    unsafe { std::env::remove_var("MORELLO_OFFLINE") };
    // A damaged database is ignored (with a warning) and replaced.
    std::fs::write(&db_file, b"MORELLO\x01 not really").unwrap();
    let rebuilt = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert!(rebuilt.specs_searched > 0);
    let (_, report) = morello_core::db::file::load(&db_file, &morello_core::target::X86_AVX2);
    assert!(matches!(report, morello_core::db::file::LoadReport::Loaded), "{report:?}");

    write(&root, "badtarget.rs", "morello::kernel! {\n    #[target(sse9)]\n    pub fn k(FillZero(4, (f32, GL)));\n}\n");
    let err = morello_build::Build::new().file("src/badtarget.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("src/badtarget.rs:2:14: unknown target `sse9`"), "{err}");

    let _ = std::fs::remove_dir_all(&root);
}
