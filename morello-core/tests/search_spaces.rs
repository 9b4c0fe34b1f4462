//! The narrowed search spaces (`SearchSpace::FixedOutputLayouts` and `SearchSpace::Fast`): the
//! search within each finds the optimum of that space, which exhaustive search over the same
//! space confirms, at the top and in every memo box; their implementations never relayout an
//! output within global memory, cost no less than the full space's optimum, and compute what
//! the Spec says. Each leaves out exactly the rewrites it says it does.

mod common;

use common::limits::sampled_boxes;
use morello_core::cost::impl_cost;
use morello_core::dtype::Dtype;
use morello_core::imp::{Impl, ImplNode};
use morello_core::level::Level;
use morello_core::primitive::Primitive;
use morello_core::rewrite::Action;
use morello_core::search::{SearchSpace, Synthesizer, actions, exhaustive};
use morello_core::spec::Spec;
use morello_core::target::{Target, X86_AVX2, X86_AVX512};
use morello_core::tensor::TensorSpec;

const NARROWED: [SearchSpace; 2] = [SearchSpace::FixedOutputLayouts, SearchSpace::Fast];

/// Small Specs with operands in global memory, where output relayouts are candidates.
const SPECS: &[&str] = &[
    "(Matmul(1x4x4x8, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 256, 4096])",
    "(Matmul(1x2x8x8, (f32, GL), (f32, GL, col_major), (f32, GL, col_major)), [16, 512, 256, 4096])",
    "(MatmulAccum(1x4x4x8, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 256, 4096])",
    "(Move(8x8, (f32, GL), (f32, GL, col_major)), [16, 512, 256, 4096])",
];

/// A copy of `base` with 256 bytes of L1, so that the Specs above are not held in L1 whole
/// (`morello_core::residency`): on the real targets a Spec small enough for exhaustive search
/// has only the cache fill, and no move within global memory is ever considered.
fn small_l1(base: &Target) -> &'static Target {
    let mut levels = base.levels;
    levels[Level::L1.index()].capacity_bytes = 256;
    Box::leak(Box::new(Target { levels, ..*base }))
}

/// Whether `imp` moves an operand its Spec writes into a new tensor in global memory.
fn relayouts_an_output_in_gl(imp: &Impl) -> bool {
    let mut found = false;
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(alloc) = &node.node {
            found |= alloc.tensor.level() == Level::GL && node.spec.logical().direction(alloc.operand).writes();
        }
    });
    found
}

/// The implementation of `spec` in `space`, checked against exhaustive search of that space and
/// the full optimum; with the number of Specs each space searched.
fn solve_narrowed(spec: &Spec, target: &'static Target, space: SearchSpace) -> (Impl, u64, u64) {
    let mut synth = Synthesizer::new(target);
    synth.set_search_space(space);
    let imp = synth.synthesize(spec).expect("satisfiable in the narrowed space");
    let cost = impl_cost(&imp, target).expect("complete");
    assert_eq!(Some(cost), synth.optimal_cost(spec), "{spec}: the claimed cost is the real one");
    assert_eq!(
        exhaustive::optimal_cost_in(spec, target, space).map(|c| c.main),
        Some(cost.main),
        "{spec}: exhaustive search of the {space} space disagrees"
    );
    let mut full = Synthesizer::new(target);
    let optimum = full.optimal_cost(spec).expect("satisfiable").main;
    assert!(cost.main >= optimum, "{spec}: {} is below the full optimum {optimum}", cost.main);
    assert!(!relayouts_an_output_in_gl(&imp), "{spec}: the narrowed space relayouts an output:\n{imp:#?}");
    (imp, synth.stats().specs_solved, full.stats().specs_solved)
}

#[test]
fn the_narrowed_search_finds_the_optimum_of_its_space() {
    for space in NARROWED {
        let mut narrower = 0;
        for base in [&X86_AVX2, &X86_AVX512] {
            let target = small_l1(base);
            for text in SPECS {
                let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
                let (imp, narrowed, full) = solve_narrowed(&spec, target, space);
                narrower += usize::from(narrowed < full);
                common::check_impl(&imp, target);
            }
        }
        // The checks above cannot fail if the narrowing leaves nothing out.
        assert!(narrower > 0, "the {space} space searched as many Specs as the full one everywhere");
    }
}

