//! Hostile input: mutated and random text fed to the Spec parser, the schedule parser and
//! `kernel!`'s parser never panics, and every error points inside the text. A Spec that
//! parses prints as text that parses back to it.

mod hostile;

use hostile::{KERNELS, SCHEDULES, mutate, mutation, random_text, within};
use morello_core::schedule::ScheduleError;
use morello_core::spec::Spec;
use morello_core::syntax::{Schedule, parse_kernel_decls, run_schedule};
use morello_core::target::{Target, TargetId};
use proc_macro2::TokenStream;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::str::FromStr;

/// Parses `text` as a Spec for `target`: an error must point inside the text, and a Spec must
/// survive printing and parsing again.
fn check_spec(text: &str, target: &Target) {
    match Spec::parse_for(text, target) {
        Ok(spec) => {
            let printed = spec.to_string();
            let again = Spec::parse_for(&printed, target)
                .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
            assert_eq!(again, spec, "{text:?} printed as {printed:?}");
        }
        Err(e) => assert!(within(text, e.line, e.column), "{text:?}: error outside the text: {e}"),
    }
}

/// Parses `text` as a schedule on its own and applies it to `spec`: parse errors must point
/// inside the text, and a parsed schedule must print as text that parses to the same steps.
fn check_schedule(text: &str, spec: &Spec, target: &'static Target) {
    match text.parse::<Schedule>() {
        Ok(schedule) => {
            let printed = schedule.to_string();
            let again: Schedule = printed
                .parse()
                .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
            assert_eq!(again.to_string(), printed, "{text:?}");
        }
        Err(e) => assert!(within(text, e.line, e.column), "{text:?}: error outside the text: {e}"),
    }
    if let Err(ScheduleError::Syntax(e)) = run_schedule(spec.clone(), text, target) {
        assert!(within(text, e.line, e.column), "{text:?}: error outside the text: {e}");
    }
}

/// Tokenizes `text` and parses it as the body of `kernel!` (text that does not tokenize is not
/// Rust and never reaches the macro). Every error must point inside the text; every kernel
/// that parses must also yield its synthesis job and symbol.
fn check_kernels(text: &str) {
    let Ok(tokens) = TokenStream::from_str(text) else { return };
    match parse_kernel_decls(tokens) {
        Ok(decls) => {
            for decl in decls {
                let _ = decl.elaborate();
                let _ = decl.symbol("hostile");
            }
        }
        Err(errors) => {
            for e in errors {
                let (start, end) = (e.span().start(), e.span().end());
                assert!(
                    within(text, start.line, start.column + 1) && within(text, end.line, end.column + 1),
                    "{text:?}: error `{e}` at {start:?}..{end:?} is outside the text"
                );
            }
        }
    }
}

/// Every seed Spec: one per primitive and the hand-written ones.
fn spec_seeds() -> Vec<String> {
    let mut seeds = hostile::primitive_specs();
    seeds.extend(hostile::EXTRA_SPECS.iter().map(|s| (*s).to_owned()));
    seeds
}

fn target(index: usize) -> &'static Target {
    TargetId::ALL[index % TargetId::ALL.len()].target()
}

fn seed_index() -> impl Strategy<Value = usize> {
    any::<usize>()
}

#[test]
fn the_seed_corpus_is_valid() {
    // Guards the properties against mutating invalid seeds (which tests little).
    let missing: Vec<&str> =
        morello_core::primitive::Primitive::names().filter(|n| hostile::valid_spec_of(n).is_none()).collect();
    assert!(missing.is_empty(), "no valid seed Spec for {missing:?}");
    for text in hostile::EXTRA_SPECS {
        text.parse::<Spec>().unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    for (spec, schedule) in SCHEDULES {
        let spec: Spec = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        run_schedule(spec, schedule, target(0)).unwrap_or_else(|e| panic!("{schedule}: {e}"));
    }
    for text in KERNELS {
        let decls = parse_kernel_decls(TokenStream::from_str(text).unwrap()).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(decls.len() >= 2);
    }
}

#[test]
fn every_truncation_of_every_seed() {
    for text in spec_seeds() {
        for (i, _) in text.char_indices() {
            check_spec(&text[..i], target(i));
        }
    }
    for (spec, schedule) in SCHEDULES {
        let spec: Spec = spec.parse().expect("a valid seed");
        for (i, _) in schedule.char_indices() {
            check_schedule(&schedule[..i], &spec, target(i));
        }
    }
    for text in KERNELS {
        for (i, _) in text.char_indices() {
            check_kernels(&text[..i]);
        }
    }
}

/// The seed of the properties below: `MORELLO_HOSTILE_SEED` if set, else a fixed one.
fn hostile_seed() -> u64 {
    std::env::var("MORELLO_HOSTILE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x686f_7374_696c_6531)
}

proptest! {
    // A fixed seed, so that CI runs the same cases every time (a failure found here becomes a
    // case in `hostile_regressions.rs`); `MORELLO_HOSTILE_SEED=<n>` explores others.
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(hostile_seed()),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_specs(seed in seed_index(), edits in prop::collection::vec(mutation(), 1..5), t in 0usize..3) {
        let seeds = spec_seeds();
        let text = mutate(&seeds[seed % seeds.len()], &edits);
        check_spec(&text, target(t));
        // The same text through the token parser, as `kernel!` sees it.
        check_kernels(&format!("pub fn k({text});"));
    }

    #[test]
    fn mutated_schedules(seed in seed_index(), edits in prop::collection::vec(mutation(), 1..5), t in 0usize..3) {
        let (spec_text, schedule) = SCHEDULES[seed % SCHEDULES.len()];
        let text = mutate(schedule, &edits);
        let spec: Spec = spec_text.parse().expect("a valid seed");
        check_schedule(&text, &spec, target(t));
        // With spans, as `kernel!` applies it.
        check_kernels(&format!("fn k({spec_text}) schedule {{ {text} }}"));
    }

    #[test]
    fn mutated_kernels(seed in seed_index(), edits in prop::collection::vec(mutation(), 1..5)) {
        check_kernels(&mutate(KERNELS[seed % KERNELS.len()], &edits));
    }

    #[test]
    fn random_text_everywhere(text in random_text(), t in 0usize..3) {
        check_spec(&text, target(t));
        let spec: Spec = SCHEDULES[0].0.parse().expect("a valid seed");
        check_schedule(&text, &spec, target(t));
        check_kernels(&text);
    }
}
