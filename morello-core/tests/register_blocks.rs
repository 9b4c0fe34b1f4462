//! The search tiles a Matmul's rows to register blocks of 6 or 14 rows as well as to powers of
//! two (`search::enumerate`), where the tile's output fits in the vector registers, and picks
//! them where the cost model prefers them; the kernels built around them agree with the
//! reference evaluator.

mod common;

use morello_core::imp::{Impl, ImplNode};
use morello_core::level::Level;
use morello_core::rewrite::Action;
use morello_core::search::{Synthesizer, actions};
use morello_core::spec::Spec;
use morello_core::target::{Target, TargetId, X86_AVX2};

/// The shapes (rows × columns) of the output blocks `imp` keeps in vector registers.
fn register_blocks(imp: &Impl) -> Vec<(u32, u32)> {
    let mut blocks = Vec::new();
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(alloc) = &node.node
            && alloc.operand == 2
            && alloc.tensor.level() == Level::VRF
        {
            let shape = node.spec.shape();
            blocks.push((shape[1], shape[3]));
        }
    });
    blocks
}

fn synthesized(text: &str, target: &'static Target) -> Impl {
    let spec = Spec::parse_for(text, target).unwrap();
    Synthesizer::new(target).synthesize(&spec).unwrap()
}

/// The row counts of the serial tiles `actions` offers along a Matmul's rows.
fn row_tiles(text: &str, target: &'static Target) -> Vec<u32> {
    let spec = Spec::parse_for(text, target).unwrap();
    let rows = spec.shape()[1];
    actions(&spec, target)
        .into_iter()
        .filter_map(|a| match a {
            Action::Tile { tile, parallel: false } if tile[1] != rows => Some(tile[1]),
            _ => None,
        })
        .collect()
}

#[test]
fn avx2_gemm_keeps_six_rows_of_two_vectors_in_registers() {
    // 16 ymm registers: 6 rows × 2 vectors of accumulators, 2 of the rhs and a broadcast, as
    // in the libraries' AVX2 kernels. The largest power-of-two block is 4×16.
    let imp = synthesized("Matmul(1x12x16x16, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX2);
    let blocks = register_blocks(&imp);
    assert!(!blocks.is_empty() && blocks.iter().all(|&b| b == (6, 16)), "{blocks:?} in\n{imp}");
    common::check_impl(&imp, &X86_AVX2);
}

#[test]
fn avx512_gemm_keeps_fourteen_rows_with_a_boundary_block() {
    // 32 zmm registers: 14 rows × 2 vectors. 28 rows are two blocks; 30 rows leave a boundary
    // of 2 rows, which the search also implements.
    let target = TargetId::X86Avx512.target();
    let even = synthesized("Matmul(1x28x16x32, (f32, GL), (f32, GL), (f32, GL), serial)", target);
    assert!(register_blocks(&even).contains(&(14, 32)), "{even}");
    common::check_impl(&even, target);
    let ragged = synthesized("Matmul(1x30x16x32, (f32, GL), (f32, GL), (f32, GL), serial)", target);
    let blocks = register_blocks(&ragged);
    assert!(blocks.contains(&(14, 32)) && blocks.iter().any(|&(rows, _)| rows < 6), "{blocks:?} in\n{ragged}");
    common::check_impl(&ragged, target);
}

#[test]
fn register_block_rows_are_offered_only_where_the_block_fits_in_registers() {
    // Operands in L1 (in global memory, data this small would only be cached).
    let target = TargetId::X86Avx512.target();
    // 32 columns of f32: 14 × 128 bytes and 6 × 128 bytes fit in 2 KiB of registers.
    assert_eq!(
        row_tiles("Matmul(1x64x16x32, (f32, L1), (f32, L1), (f32, L1), serial)", target),
        [1, 2, 4, 8, 16, 32, 6, 14]
    );
    // 64 columns: only 6 rows fit.
    assert_eq!(
        row_tiles("Matmul(1x64x16x64, (f32, L1), (f32, L1), (f32, L1), serial)", target),
        [1, 2, 4, 8, 16, 32, 6]
    );
    // 128 columns: neither; and never more rows than the Spec has.
    assert_eq!(row_tiles("Matmul(1x64x16x128, (f32, L1), (f32, L1), (f32, L1), serial)", target), [1, 2, 4, 8, 16, 32]);
    assert_eq!(row_tiles("Matmul(1x8x16x32, (f32, L1), (f32, L1), (f32, L1), serial)", target), [1, 2, 4, 6]);
    // An output already in registers is tiled in powers of two only.
    assert_eq!(
        row_tiles("MatmulAccum(1x16x1x16, (f32, L1), (f32, L1), (f32, VRF, row_major, v16), serial)", target),
        [1, 2, 4, 8]
    );
}
