//! The differential fuzzer itself: a short seeded campaign on every target passes, counts its
//! cases per family, and draws exactly the same cases when run again (its search budget is
//! counted in Specs, not time). `.ci/run` runs longer, sanitized campaigns with `morello-db fuzz`.

mod common;

use morello_core::fuzz::{FuzzOptions, run};
use morello_core::target::TargetId;

#[test]
fn a_seeded_campaign_passes_and_repeats_exactly() {
    for id in TargetId::ALL {
        let mut options = FuzzOptions::new(10, 41, id);
        options.compilers = common::compilers();
        options.reduce = false;
        let mut log = Vec::new();
        let first = run(&options, &mut log);
        let log = String::from_utf8_lossy(&log);
        assert!(first.failures.is_empty(), "{id}:\n{log}\n{}", first.render());
        assert_eq!(first.cases, 10, "{id}: {}", first.render());
        let primitives: u64 = first.counts.0["primitive"].values().sum();
        assert_eq!(primitives, 10, "every case is counted once per primitive");
        assert!(first.render().starts_with("10 cases, 0 mismatches\n"), "{}", first.render());

        let again = run(&options, &mut Vec::new());
        assert_eq!(again.counts.0, first.counts.0, "{id}: the same seed draws the same cases");
        assert_eq!(
            (again.unimplementable, again.over_budget, again.refused_specs),
            (first.unimplementable, first.over_budget, first.refused_specs)
        );
    }
}

#[test]
fn a_compile_only_campaign_says_it_ran_nothing() {
    let mut options = FuzzOptions::new(6, 5, TargetId::X86Avx512);
    options.compilers = common::compilers();
    options.compile_only = true;
    let report = run(&options, &mut Vec::new());
    assert!(report.failures.is_empty(), "{}", report.render());
    assert!(!report.ran);
    assert!(report.render().contains("kernels were compiled, not run"), "{}", report.render());
}
