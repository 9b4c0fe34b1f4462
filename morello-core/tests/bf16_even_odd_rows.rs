//! A bf16 vector-matrix product whose matrix is row-major is read in place by
//! `MatmulLoopBf16EvenOdd`: one 64-byte load per 32 columns of a row, widened into even and
//! odd columns without shuffles. The search chooses it on AVX-512, and it agrees with the
//! reference evaluator on rows any distance apart, on Specs wider than one pass of 128
//! columns, with a part-pass left over, and on a single row.

mod common;

use common::kernel_tiles::kernel_on_l1_tiles;
use morello_core::imp::{Impl, ImplNode};
use morello_core::kernels::KernelKind;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::X86_AVX512;

const KERNEL: KernelKind = KernelKind::MatmulLoopBf16EvenOdd;

fn uses_even_odd_loops(imp: &Impl) -> bool {
    let mut found = false;
    imp.visit(&mut |node| found |= matches!(node.node, ImplNode::Kernel(KERNEL)));
    found
}

#[test]
fn the_search_reads_a_row_major_bf16_matrix_with_even_odd_loops() {
    let spec = Spec::parse_for("Matmul(1x1x64x512, (bf16, GL), (bf16, GL), (f32, GL), serial)", &X86_AVX512).unwrap();
    let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
    assert!(uses_even_odd_loops(&imp), "{spec}: no {KERNEL} in\n{imp}");
    common::check_impl(&imp, &X86_AVX512);
}

/// `MatmulAccum(1x1xKxN)` tiles of a 16×640 matrix, each read by the kernel from L1: `n` of 160
/// is one pass and a pass of one load, 416 three passes (a loop) and one of a single load, 64
/// half a pass; `k` of 1 is a single row.
#[test]
fn even_odd_loops_agree_with_the_reference_on_strided_rows_and_part_passes() {
    let mut synth = Synthesizer::new(&X86_AVX512);
    for (tile, columns) in [([1, 1, 8, 160], 640), ([1, 1, 4, 416], 832), ([1, 1, 1, 64], 640), ([1, 1, 16, 128], 640)]
    {
        let text = format!("MatmulAccum(1x1x16x{columns}, (bf16, GL), (bf16, GL), (f32, GL), serial)");
        let imp = kernel_on_l1_tiles(&text, &tile, KERNEL, &X86_AVX512, &mut synth);
        assert!(uses_even_odd_loops(&imp));
        common::check_impl(&imp, &X86_AVX512);
    }
}

#[test]
fn even_odd_loops_need_whole_registers_of_columns_and_row_major_rows() {
    for (text, why) in [
        ("MatmulAccum(1x1x8x48, (bf16, L1), (bf16, L1), (f32, L1))", "a multiple of 32"),
        ("MatmulAccum(1x2x8x64, (bf16, L1), (bf16, L1), (f32, L1))", "1×1×k×n"),
        ("MatmulAccum(1x1x8x64, (bf16, L1), (bf16, L1, col_major), (f32, L1))", "row-major"),
        ("MatmulAccum(1x1x8x64, (f32, L1), (f32, L1), (f32, L1))", "bf16 · bf16 → f32"),
    ] {
        let spec: Spec = text.parse().unwrap();
        let error = KERNEL.applies(spec.logical(), &X86_AVX512).expect_err(text).to_string();
        assert!(error.contains(why), "{text}: {error}");
    }
}
