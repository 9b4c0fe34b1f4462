//! The build helper reports problems with file, line, column and a fix, and produces C and a
//! static library for valid kernels. One test, because it sets the process environment that
//! Cargo gives build scripts.

use morello_core::target::{Target, X86_AVX2};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src").join(name), text).unwrap();
}

/// Runs `f` with the environment variable `key` set to `value`, then removes it.
fn with_env<R>(key: &str, value: &str, f: impl FnOnce() -> R) -> R {
    // SAFETY: this test binary runs this single test; nothing reads the environment concurrently.
    unsafe { std::env::set_var(key, value) };
    let result = f();
    // SAFETY: as above.
    unsafe { std::env::remove_var(key) };
    result
}

/// Each of `specs`, read offline from the database `db_file`, compiles to a kernel that matches
/// the reference evaluator (checked only where this CPU runs `target`'s code).
fn check_saved_kernels(db_file: &Path, target: &'static Target, specs: &[&str]) {
    if !morello_core::harness::cpu_supports(target) {
        return;
    }
    let (db, _) = morello_core::db::file::load(db_file, target);
    let mut synth = morello_core::search::Synthesizer::with_database(db);
    synth.set_offline(true);
    let compiler = morello_core::harness::CCompiler::gcc();
    for text in specs {
        let spec = morello_core::spec::Spec::parse_for(text, target).unwrap();
        let imp = synth.synthesize(&spec).unwrap_or_else(|e| panic!("{text}: {e}"));
        let kernel = morello_core::codegen::emit_c(&imp, "saved_kernel", target).unwrap();
        morello_core::harness::check_against_reference(&kernel, spec.logical(), &compiler, target)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
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
            // Two synthesis threads, whatever the machine.
            ("NUM_JOBS", "2"),
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
    // The report is data: one error at the primitive's name, rendered above.
    let typo = morello_build::Build::new().file("src/typo.rs").try_compile("t").unwrap_err();
    let [morello_build::Diagnostic::Source(at)] = typo.diagnostics() else { panic!("{typo:?}") };
    assert_eq!((at.line, at.column, at.width), (2, 14, 7), "{at:?}");
    assert!(at.message.starts_with("unknown primitive `Matmull`"), "{at:?}");

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
    assert!(err.contains("5 |     pub fn k(FillZero(8") && err.contains("|            ^"), "{err}");

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
    // Builds search the fast space by default, whose results have a file of their own.
    let db_file = db_dir.join("x86-avx2.fast.morellodb");
    assert!(built.specs_searched > 0 && db_file.exists(), "{db_file:?}");
    let again = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert_eq!(again.specs_searched, 0, "a warm build searched");
    with_env("MORELLO_OFFLINE", "1", || {
        let offline = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
        assert_eq!(offline.specs_searched, 0);
        assert_eq!(std::fs::read_to_string(&offline.c_files[0]).unwrap(), source, "offline C differs");
        write(&root, "new.rs", "morello::kernel! {\n    pub fn fresh(FillZero(8x8, (u32, GL)));\n}\n");
        let err = morello_build::Build::new().file("src/new.rs").try_compile("t").unwrap_err().to_string();
        assert!(err.contains("src/new.rs:2:18: the database has no implementation of"), "{err}");
        assert!(err.contains("MORELLO_OFFLINE is set") && err.contains("x86-avx2.fast.morellodb"), "{err}");
    });
    // A damaged database is ignored (with a warning) and replaced.
    std::fs::write(&db_file, b"MORELLO\x01 not really").unwrap();
    let rebuilt = morello_build::Build::new().file("src/good.rs").try_compile("good").unwrap();
    assert!(rebuilt.specs_searched > 0);
    let (_, report) = morello_core::db::file::load(&db_file, &morello_core::target::X86_AVX2);
    assert!(matches!(report, morello_core::db::file::LoadReport::Loaded), "{report:?}");

    several_kernels_on_two_threads(&root, &db_dir);
    opt_in_results_keep_to_their_own_file(
        &root,
        &db_dir,
        "MORELLO_SLACK",
        ["50%", "50"],
        "x86-avx2.slack50.fast.morellodb",
    );
    opt_in_results_keep_to_their_own_file(
        &root,
        &db_dir,
        "MORELLO_SEARCH_SPACE",
        ["fixed-output-layouts", " fixed-output-layouts "],
        "x86-avx2.fixed-output-layouts.morellodb",
    );
    the_build_option_chooses_the_space_unless_the_variable_says_otherwise(&root, &db_dir);

    write(&root, "badtarget.rs", "morello::kernel! {\n    #[target(sse9)]\n    pub fn k(FillZero(4, (f32, GL)));\n}\n");
    let err = morello_build::Build::new().file("src/badtarget.rs").try_compile("t").unwrap_err().to_string();
    assert!(err.contains("src/badtarget.rs:2:14: unknown target `sse9`"), "{err}");

    let _ = std::fs::remove_dir_all(&root);
}

/// Kernels synthesized on two threads: a kernel that fails does not lose what the others
/// found (an offline build then has every one), and what was saved is correct.
fn several_kernels_on_two_threads(root: &Path, db_dir: &Path) {
    let specs = [
        "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL))",
        "Matmul(1x8x4x8, (f32, GL), (f32, GL), (f32, GL))",
        "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))",
    ];
    let kernels = |with_failure: bool| {
        let mut text = String::from("morello::kernel! {\n");
        for (i, spec) in specs.iter().enumerate() {
            text += &format!("    pub fn mm{i}({spec});\n");
        }
        // Searches for the same Spec as `mm0`, so it shares that kernel's thread.
        text += &format!("    pub fn mm0_again({}) schedule {{ synthesize_all; }}\n", specs[0]);
        if with_failure {
            text += "    pub fn unsat(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [64, 512, 32, 1024]);\n";
        }
        text + "}\n"
    };
    write(root, "several.rs", &kernels(true));
    let err = morello_build::Build::new().file("src/several.rs").try_compile("several").unwrap_err().to_string();
    assert!(err.contains("src/several.rs:6:18: no implementation of"), "{err}");

    write(root, "several.rs", &kernels(false));
    let offline =
        with_env("MORELLO_OFFLINE", "1", || morello_build::Build::new().file("src/several.rs").try_compile("several"))
            .unwrap();
    assert_eq!(offline.kernels.len(), specs.len() + 1);
    assert_eq!(offline.specs_searched, 0);
    check_saved_kernels(&db_dir.join("x86-avx2.fast.morellodb"), &X86_AVX2, &specs);
}

/// An opt-in search mode set by `variable` (`MORELLO_SLACK`, `MORELLO_SEARCH_SPACE`): a bad
/// value is reported naming the variable; a good one synthesizes into the file `file` of its
/// own, leaving the default database as it was, a second build reads it back, and its kernels
/// are correct.
fn opt_in_results_keep_to_their_own_file(root: &Path, db_dir: &Path, variable: &str, values: [&str; 2], file: &str) {
    let default_file = db_dir.join("x86-avx2.fast.morellodb");
    let default_before = std::fs::read(&default_file).unwrap();
    let text = "Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL))";
    write(root, "opt_in.rs", &format!("morello::kernel! {{\n    pub fn opt_in({text});\n}}\n"));
    let build = |value: &str| {
        with_env(variable, value, || morello_build::Build::new().file("src/opt_in.rs").try_compile("opt_in"))
    };
    let err = build("lots").unwrap_err().to_string();
    assert!(err.contains(&format!("{variable}: `lots` is not a")), "{err}");

    let [value, same_value] = values;
    let built = build(value).unwrap();
    assert!(built.specs_searched > 0);
    assert_eq!(std::fs::read(&default_file).unwrap(), default_before, "the default database changed");
    let own_file = db_dir.join(file);
    let (_, report) = morello_core::db::file::load(&own_file, &X86_AVX2);
    assert!(matches!(report, morello_core::db::file::LoadReport::Loaded), "{report:?}");
    let again = build(same_value).unwrap();
    assert_eq!(again.specs_searched, 0, "the second build with {variable}={same_value} searched");
    check_saved_kernels(&own_file, &X86_AVX2, &[text]);
    std::fs::remove_file(&own_file).unwrap();
}

/// `Build::search_space` puts a build's results in its space's file; `MORELLO_SEARCH_SPACE`
/// overrides it (`full`: the exact search, in `<target>.morellodb`).
fn the_build_option_chooses_the_space_unless_the_variable_says_otherwise(root: &Path, db_dir: &Path) {
    let narrowed_file = db_dir.join("x86-avx2.fixed-output-layouts.morellodb");
    let default_file = db_dir.join("x86-avx2.fast.morellodb");
    let exact_file = db_dir.join("x86-avx2.morellodb");
    assert!(!narrowed_file.exists() && !exact_file.exists());
    let text = "Matmul(1x8x16x16, (f32, GL), (f32, GL), (f32, GL))";
    write(root, "space.rs", &format!("morello::kernel! {{\n    pub fn narrowed({text});\n}}\n"));
    let build = || {
        morello_build::Build::new()
            .file("src/space.rs")
            .search_space(morello_build::SearchSpace::FixedOutputLayouts)
            .try_compile("space")
    };
    let default_before = std::fs::read(&default_file).unwrap();
    assert!(build().unwrap().specs_searched > 0);
    assert_eq!(std::fs::read(&default_file).unwrap(), default_before, "the default database changed");
    check_saved_kernels(&narrowed_file, &X86_AVX2, &[text]);
    let narrowed_before = std::fs::read(&narrowed_file).unwrap();
    assert!(with_env("MORELLO_SEARCH_SPACE", "full", build).unwrap().specs_searched > 0);
    assert_eq!(std::fs::read(&narrowed_file).unwrap(), narrowed_before, "the narrowed database changed");
    assert_eq!(std::fs::read(&default_file).unwrap(), default_before, "the default database changed");
    check_saved_kernels(&exact_file, &X86_AVX2, &[text]);
}