#[test]
fn the_fast_search_of_a_conv_finds_the_optimum_of_its_space() {
    // Held in L1 whole: the search moves its operands there, and solves outright what it
    // has moved (`SearchSpace::solves_outright`).
    let text = "(Conv(1x1x2x2x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 256, 4096])";
    for target in [&X86_AVX2, &X86_AVX512] {
        let spec = Spec::parse_for(text, target).unwrap();
        let (imp, fast, full) = solve_narrowed(&spec, target, SearchSpace::Fast);
        assert!(fast < full, "{}: the fast space searched {fast} Specs, the full one {full}", target.name);
        let mut outright = 0;
        imp.visit(&mut |node| outright += usize::from(SearchSpace::Fast.solves_outright(&node.spec)));
        assert!(outright > 0, "no Spec of the implementation is one the fast space solves outright");
        common::check_impl(&imp, target);
    }
}

#[test]
fn the_left_out_rewrites_are_exactly_the_output_relayouts_in_gl() {
    // Without this, `relayouts_an_output_in_gl` could be blind and the tests vacuous. (No Spec
    // small enough for exhaustive search has an optimum that relayouts its output in global
    // memory, so the check applies each rewrite once instead.)
    let target = small_l1(&X86_AVX512);
    let mut left_out = 0;
    for text in SPECS {
        let spec = Spec::parse_for(text, target).unwrap();
        for action in actions(&spec, target) {
            let Ok(node) = action.apply(&spec, target) else { continue };
            let allowed = SearchSpace::FixedOutputLayouts.allows(&spec, &action, target);
            let applied = Impl { spec: spec.clone(), node };
            assert_eq!(relayouts_an_output_in_gl(&applied), !allowed, "{action} on {spec}");
            left_out += usize::from(!allowed);
        }
    }
    assert!(left_out > 0, "no rewrite of these Specs is left out");
}

/// The logical dimensions longer than 1 of `tensor`, outermost first, packed strips aside.
fn dimension_order(tensor: &TensorSpec) -> Vec<u8> {
    let dims = tensor.layout().dims().iter().filter(|d| d.strip().is_none());
    dims.map(|d| d.logical).filter(|&d| tensor.shape()[usize::from(d)] > 1).collect()
}

/// Whether the fast space leaves out the move `applied` makes, judged from the buffer it
/// allocates: an output moved into global memory, or into L1 in another layout or dtype than
/// its own; an input of a Conv moved into global memory; an input relaid out with strips narrower than the widest vector (bf16 pairs
/// aside); a relayout into memory or vector registers that reorders more than the innermost
/// two dimensions; a transposed copy into L1 of rows that hold a vector; a tile of a Matmul
/// wholly in global memory that cuts its rows, reduction or columns below [`l1_cube`] (rows
/// cut to a register block's 6 or 14 aside); or a tile of a Conv that cuts its filter's rows
/// or columns to more than 1, or, with an operand out of global memory, its output's to more
/// than 8.
fn fast_space_leaves_out(applied: &Impl, target: &Target) -> bool {
    if let ImplNode::Loop(_) = &applied.node {
        let spec = &applied.spec;
        let in_gl = spec.operands().iter().all(|t| t.level() == Level::GL);
        let tile = applied.children()[0].spec.shape().to_vec();
        let shortened = |d: usize| tile[d] < spec.shape()[d];
        return match spec.logical().primitive() {
            Some(Primitive::Matmul { .. }) => {
                let cube = l1_cube(spec, target);
                let cut = |d: usize| shortened(d) && tile[d] < cube && !(d == 1 && [6, 14].contains(&tile[d]));
                in_gl && (1..=3).any(cut)
            }
            Some(Primitive::Conv { .. }) => {
                // Dimensions 3 and 4 are the output's rows and columns, 5 and 6 the filter's.
                let cut = |d: usize, longest: u32| shortened(d) && tile[d] > longest;
                cut(5, 1) || cut(6, 1) || !in_gl && (cut(3, 8) || cut(4, 8))
            }
            _ => false,
        };
    }
    let ImplNode::Alloc(alloc) = &applied.node else { return false };
    let (source, moved) = (applied.spec.operand(alloc.operand), &alloc.tensor);
    let widest = target.vector_lanes(moved.dtype().size_bytes()).max().unwrap_or(1);
    let writes = applied.spec.logical().direction(alloc.operand).writes();
    let same_layout = moved.layout().dims() == source.layout().dims();
    let narrow = |strip: u32| strip < widest && !(moved.dtype() == Dtype::Bf16 && strip == 2);
    let (from, to) = (dimension_order(source), dimension_order(moved));
    let reordered = to != from && {
        let n = from.len();
        // Only the innermost two may swap: everything else stays where it was.
        n < 2 || to[..n - 2] != from[..n - 2] || to[n - 2..] != [from[n - 1], from[n - 2]]
    };
    let row = from.last().map_or(1, |&d| source.shape()[usize::from(d)]);
    let transposed_vector_rows = moved.level() == Level::L1 && to != from && row >= widest;
    let conv = matches!(applied.spec.logical().primitive(), Some(Primitive::Conv { .. }));
    match moved.level() {
        Level::GL if writes || conv => true,
        Level::L1 if writes => !same_layout || moved.dtype() != source.dtype(),
        Level::L1 | Level::GL => {
            let narrow_strips = moved.layout().dims().iter().filter_map(|d| d.strip()).any(narrow);
            !same_layout && (reordered || narrow_strips || transposed_vector_rows)
        }
        Level::VRF => reordered,
        Level::RF => false,
    }
}

