//! Streamed inputs get software prefetches in the generated C (`codegen::prefetch`): an input
//! of at least 4 MiB that no loop revisits, read by loops that continue more rows than the
//! hardware's stream prefetcher follows, is prefetched as far ahead as the loops next return to
//! the row being loaded, when the lines in flight for the rows in between fit in half of L1.
//! Inputs that a loop revisits, small inputs, loops over few rows and rows returned to too late
//! get none, and C with prefetches agrees with the reference evaluator.

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

/// `text` implemented by `schedule`, the search completing it.
fn scheduled(text: &str, schedule: &str, target: &'static Target) -> Impl {
    let spec = Spec::parse_for(text, target).unwrap();
    let (partial, _) = run_schedule(spec, schedule, target).unwrap();
    partial.synthesize_all(&mut Synthesizer::new(target)).unwrap()
}

#[test]
fn a_streamed_matrix_is_prefetched_and_the_kernel_stays_correct() {
    // A 4 MiB matrix, read 16 rows at a time in strips of 32 columns: the loops return to a
    // row one strip (128 bytes) later, after 15 other rows, more than the 8 streams the
    // prefetcher follows.
    let text = "Matmul(1x1x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial)";
    let imp = scheduled(text, "to_accum; tile([1, 1, 16, 1024]); tile([1, 1, 16, 32]); synthesize_all;", &X86_AVX2);
    assert!(X86_AVX2.streams.prefetch_streams < 16);
    let lines = prefetches(&imp, &X86_AVX2);
    assert!(!lines.is_empty(), "no prefetch in:\n{imp}");
    for line in &lines {
        assert!(line.starts_with("__builtin_prefetch((const char *)(p1 + "), "{line}");
        assert!(line.ends_with(") + 128, 0, 3);"), "{line}");
    }
    common::check_impl(&imp, &X86_AVX2);
}

#[test]
fn thirty_two_rows_of_bf16_strips_are_prefetched_one_strip_ahead() {
    // 32 rows at a time in strips of 256 columns (512 bytes): 32 × 512 bytes in flight fit in
    // half of the 32 KiB L1.
    let target = TargetId::X86Avx512.target();
    let text = "Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial)";
    let imp = scheduled(text, "to_accum; tile([1, 1, 32, 16384]); tile([1, 1, 32, 256]); synthesize_all;", target);
    let lines = prefetches(&imp, target);
    assert_eq!(lines.len(), 8, "one per 64-byte line of each 256-column load:\n{imp}");
    assert!(lines.iter().all(|l| l.starts_with("__builtin_prefetch((const char *)(p1 + ") && l.contains(") + 512, ")));
}

#[test]
fn few_rows_rows_returned_to_too_late_revisited_and_small_inputs_get_none() {
    let target = TargetId::X86Avx512.target();
    // The searched vector-matrix kernels read at most as many rows at once as the stream
    // prefetcher follows, which keeps up without help.
    for dtype in ["f32", "bf16"] {
        let text = format!("Matmul(1x1x2048x16384, ({dtype}, GL), ({dtype}, GL), (f32, GL), serial)");
        let searched = synthesized(&text, target);
        assert_eq!(prefetches(&searched, target), Vec::<String>::new(), "{searched}");
    }
    // 32 rows in strips of 256 f32 columns, one row at a time, return to a row 1 KiB later:
    // 32 KiB in flight, more than half of L1.
    let late = scheduled(
        "Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial)",
        "to_accum; tile([1, 1, 32, 16384]); tile([1, 1, 32, 256]); tile([1, 1, 1, 256]); synthesize_all;",
        target,
    );
    assert_eq!(prefetches(&late, target), Vec::<String>::new(), "{late}");
    // A loop over the rows of the left operand revisits the whole 4 MiB right operand.
    let revisited = scheduled(
        "Matmul(1x4x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial)",
        "tile([1, 1, 1024, 1024]); to_accum; tile([1, 1, 16, 1024]); tile([1, 1, 16, 32]); synthesize_all;",
        &X86_AVX2,
    );
    assert_eq!(prefetches(&revisited, &X86_AVX2), Vec::<String>::new(), "{revisited}");
    // The same loops over a 256 KiB matrix: small enough to stay in the outer caches.
    let small = scheduled(
        "Matmul(1x1x256x256, (f32, GL), (f32, GL), (f32, GL), serial)",
        "to_accum; tile([1, 1, 16, 256]); tile([1, 1, 16, 32]); synthesize_all;",
        &X86_AVX2,
    );
    assert_eq!(prefetches(&small, &X86_AVX2), Vec::<String>::new(), "{small}");
}
