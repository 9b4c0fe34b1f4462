//! Layout invariants over arbitrary layouts: indexing is a bijection onto the buffer, canonical
//! form is stable, and the contiguity of a tile never claims more adjacency than there is.

use morello_core::layout::{Layout, PhysDim};
use morello_core::shape::coordinates;
use proptest::prelude::*;

/// A shape and a layout for it: a permutation of its dimensions, maybe with one packed or
/// odd-even strip.
fn shape_and_layout() -> impl Strategy<Value = (Vec<u32>, Layout)> {
    let dim = prop::sample::select(vec![1u32, 2, 4, 8, 12, 16]);
    (
        prop::collection::vec(dim, 2..=3),
        any::<u64>(),
        prop::option::of((0usize..3, prop::sample::select(vec![2u32, 4, 8]), any::<bool>())),
    )
        .prop_filter_map("layout must fit the shape", |(shape, seed, strip)| {
            let rank = shape.len();
            let mut order: Vec<u8> = (0..rank as u8).collect();
            for i in (1..rank).rev() {
                order.swap(i, (seed as usize >> (4 * i)) % (i + 1));
            }
            let mut dims: Vec<PhysDim> = order.iter().map(|&d| PhysDim::dynamic(d)).collect();
            if let Some((d, s, odd_even)) = strip {
                let d = (d % rank) as u8;
                dims.push(if odd_even { PhysDim::odd_even(d, s) } else { PhysDim::packed(d, s) });
            }
            let layout = Layout::new(&dims, None, &shape).ok()?;
            Some((shape, layout))
        })
}

fn offsets(layout: &Layout, shape: &[u32], origin: &[u32], tile: &[u32]) -> Vec<u64> {
    coordinates(tile)
        .map(|c| {
            let c: Vec<u64> = c.iter().zip(origin).map(|(&x, &o)| u64::from(x + o)).collect();
            layout.buffer_index(shape, &c)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn indexing_is_a_bijection_onto_the_buffer((shape, layout) in shape_and_layout()) {
        let mut seen = offsets(&layout, &shape, &vec![0; shape.len()], &shape);
        seen.sort_unstable();
        let expected: Vec<u64> = (0..layout.buffer_volume(&shape)).collect();
        prop_assert_eq!(seen, expected);
    }

    #[test]
    fn canonical_form_is_stable((shape, layout) in shape_and_layout()) {
        let again = Layout::new(layout.dims(), Some(layout.contig()), &shape).unwrap();
        prop_assert_eq!(again, layout);
    }

    #[test]
    fn tile_contiguity_is_never_overstated(
        (shape, layout) in shape_and_layout(),
        exponents in prop::collection::vec(0u32..5, 3),
    ) {
        // Power-of-two tiles (or the whole dimension), at every aligned position.
        let tile: Vec<u32> = shape.iter().zip(&exponents).map(|(&d, &e)| if d % (1 << e) == 0 { 1 << e } else { d }).collect();
        let Ok(tiled) = layout.tile(&shape, &tile) else { return Ok(()) };
        let block = tiled.contiguous_block(&tile) as usize;
        for origin in coordinates(&shape.iter().zip(&tile).map(|(d, t)| d / t).collect::<Vec<_>>()) {
            let origin: Vec<u32> = origin.iter().zip(&tile).map(|(i, t)| i * t).collect();
            let mut runs = offsets(&layout, &shape, &origin, &tile);
            runs.sort_unstable();
            for chunk in runs.chunks(block) {
                prop_assert_eq!(chunk.len(), block);
                prop_assert_eq!(chunk[block - 1] - chunk[0], block as u64 - 1,
                    "{} claims runs of {} in tile {:?} at {:?} of {:?}", tiled, block, tile, origin, shape);
            }
        }
    }
}

#[test]
fn generated_tiles_exercise_contiguity() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (shape_and_layout(), prop::collection::vec(0u32..5, 3));
    let mut multi_element_runs = 0;
    let mut odd_even = 0;
    for _ in 0..300 {
        let ((shape, layout), exponents) = strategy.new_tree(&mut runner).unwrap().current();
        odd_even += usize::from(layout.to_string().contains("oe"));
        let tile: Vec<u32> =
            shape.iter().zip(&exponents).map(|(&d, &e)| if d % (1 << e) == 0 { 1 << e } else { d }).collect();
        if let Ok(t) = layout.tile(&shape, &tile)
            && t.contiguous_block(&tile) > 1
            && !t.is_fully_contiguous()
        {
            multi_element_runs += 1;
        }
    }
    assert!(multi_element_runs > 30, "only {multi_element_runs} of 300 cases had partial contiguity to check");
    assert!(odd_even > 30, "only {odd_even} of 300 layouts had an odd-even strip");
}