/// The side of the largest power-of-two cube whose Matmul, in `spec`'s dtypes, holds its three
/// operands in L1.
fn l1_cube(spec: &Spec, target: &Target) -> u32 {
    let bytes: u64 = spec.operands().iter().map(|t| u64::from(t.dtype().size_bytes())).sum();
    let mut side = 1;
    while u64::from(2 * side) * u64::from(2 * side) * bytes <= target.level(Level::L1).capacity_bytes {
        side *= 2;
    }
    side
}

#[test]
fn the_fast_space_leaves_out_exactly_what_it_says() {
    // (inputs, outputs) left out
    let mut left_out = [0; 2];
    // (Matmul, Conv) tiles left out
    let mut tiles_left_out = [0; 2];
    let bf16 = "(Matmul(1x4x8x8, (bf16, GL), (bf16, GL), (f32, GL)), [16, 512, 256, 4096])";
    let batched = "(Matmul(2x2x4x8, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 256, 4096])";
    let conv_in_gl = "(Conv(1x2x2x4x4x3x3, (f32, GL), (f32, GL), (f32, GL)), [16, 512, 256, 4096])";
    let conv_in_l1 = "(ConvAccum(1x2x2x32x3x3x3, (f32, L1), (f32, GL), (f32, L1)), [16, 512, 256, 4096])";
    for base in [&X86_AVX2, &X86_AVX512] {
        let target = small_l1(base);
        for text in SPECS.iter().chain([&bf16, &batched, &conv_in_gl, &conv_in_l1]) {
            let spec = Spec::parse_for(text, target).unwrap();
            for action in actions(&spec, target) {
                let Ok(node) = action.apply(&spec, target) else { continue };
                let allowed = SearchSpace::Fast.allows(&spec, &action, target);
                let applied = Impl { spec: spec.clone(), node };
                assert_eq!(fast_space_leaves_out(&applied, target), !allowed, "{action} on {spec}");
                match (allowed, &action) {
                    (false, Action::Move { operand, .. }) => {
                        left_out[usize::from(spec.logical().direction(*operand).writes())] += 1;
                    }
                    (false, Action::Tile { .. }) => {
                        let conv = matches!(spec.logical().primitive(), Some(Primitive::Conv { .. }));
                        tiles_left_out[usize::from(conv)] += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(left_out.iter().all(|&n| n > 0), "left out (inputs, outputs): {left_out:?}");
    assert!(tiles_left_out.iter().all(|&n| n > 0), "tiles left out (Matmul, Conv): {tiles_left_out:?}");
}

#[test]
fn every_memo_box_holds_the_optimum_of_the_narrowed_space() {
    let target = small_l1(&X86_AVX2);
    for space in NARROWED {
        let mut synth = Synthesizer::new(target);
        synth.set_search_space(space);
        for text in SPECS {
            synth.optimal_cost(&Spec::parse_for(text, target).unwrap());
        }
        let mut implemented = 0;
        for (spec, entry) in sampled_boxes(&synth, target, 0x2545_f491_4f6c_dd1d) {
            let claimed = entry.decision.as_ref().map(|d| d.cost.main);
            let optimum = exhaustive::optimal_cost_in(&spec, target, space).map(|c| c.main);
            assert_eq!(claimed, optimum, "{space}: the box [{}, {}] of {spec}", entry.lower, entry.upper);
            implemented += usize::from(claimed.is_some());
        }
        assert!(implemented >= 50, "{space}: only {implemented} sampled boxes hold an implementation");
    }
}

#[test]
#[should_panic(expected = "the search space is set before searching")]
fn the_space_cannot_change_after_a_search() {
    let mut synth = Synthesizer::new(&X86_AVX2);
    synth.optimal_cost(&"Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap());
    synth.set_search_space(SearchSpace::Fast);
}
