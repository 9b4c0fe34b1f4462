//! `morello-db synthesize` searches one Spec into a database file that later builds (even
//! offline) answer from, and reports bad input without touching the file.

use morello_core::db::file::{self, LoadReport};
use morello_core::harness::{CCompiler, check_against_reference, cpu_supports};
use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::spec::Spec;
use morello_core::target::X86_AVX512;
use std::path::PathBuf;
use std::process::Command;

const SPEC: &str = "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)";

fn morello_db(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_morello-db")).args(args).output().expect("morello-db runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

/// A fresh directory for one test, and the path in it of the database file of the default
/// search space (the fast one).
fn scratch_database(test: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("morello-synthesize-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x86-avx512.fast.morellodb");
    (dir, path)
}

/// A synthesizer searching what `morello-db` searches by default: the fast space.
fn default_synthesizer() -> Synthesizer {
    let mut synth = Synthesizer::new(&X86_AVX512);
    synth.set_search_space(SearchSpace::Fast);
    synth
}

#[test]
fn synthesize_fills_the_database_for_offline_builds() {
    let (dir, path) = scratch_database("fills");
    let db = path.to_str().unwrap();
    let target = &X86_AVX512;

    let (ok, stdout, stderr) = morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC]);
    assert!(ok, "{stderr}");
    let fresh_cost = {
        let spec = Spec::parse_for(SPEC, target).unwrap();
        let imp = default_synthesizer().synthesize(&spec).unwrap();
        morello_core::cost::impl_cost(&imp, target).unwrap().main
    };
    assert!(stdout.contains(&format!("cost {fresh_cost}")), "{stdout}");
    assert!(stderr.contains("searched ") && !stderr.contains("searched 0 Specs"), "{stderr}");

    // A second run finds everything in the file, and `--emit-c` writes the kernel's C.
    let c_file = dir.join("kernel.c");
    let c_path = c_file.to_str().unwrap();
    let (ok, stdout, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--emit-c", c_path]);
    assert!(ok && stderr.contains("searched 0 Specs"), "{stderr}");
    assert!(stdout.contains(&format!("written to {c_path}")), "{stdout}");
    let emitted = std::fs::read_to_string(&c_file).unwrap();

    // An offline synthesizer on the file builds the kernel, and it computes the right thing.
    let (stored, report) = file::load(&path, target);
    assert!(matches!(report, LoadReport::Loaded));
    let mut offline = Synthesizer::with_database(stored);
    offline.set_offline(true);
    let spec = Spec::parse_for(SPEC, target).unwrap();
    let imp = offline.synthesize(&spec).unwrap();
    assert_eq!(morello_core::cost::impl_cost(&imp, target).unwrap().main, fresh_cost);
    // What `--emit-c` wrote is this kernel's C, and it computes the right thing.
    let kernel = morello_core::codegen::emit_c(&imp, "kernel", target).unwrap();
    assert_eq!(emitted, kernel.source);
    if cpu_supports(target) {
        check_against_reference(&kernel, spec.logical(), &CCompiler::gcc(), target).unwrap();
    }

    // `--explain` writes the implementation with every node's cost, to a file or to stdout.
    let tree = morello_core::cost::cost_tree(&imp, target).unwrap();
    assert!(tree.lines().next().unwrap().ends_with(&format!("[cost {fresh_cost}, 100.0%]")), "{tree}");
    let (ok, stdout, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--explain", "-"]);
    assert!(ok && stdout.contains(&tree), "{stderr}\n{stdout}");
    let explained = dir.join("costs.txt");
    let explained_path = explained.to_str().unwrap();
    let (ok, _, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--explain", explained_path]);
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read_to_string(&explained).unwrap(), tree);

    // Bad input is reported with what to fix, and the file is left alone.
    let before = std::fs::read(&path).unwrap();
    let (ok, _, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", "Matmul(1x8x8, (f32, GL))"]);
    assert!(!ok && stderr.contains("--spec:"), "{stderr}");
    let (ok, _, stderr) = morello_db(&["synthesize", "--target", "avx512", "--db", db]);
    assert!(!ok && stderr.contains("synthesize needs --spec"), "{stderr}");
    let (ok, _, stderr) = morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--space", "x"]);
    assert!(!ok && stderr.contains("--space: `x` is not a search space"), "{stderr}");
    // Results of a narrowed search space never go into a file of optima.
    let narrowed = ["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--space", "fixed-output-layouts"];
    let (ok, _, stderr) = morello_db(&narrowed);
    assert!(!ok && stderr.contains("x86-avx512.fixed-output-layouts.morellodb"), "{stderr}");
    let exact = ["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--space", "full"];
    let (ok, _, stderr) = morello_db(&exact);
    assert!(!ok && stderr.contains("`x86-avx512.morellodb`"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synthesize_saves_partial_work_at_its_deadline() {
    let (dir, path) = scratch_database("deadline");
    let db = path.to_str().unwrap();
    // Far too large for a zero-second deadline.
    let spec = "Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL), serial)";
    let (ok, _, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", spec, "--deadline", "0"]);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("did not finish before its deadline") && stderr.contains("a rerun resumes from it"),
        "{stderr}"
    );
    assert!(path.is_file(), "what was solved is saved");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synthesize_costs_a_hand_schedule_and_searches_only_what_it_leaves() {
    let (dir, path) = scratch_database("schedule");
    let db = path.to_str().unwrap();
    let target = &X86_AVX512;
    let spec = Spec::parse_for(SPEC, target).unwrap();
    // Two rows at a time, then the search: the steps need not end with `synthesize_all`.
    let steps = "to_accum; tile([1, 2, 8, 8]);";
    let (partial, _) = morello_core::syntax::run_schedule(spec.clone(), steps, target).unwrap();
    let imp = partial.synthesize_all(&mut default_synthesizer()).unwrap();
    let scheduled_cost = morello_core::cost::impl_cost(&imp, target).unwrap().main;
    let optimum = {
        let imp = default_synthesizer().synthesize(&spec).unwrap();
        morello_core::cost::impl_cost(&imp, target).unwrap().main
    };
    assert_ne!(scheduled_cost, optimum, "the schedule is not the search's choice");

    let c_file = dir.join("scheduled.c");
    let c_path = c_file.to_str().unwrap();
    let command = ["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC];
    let with_steps = |steps: &str, more: &[&str]| morello_db(&[&command[..], &["--schedule", steps], more].concat());
    let (ok, stdout, stderr) = with_steps(steps, &["--emit-c", c_path, "--explain", "-"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains(&format!("scheduled {spec}: cost {scheduled_cost}")), "{stdout}");
    let tree = morello_core::cost::cost_tree(&imp, target).unwrap();
    assert!(stdout.contains(&tree), "{stdout}");
    assert!(tree.contains("tile 1×2×8×8"), "{tree}");
    let kernel = morello_core::codegen::emit_c(&imp, "kernel", target).unwrap();
    assert_eq!(std::fs::read_to_string(&c_file).unwrap(), kernel.source);
    if cpu_supports(target) {
        check_against_reference(&kernel, spec.logical(), &CCompiler::gcc(), target).unwrap();
    }

    // The same steps ending with `synthesize_all` are the same plan.
    let (ok, stdout, stderr) = with_steps("to_accum; tile([1, 2, 8, 8]); synthesize_all;", &[]);
    assert!(ok && stdout.contains(&format!("cost {scheduled_cost}")), "{stderr}\n{stdout}");

    // Steps that do not parse, or do not apply, are reported before the file is touched.
    let before = std::fs::read(&path).unwrap();
    let (ok, _, stderr) = with_steps("tile([1, 2, 8, 8]) oops", &[]);
    assert!(!ok && stderr.contains("--schedule: the schedule does not parse"), "{stderr}");
    let (ok, _, stderr) = with_steps("tile([1, 16, 8, 8]);", &[]);
    assert!(!ok && stderr.contains("--schedule: tile size 16 along m is larger"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn profile_prints_where_a_cold_search_went() {
    let (dir, path) = scratch_database("profile");
    let db = path.to_str().unwrap();
    let args = ["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--threads", "1", "--profile", "3"];
    let (ok, _, stderr) = morello_db(&args);
    assert!(ok, "{stderr}");
    // The same search in process: the table's rows are its three most searched kinds.
    let mut synth = default_synthesizer();
    synth.set_threads(1);
    synth.enable_profile();
    let spec = Spec::parse_for(SPEC, &X86_AVX512).unwrap().with_limits(X86_AVX512.max_limits());
    synth.optimal_cost(&spec).unwrap();
    let expected = synth.profile().unwrap().table(3);
    assert!(stderr.contains("where the search went") && stderr.contains(&expected), "{stderr}\n{expected}");
    let (ok, _, stderr) =
        morello_db(&["synthesize", "--target", "avx512", "--db", db, "--spec", SPEC, "--profile", "x"]);
    assert!(!ok && stderr.contains("--profile x is not a number"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
