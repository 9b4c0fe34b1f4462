//! Spread loops over the contraction dimension: a vector-matrix product over a row-major
//! matrix with long rows reads a row from each of several bands at a time, so that the
//! prefetcher's streams continue from one block of rows to the next. The search chooses them
//! where the cost model charges consecutive rows for restarting their streams, the kernels it
//! builds agree with the reference evaluator, and the tiles say how far apart their rows lie.

mod common;

use morello_core::cost::impl_cost;
use morello_core::imp::{Impl, ImplNode};
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::{X86_AVX2, X86_AVX512};

/// The band count of the first spread loop in `imp`, if any.
fn spread_bands(imp: &Impl) -> Option<u32> {
    let mut bands = None;
    imp.visit(&mut |node| {
        if let ImplNode::Loop(l) = &node.node
            && l.spread
            && bands.is_none()
        {
            bands = Some(l.tile[2]);
        }
    });
    bands
}

#[test]
fn the_search_spreads_vector_matrix_products_over_long_rows() {
    // Rows of 16 KiB, the length from which the cost model counts rows as streams.
    for text in [
        "Matmul(1x1x64x8192, (bf16, GL), (bf16, GL), (f32, GL), serial)",
        "Matmul(1x1x32x4096, (f32, GL), (f32, GL), (f32, GL), serial)",
    ] {
        let spec = Spec::parse_for(text, &X86_AVX512).unwrap();
        let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
        assert!(spread_bands(&imp).is_some(), "{text}: no spread loop in\n{imp}");
        common::check_impl(&imp, &X86_AVX512);
    }
}

#[test]
fn the_avx2_target_spreads_over_at_most_four_bands() {
    // Its kernels read 8 bands more slowly than 8 consecutive rows (`search::enumerate`).
    let spec = Spec::parse_for("Matmul(1x1x64x8192, (bf16, GL), (bf16, GL), (f32, GL), serial)", &X86_AVX2).unwrap();
    let imp = Synthesizer::new(&X86_AVX2).synthesize(&spec).unwrap();
    let bands = spread_bands(&imp).unwrap_or_else(|| panic!("no spread loop in\n{imp}"));
    assert!(bands <= 4, "{bands} bands in\n{imp}");
    common::check_impl(&imp, &X86_AVX2);
}

#[test]
fn short_rows_are_read_in_consecutive_blocks() {
    // Rows of 2 KiB: within reach of the stride prefetcher, so no spread loop is considered.
    let spec = Spec::parse_for("Matmul(1x1x64x512, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX512).unwrap();
    let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
    assert_eq!(spread_bands(&imp), None, "{imp}");
}

#[test]
fn consecutive_blocks_of_long_rows_pay_for_restarting_their_streams() {
    let text = "Matmul(1x1x64x8192, (bf16, GL), (bf16, GL), (f32, GL), serial)";
    let cost = |schedule: fn(PartialImpl) -> Result<PartialImpl, _>| {
        let spec = Spec::parse_for(text, &X86_AVX512).unwrap();
        let partial = PartialImpl::new(spec, &X86_AVX512).to_accum().and_then(schedule).unwrap();
        let imp = partial.synthesize_all(&mut Synthesizer::new(&X86_AVX512)).unwrap();
        impl_cost(&imp, &X86_AVX512).unwrap().main
    };
    let spread = cost(|p| p.spread(8));
    let consecutive = cost(|p| p.split(8));
    assert!(spread < consecutive, "spread {spread}, consecutive {consecutive}");
}

#[test]
fn spread_tiles_know_their_rows_lie_a_band_apart() {
    let spec = Spec::parse_for("MatmulAccum(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL))", &X86_AVX512).unwrap();
    let partial = PartialImpl::new(spec, &X86_AVX512).spread(8).unwrap();
    let ImplNode::Loop(l) = &partial.root().node else { panic!("a loop") };
    let [a, b, c] = [0, 1, 2].map(|i| l.body.spec.operand(i).clone());
    // 8 values of `a` 256 apart: no two adjacent.
    assert_eq!(a.layout().contig(), 0);
    // 8 rows of `b` 256 rows (8 MiB) apart: each row contiguous, the rows whole pages apart.
    assert_eq!((b.layout().contig(), b.paged()), (1, true));
    assert!(b.layout().is_row_major(b.shape()));
    // The output is not tiled.
    assert!(c.is_contiguous());
}
