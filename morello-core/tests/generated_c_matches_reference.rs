//! Every generated kernel, compiled with gcc and clang, agrees with the reference evaluator.
//!
//! `MORELLO_BLESS=1` rewrites the golden C snapshots.

mod common;

use morello_core::codegen::emit_c;
use morello_core::imp::Impl;
use morello_core::kernels::KernelKind;
use morello_core::level::Level;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::{LayoutDecl, Spec};
use morello_core::target::X86_AVX2;

/// Checks `imp` on AVX2 (see [`common::check_impl`]).
fn check_impl(imp: &Impl) {
    common::check_impl(imp, &X86_AVX2);
}

fn check_synthesized(texts: &[&str]) {
    let mut synth = Synthesizer::new(&X86_AVX2);
    for text in texts {
        let spec: Spec = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let imp = synth.synthesize(&spec).unwrap_or_else(|e| panic!("{e}"));
        check_impl(&imp);
    }
}

#[test]
fn synthesized_matmuls() {
    check_synthesized(&[
        "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL))",
        "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))",
        "Matmul(2x2x3x4, (f32, GL), (f32, GL), (f32, GL))",
        "Matmul(1x3x5x7, (u32, GL), (u32, GL), (u32, GL))",
        "Matmul(1x4x8x16, (u16, GL), (u16, GL), (u16, GL))",
        "Matmul(1x2x3x4, (i8, GL), (i8, GL), (i8, GL))",
        "Matmul(1x4x8x8, (f32, GL, col_major), (f32, GL), (f32, GL, col_major))",
        "MatmulAccum(1x4x4x8, (f32, L1), (f32, L1), (f32, L1))",
        "MatmulAccum(1x1x4x16, (f32, RF), (f32, L1), (f32, VRF, row_major, v8))",
    ]);
}

#[test]
fn synthesized_moves_and_fills() {
    check_synthesized(&[
        "Move(8x16, (f32, GL, row_major), (f32, GL, col_major))",
        "Move(3x5, (u8, GL, row_major), (u8, GL, col_major))",
        "Move(1x8x32, (f32, GL), (f32, GL, [0, 2, 1, 2 p8]))",
        "Move(4x4x2, (i16, GL, col_major), (i16, GL, row_major))",
        "Move(1x16, (f32, L1), (f32, VRF, row_major, v8))",
        "FillZero(5x7, (f32, GL))",
        "FillZero(2x4, (bf16, GL))",
        "FillZero(1x16, (u32, VRF, row_major, v8))",
    ]);
}

#[test]
fn hand_schedules_with_synthesized_remainders() {
    let mut synth = Synthesizer::new(&X86_AVX2);
    // Paper Figure 1, completed by synthesis.
    let fig1 = figure_one(&mut synth);
    check_impl(&fig1);

    // A heap-allocated (128 KiB) relayout buffer, and tiles that do not divide.
    let spec: Spec = "Move(1x128x256, (f32, GL), (f32, GL, [0, 2, 1, 2 p16]))".parse().unwrap();
    let imp = PartialImpl::new(spec, &X86_AVX2)
        .move_param(0, Level::GL, Some(LayoutDecl::ColMajor), None)
        .unwrap()
        .synthesize_all(&mut synth)
        .unwrap();
    let source = emit_c(&imp, "k", &X86_AVX2).unwrap().source;
    assert!(source.contains("morello_take_buffer(t"), "the buffer is on the heap, kept between calls");
    check_impl(&imp);

    let spec: Spec = "Matmul(1x10x12x20, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let imp = PartialImpl::new(spec, &X86_AVX2)
        .to_accum()
        .and_then(|p| p.tile(&[1, 4, 12, 8]))
        .and_then(|p| p.split(5))
        .unwrap()
        .synthesize_all(&mut synth)
        .unwrap();
    check_impl(&imp);
}

#[test]
fn heap_buffers_of_parallel_iterations_agree_with_the_reference() {
    // Each of four parallel iterations copies all of `b` (96 KiB) into a heap buffer: the
    // iterations running at once take the site's spare buffers or allocate their own, and the
    // driver's first call leaves its leftovers in the spares for the checked one.
    let mut synth = Synthesizer::new(&X86_AVX2);
    let spec: Spec = "Matmul(1x16x256x96, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let imp = PartialImpl::new(spec, &X86_AVX2)
        .parallel_tile(&[1, 4, 256, 96])
        .and_then(|p| p.move_param(1, Level::GL, Some(LayoutDecl::ColMajor), None))
        .and_then(|p| p.synthesize_all(&mut synth))
        .unwrap();
    let kernel = emit_c(&imp, "k", &X86_AVX2).unwrap();
    assert!(kernel.parallel, "a parallel kernel");
    assert!(kernel.source.contains("morello_take_buffer(t"), "the copy is on the heap, kept between calls");
    check_impl(&imp);
}

fn figure_one(synth: &mut Synthesizer) -> Impl {
    let spec: Spec = "MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial)".parse().unwrap();
    PartialImpl::new(spec, &X86_AVX2)
        .tile(&[1, 1, 1, 16])
        .and_then(|p| p.move_param(2, Level::VRF, Some(LayoutDecl::RowMajor), Some(8)))
        .and_then(|p| p.subschedule(&[0], |s| s.select(KernelKind::VectorAssign)))
        .and_then(|p| p.subschedule(&[1], |s| s.select(KernelKind::BroadcastVecMultAdd)))
        .and_then(|p| p.subschedule(&[2], |s| s.select(KernelKind::VectorAssign)))
        .unwrap()
        .synthesize_all(synth)
        .unwrap()
}

#[test]
fn figure_one_c_matches_its_snapshot() {
    let imp = figure_one(&mut Synthesizer::new(&X86_AVX2));
    let source = emit_c(&imp, "fig1", &X86_AVX2).unwrap().source;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/fig1.c");
    if std::env::var_os("MORELLO_BLESS").is_some() {
        std::fs::write(&path, &source).unwrap();
    }
    let expected = std::fs::read_to_string(&path).expect("snapshot exists (create it with MORELLO_BLESS=1)");
    assert_eq!(source, expected, "generated C changed; review it and re-bless with MORELLO_BLESS=1");
}

/// `harness::check_against_reference`, which tools use, accepts a kernel for its own Spec and
/// rejects it for a Spec that computes something else on operands of the same shape.
#[test]
fn the_reference_check_rejects_a_kernel_of_another_spec() {
    use morello_core::harness::{CCompiler, HarnessError, check_against_reference, cpu_supports};
    if !cpu_supports(&X86_AVX2) {
        return;
    }
    let zeros: Spec = "FillZero(1x16, (f32, GL))".parse().unwrap();
    let imp = Synthesizer::new(&X86_AVX2).synthesize(&zeros).unwrap();
    let kernel = emit_c(&imp, "fill_zero", &X86_AVX2).unwrap();
    let gcc = CCompiler::gcc();
    check_against_reference(&kernel, zeros.logical(), &gcc, &X86_AVX2).unwrap();
    let neg_inf: Spec = "FillNegInf(1x16, (f32, GL))".parse().unwrap();
    let wrong = check_against_reference(&kernel, neg_inf.logical(), &gcc, &X86_AVX2);
    assert!(matches!(wrong, Err(HarnessError::Wrong(_))), "{wrong:?}");
}
