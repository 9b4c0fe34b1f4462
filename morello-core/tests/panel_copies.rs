//! Copies into global memory may pack an operand in panels of a register tile's width (four of
//! the widest vectors: 64 f32 on AVX-512, 32 on AVX2), as the libraries pack `b`; moves into L1
//! keep to strips of a vector width. A Matmul whose `b` is copied into such panels agrees with
//! the reference evaluator on every target.

mod common;

use common::{check_impl, scheduled};
use morello_core::imp::{Impl, ImplNode};
use morello_core::level::Level;
use morello_core::rewrite::{Action, MoveDest};
use morello_core::search::actions;
use morello_core::spec::Spec;
use morello_core::target::{Target, TargetId, X86_AVX2, X86_AVX512};

/// A Matmul too large to be held in L1, so that the search considers moves of its operands.
const LARGE: &str = "Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL), serial)";

/// The strip sizes of the layouts `actions` offers for moving `b` to `level` in its own dtype,
/// ascending.
fn strips_offered(text: &str, level: Level, target: &'static Target) -> Vec<u32> {
    let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
    let own = spec.operands()[1].dtype();
    let mut strips: Vec<u32> = actions(&spec, target)
        .into_iter()
        .filter_map(|action| match action {
            Action::Move { operand: 1, dest: MoveDest { level: to, layout, dtype, .. } }
                if to == level && dtype == own =>
            {
                layout.dims().iter().find_map(|d| d.strip())
            }
            _ => None,
        })
        .collect();
    strips.sort_unstable();
    strips.dedup();
    strips
}

#[test]
fn copies_into_global_memory_offer_panels_of_four_widest_vectors() {
    assert_eq!(strips_offered(LARGE, Level::GL, &X86_AVX512), [4, 8, 16, 64]);
    assert_eq!(strips_offered(LARGE, Level::GL, &X86_AVX2), [4, 8, 32]);
    // bf16 also has pairs of rows; its widest vector holds 32 of them.
    let bf16 = "Matmul(1x512x512x512, (bf16, GL), (bf16, GL), (f32, GL), serial)";
    assert_eq!(strips_offered(bf16, Level::GL, &X86_AVX512), [2, 8, 16, 32, 128]);
}

#[test]
fn moves_into_l1_keep_to_vector_widths() {
    assert_eq!(strips_offered(LARGE, Level::L1, &X86_AVX512), [4, 8, 16]);
    assert_eq!(strips_offered(LARGE, Level::L1, &X86_AVX2), [4, 8]);
}

/// Whether `imp` copies `b` into a buffer in global memory packed in strips of `strip`.
fn packs_b_in_panels(imp: &Impl, strip: u32) -> bool {
    let mut found = false;
    imp.visit(&mut |node| {
        if let ImplNode::Alloc(alloc) = &node.node
            && alloc.operand == 1
            && alloc.tensor.level() == Level::GL
        {
            found |= alloc.tensor.layout().dims().iter().any(|d| d.strip() == Some(strip));
        }
    });
    found
}

#[test]
fn a_copy_of_b_in_panels_computes_the_matmul() {
    // 24 rows: a boundary of 8 below the 16-row tile. Each tile's `b` is copied into panels of
    // the target's register tile width, then synthesis implements the rest.
    let text = "Matmul(1x24x16x128, (f32, GL), (f32, GL), (f32, GL), serial)";
    for id in TargetId::ALL {
        let target = id.target();
        // Four widest vectors of 4-byte f32; none on a target without vector registers.
        let panel = 4 * (target.widest_vector_bytes() / 4);
        if panel == 0 {
            continue;
        }
        let schedule = format!("tile([1, 16, 16, 128]); move_param(1, GL, [2, 1, 2 p{panel}]); synthesize_all;");
        let imp = scheduled(text, &schedule, target).unwrap_or_else(|e| panic!("{schedule} ({id:?}): {e}"));
        assert!(packs_b_in_panels(&imp, panel), "{id:?}: no copy of b in p{panel} panels:\n{imp}");
        check_impl(&imp, target);
    }
}
