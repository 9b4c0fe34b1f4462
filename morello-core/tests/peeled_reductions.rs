//! Peeled reductions in the search: a Matmul whose contraction dimension is split where its
//! output is not in registers computes the first part into the output and accumulates the rest
//! (`Action::Peel`), instead of zeroing the output in a pass of its own and then reading it back
//! for every part. The search finds such plans, the model charges them less than `to_accum`'s,
//! and the kernels agree with the reference evaluator.

mod common;

use morello_core::cost::impl_cost;
use morello_core::db::{Database, file};
use morello_core::imp::Impl;
use morello_core::level::Level;
use morello_core::primitive::Primitive;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::X86_AVX512;

/// `b` (2048×16 f32, 128 KiB) does not fit the 48 KiB L1, so the search splits `k`, and each
/// part would otherwise read the output back. `b` is a block of a matrix 1024 or more wide
/// (`c1, paged`: its rows lie whole pages apart), whose rows L2 does not stream for free
/// (`cost::row_pieces`): a contiguous `b`, or one whose rows are closer, is read
/// over the whole of `k` in one part.
const SPEC: &str = "Matmul(1x16x2048x16, (f32, GL), (f32, GL, row_major, c1, paged), (f32, GL), serial)";

/// The levels of the outputs that fills (`to_accum`'s first stage) set in `imp`.
fn filled_levels(imp: &Impl) -> Vec<Level> {
    let mut levels = Vec::new();
    imp.visit(&mut |node| {
        if let Some(Primitive::Fill(_)) = node.spec.primitive() {
            levels.push(node.spec.operands()[0].level());
        }
    });
    levels
}

#[test]
fn the_search_peels_a_split_reduction_and_zeroes_only_registers() {
    let spec = Spec::parse_for(SPEC, &X86_AVX512).unwrap();
    let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
    let sizes = common::peeled_reductions(&imp);
    assert!(!sizes.is_empty(), "no peel in\n{imp}");
    assert!(sizes.iter().all(|&k| k < 2048 && 2048 % k == 0), "{sizes:?}");
    let levels = filled_levels(&imp);
    assert!(!levels.is_empty() && levels.iter().all(|&l| l == Level::VRF), "fills at {levels:?} in\n{imp}");
    common::check_impl(&imp, &X86_AVX512);
}

#[test]
fn a_peeled_implementation_survives_the_database_file() {
    let spec = Spec::parse_for(SPEC, &X86_AVX512).unwrap();
    let mut cold = Synthesizer::with_database(Database::new(&X86_AVX512));
    let expected = cold.synthesize(&spec).unwrap();
    assert!(!common::peeled_reductions(&expected).is_empty(), "no peel in\n{expected}");
    let dir = std::env::temp_dir().join(format!("morello-peel-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("peeled.morellodb");
    file::save(&mut cold.into_database(), &path).unwrap();
    let (db, _) = file::load(&path, &X86_AVX512);
    let mut warm = Synthesizer::with_database(db);
    warm.set_offline(true);
    let imp = warm.synthesize(&spec).unwrap();
    assert_eq!(imp.to_string(), expected.to_string());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peel_costs_less_than_zeroing_the_output_first() {
    let spec = Spec::parse_for(SPEC, &X86_AVX512).unwrap();
    let mut synth = Synthesizer::new(&X86_AVX512);
    let mut best = |partial: PartialImpl| {
        let imp = partial.synthesize_all(&mut synth).unwrap();
        (impl_cost(&imp, &X86_AVX512).unwrap().main, imp)
    };
    let (peeled, peeled_imp) = best(PartialImpl::new(spec.clone(), &X86_AVX512).peel(128).unwrap());
    let (zeroed, zeroed_imp) = best(PartialImpl::new(spec, &X86_AVX512).to_accum().unwrap());
    assert!(peeled < zeroed, "peeled {peeled}:\n{peeled_imp}\nzeroed first {zeroed}:\n{zeroed_imp}");
    // Zeroing first sets the output where it lies, outside the registers.
    assert!(filled_levels(&zeroed_imp).iter().any(|&l| l != Level::VRF), "{zeroed_imp}");
}

#[test]
fn a_peel_prints_its_reduction_and_first_part() {
    let spec = Spec::parse_for(SPEC, &X86_AVX512).unwrap();
    let peeled = PartialImpl::new(spec.clone(), &X86_AVX512).peel(64).unwrap().into_impl();
    assert_eq!(peeled.describe_node(), "peel k: 64 of 2048 first");
    // `to_accum`'s block (a fill, then the accumulating Spec) is no peel.
    let zeroed = PartialImpl::new(spec, &X86_AVX512).to_accum().unwrap().into_impl();
    assert_eq!(zeroed.describe_node(), "block");
}
