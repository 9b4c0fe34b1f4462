//! Tiles whose rows lie a whole number of pages apart (`TensorSpec::paged`): caches index their
//! sets by address within a page, so such rows all fall into the same few sets. The tensors
//! know it through tiling, cache fills and views, Spec syntax writes it (`paged`), the cost
//! model counts a page of cache for each such row past what the cache holds
//! (`TensorSpec::cache_footprint_lines`), and the search packs such tiles into contiguous
//! buffers where that pays.

mod common;

use morello_core::cost::residency;
use morello_core::imp::{Impl, ImplNode};
use morello_core::level::Level;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::syntax::run_schedule;
use morello_core::target::{Residency, TargetId, X86_AVX2};
use morello_core::tensor::TensorSpec;

fn matrix(text: &str) -> TensorSpec {
    let spec = Spec::parse_for(text, &X86_AVX2).unwrap_or_else(|e| panic!("{text}: {e}"));
    spec.operands()[1].clone()
}

#[test]
fn tiles_know_whether_their_rows_are_whole_pages_apart() {
    let t = &X86_AVX2;
    // `b` is 1024 f32 wide: its rows are 4 KiB apart. 256 wide: 1 KiB apart.
    let wide = matrix("Matmul(1x8x64x1024, (f32, GL), (f32, GL), (f32, GL))");
    let narrow = matrix("Matmul(1x8x64x256, (f32, GL), (f32, GL), (f32, GL))");
    assert!(!wide.paged(), "a whole buffer is contiguous: one run");
    let tile = wide.tile(&[1, 64, 32], t).unwrap();
    assert!(tile.paged() && !tile.is_contiguous());
    assert!(!narrow.tile(&[1, 64, 32], t).unwrap().paged());
    // Whole rows are contiguous; a tile of a tile keeps its parent's runs; a single row has
    // one run.
    assert!(!wide.tile(&[1, 8, 1024], t).unwrap().paged());
    assert!(tile.tile(&[1, 4, 16], t).unwrap().paged());
    assert!(!tile.tile(&[1, 1, 32], t).unwrap().paged());
    // Rows of a tile of 2 KiB-wide rows in a buffer of 2 KiB rows: 2 KiB apart, even though
    // the tile's own rows are 128 bytes.
    let half = matrix("Matmul(1x8x64x512, (f32, GL), (f32, GL), (f32, GL))");
    assert!(!half.tile(&[1, 64, 32], t).unwrap().paged());
    // A hardware cache fill reads the same memory; a copy is a new, contiguous buffer.
    assert!(tile.cache_filled(Level::L1).paged());
    let copy = tile.moved(tile.dtype(), Level::GL, tile.layout().with_contig(u8::MAX), None, t).unwrap();
    assert!(!copy.paged() && copy.is_contiguous());
}

#[test]
fn paged_runs_past_what_a_cache_holds_take_a_page_each() {
    let t = &X86_AVX2;
    let wide = matrix("Matmul(1x8x64x1024, (f32, GL), (f32, GL), (f32, GL))");
    let l1 = t.level(Level::L1).capacity_bytes;
    assert_eq!(l1 / 4096, 8, "the AVX2 target's L1 holds 8 pages");
    // 8 rows of 32 values (2 lines each): as many runs as L1 holds pages, so their lines.
    let eight = wide.tile(&[1, 8, 32], t).unwrap();
    assert_eq!(eight.cache_footprint_lines(l1, t), 16);
    // 64 rows: past that, 64 lines (a page) each; L2 (512 KiB, 128 pages) still holds them.
    let many = wide.tile(&[1, 64, 32], t).unwrap();
    assert_eq!(many.cache_lines(t), 128);
    assert_eq!(many.cache_footprint_lines(l1, t), 64 * 64);
    assert_eq!(many.cache_footprint_lines(t.l2.unwrap().capacity_bytes, t), 128);
    // In L1 a tensor consumes what it takes there, so its fill does not fit in L1.
    assert_eq!(many.cache_filled(Level::L1).consumption(t), 64 * 4096);
    // The same tile 1 KiB apart takes its lines.
    let narrow = matrix("Matmul(1x8x64x256, (f32, GL), (f32, GL), (f32, GL))");
    assert_eq!(narrow.tile(&[1, 64, 32], t).unwrap().cache_footprint_lines(l1, t), 128);
}

