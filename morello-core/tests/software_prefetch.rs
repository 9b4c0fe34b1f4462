//! Streamed inputs get software prefetches in the generated C (`codegen::prefetch`): an input
//! of at least 4 MiB that no loop revisits is prefetched as far ahead as the loops next return
//! to the row being loaded, when the lines in flight for the rows in between fit in half of
//! L1. Inputs that a loop revisits, small inputs and rows returned to too late get none, and C
//! with prefetches agrees with the reference evaluator.

mod common;

use morello_core::codegen::emit_c;
use morello_core::imp::Impl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::{Target, TargetId, X86_AVX2};

/// The prefetch lines of `imp`'s C.
fn prefetches(imp: &Impl, target: &'static Target) -> Vec<String> {
    let source = emit_c(imp, "k", target).unwrap().source;
    source.lines().filter(|l| l.contains("__builtin_prefetch")).map(|l| l.trim().to_owned()).collect()
}

fn synthesized(text: &str, target: &'static Target) -> Impl {
    let spec = Spec::parse_for(text, target).unwrap();
    Synthesizer::new(target).synthesize(&spec).unwrap()
}

#[test]
fn a_streamed_matrix_is_prefetched_and_the_kernel_stays_correct() {
    // A 4 MiB matrix, read two rows at a time in strips of 32 columns: the loops return to a
    // row one strip (128 bytes) later, after the other row.
    let imp = synthesized("Matmul(1x1x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX2);
    let lines = prefetches(&imp, &X86_AVX2);
    assert!(!lines.is_empty(), "no prefetch in:\n{imp}");
    for line in &lines {
        assert!(line.starts_with("__builtin_prefetch((const char *)(p1 + "), "{line}");
        assert!(line.ends_with(") + 128, 0, 3);"), "{line}");
    }
    common::check_impl(&imp, &X86_AVX2);
}

#[test]
fn the_bf16_vector_matrix_product_prefetches_one_strip_ahead() {
    // The benchmark's bf16 kernel reads 32 rows at a time in strips of 256 columns (512 bytes):
    // 32 × 512 bytes in flight fit in half of the 32 KiB L1.
    let target = TargetId::X86Avx512.target();
    let imp = synthesized("Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial)", target);
    let lines = prefetches(&imp, target);
    assert_eq!(lines.len(), 8, "one per 64-byte line of each 256-column load:\n{imp}");
    assert!(lines.iter().all(|l| l.starts_with("__builtin_prefetch((const char *)(p1 + ") && l.contains(") + 512, ")));
}

#[test]
fn rows_returned_to_too_late_revisited_and_small_inputs_get_none() {
    let target = TargetId::X86Avx512.target();
    // The f32 kernel returns to a row 1 KiB later after 31 other rows: 32 KiB, more than half
    // of L1.
    let f32_vecmat = synthesized("Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial)", target);
    assert_eq!(prefetches(&f32_vecmat, target), Vec::<String>::new(), "{f32_vecmat}");
    // A loop over the rows of the left operand revisits the whole 4 MiB right operand.
    let spec = Spec::parse_for("Matmul(1x4x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX2).unwrap();
    let (partial, _) = run_schedule(spec, "tile([1, 1, 1024, 1024]); synthesize_all;", &X86_AVX2).unwrap();
    let revisited = partial.synthesize_all(&mut Synthesizer::new(&X86_AVX2)).unwrap();
    assert_eq!(prefetches(&revisited, &X86_AVX2), Vec::<String>::new(), "{revisited}");
    // The same loops over a 256 KiB matrix: small enough to stay in the outer caches.
    let small = synthesized("Matmul(1x1x256x256, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX2);
    assert_eq!(prefetches(&small, &X86_AVX2), Vec::<String>::new(), "{small}");
}
