//! The synthesis budget, guarded by a count rather than a clock: the Specs searched (on one
//! thread, which does not depend on the machine) for a few Specs of the synthesis suite
//! (`morello_core::suite`) in the default search space must stay under the ceilings recorded
//! here. A change to the cost model, the rewrites or the search that makes any of them search
//! more fails this test; raise a ceiling only with the synthesis benchmark (`morello-db bench`)
//! before and after in the commit message.

use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::suite::suite;
use morello_core::target::{Target, X86_AVX2, X86_AVX512};

/// (suite Spec, target, Specs searched when the ceiling was recorded, ceiling).
const BUDGETS: &[(&str, &Target, u64, u64)] = &[
    ("matmul 64^3", &X86_AVX2, 17_341, 17_700),
    ("matmul 3x64^3", &X86_AVX2, 34_641, 35_700),
    ("softmax 8x512", &X86_AVX2, 24_273, 25_000),
    ("matmul 64^3", &X86_AVX512, 1_927, 2_000),
    ("matmul 3x64^3", &X86_AVX512, 8_136, 8_400),
    ("matmul 128^3", &X86_AVX512, 17_919, 18_500),
    ("softmax 8x512", &X86_AVX512, 38_767, 40_000),
    ("conv 1x8x3x30x30x3x3", &X86_AVX512, 253_192, 260_000),
    ("conv 1x8x3x30x30x3x3", &X86_AVX2, 267_492, 275_000),
];

#[test]
fn suite_specs_search_no_more_than_their_ceilings() {
    let specs = suite();
    let mut over = Vec::new();
    for &(name, target, recorded, ceiling) in BUDGETS {
        let entry = specs.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no suite Spec `{name}`"));
        let spec = entry.spec(target).unwrap();
        let mut synth = Synthesizer::new(target);
        synth.set_search_space(SearchSpace::default());
        synth.set_threads(1);
        assert!(synth.optimal_cost(&spec).is_some(), "{name} on {}: no implementation", target.name);
        let searched = synth.stats().specs_solved;
        println!("{name} on {}: {searched} Specs searched (recorded {recorded}, ceiling {ceiling})", target.name);
        if searched > ceiling {
            over.push(format!("{name} on {}: {searched} Specs searched, over the ceiling {ceiling}", target.name));
        }
    }
    assert!(over.is_empty(), "the synthesis budget grew:\n{}", over.join("\n"));
}

#[test]
fn the_default_search_space_is_the_fast_one() {
    // The ceilings above are recorded for it.
    assert_eq!(SearchSpace::default(), SearchSpace::Fast);
}