#[test]
fn a_block_whose_rows_fall_into_the_same_sets_is_not_held_in_l2() {
    let t = TargetId::X86Avx512.target();
    // 512 rows of 256 values of `b`, as the blocks of a 2048³ GEMM read them: 512 KiB of lines,
    // but 512 runs 8 KiB apart take 2 MiB of a 1 MiB L2's sets. In a 256-wide matrix the
    // same block is held.
    for (width, held) in [(2048, false), (256, true)] {
        let text = format!("Matmul(1x128x{width}x{width}, (f32, GL), (f32, GL), (f32, GL), serial)");
        let spec = Spec::parse_for(&text, t).unwrap();
        let block = morello_core::spec::LogicalSpec::from_tensors(
            spec.logical().primitive().unwrap(),
            &[1, 128, 512, 256],
            spec.operands()
                .iter()
                .zip([[1, 128, 512], [1, 512, 256], [1, 128, 256]])
                .map(|(o, s)| o.tile(&s, t).unwrap())
                .collect(),
            true,
        );
        assert_eq!(residency(&block, t) == Residency::L2, held, "{width} wide");
    }
}

#[test]
fn written_paged_operands_parse_print_and_need_runs() {
    let text = "MatmulAccum(1x4x8x16, (f32, GL, row_major, c1, paged), (f32, GL), (f32, GL, row_major, c1), serial)";
    let spec = Spec::parse_for(text, &X86_AVX2).unwrap();
    assert!(spec.operands()[0].paged() && !spec.operands()[2].paged());
    let printed = spec.to_string();
    assert!(printed.contains("(f32, GL, row_major, c1, paged)"), "{printed}");
    assert_eq!(Spec::parse_for(&printed, &X86_AVX2).unwrap(), spec);
    for (bad, what) in [
        ("Matmul(1x4x8x16, (f32, GL, paged), (f32, GL), (f32, GL))", "GL"),
        ("Matmul(1x4x8x16, (f32, GL), (f32, VRF, v8, paged), (f32, GL))", "VRF"),
        ("MatmulAccum(1x4x8x16, (f32, GL), (f32, GL), (f32, VRF, row_major, v8, c1, paged))", "VRF"),
    ] {
        let message = Spec::parse_for(bad, &X86_AVX2).unwrap_err().to_string();
        assert!(message.contains("`paged`") && message.contains(&format!("this {what} tensor has none")), "{message}");
    }
}

/// The GL-to-GL copies (packs) in `imp`, as (operand tile, copy).
fn packs(imp: &Impl) -> Vec<(TensorSpec, TensorSpec)> {
    let mut out = Vec::new();
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(a) = &node.node {
            let source = node.spec.operand(a.operand);
            if !a.cache_miss && source.level() == Level::GL && a.tensor.level() == Level::GL {
                out.push((source.clone(), a.tensor.clone()));
            }
        }
    });
    out
}

#[test]
fn the_search_packs_blocks_of_paged_rows_and_the_kernel_matches_the_reference() {
    let t = TargetId::X86Avx512.target();
    let schedule = "to_accum; tile([1, 256, 128, 64]); synthesize_all;";
    let solve = |text: &str| {
        let spec = Spec::parse_for(text, t).unwrap();
        let (partial, _) = run_schedule(spec, schedule, t).unwrap();
        partial.synthesize_all(&mut Synthesizer::new(t)).unwrap()
    };
    // Blocks of 128×64 of a 1024-wide `b` (rows 4 KiB apart), each read by 256 rows of `a`:
    // the search copies them into a contiguous buffer of the same layout first.
    let wide = solve("Matmul(1x256x128x1024, (f32, GL), (f32, GL), (f32, GL), serial)");
    let copies = packs(&wide);
    assert!(!copies.is_empty(), "no packing copy in:\n{wide}");
    for (source, copy) in &copies {
        assert!(source.paged() && copy.is_contiguous() && !copy.paged(), "{source} -> {copy}");
        assert_eq!(copy.layout().dims(), source.layout().dims(), "{source} -> {copy}");
    }
    common::check_impl(&wide, t);
    // The same blocks of a 256-wide `b` are read in place.
    let narrow = solve("Matmul(1x256x128x256, (f32, GL), (f32, GL), (f32, GL), serial)");
    assert!(packs(&narrow).is_empty(), "a packing copy in:\n{narrow}");
}
