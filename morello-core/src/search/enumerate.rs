//! The search space: which rewrites synthesis tries for a Spec (paper §4).
//!
//! Power-of-two tile sizes along one dimension at a time (multi-dimensional tilings arise from
//! nesting), moves to every reachable level in every dimension order with at most one packed
//! strip of a vector width, vector sizes of every register width, `to_accum`, and every kernel.

use crate::kernels::KernelKind;
use crate::layout::{Layout, PhysDim};
use crate::level::Level;
use crate::rewrite::Action;
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::TensorSpec;

/// Every rewrite synthesis considers for `spec`, in a fixed order. Some may not apply; the
/// search skips those.
pub fn actions(spec: &Spec, target: &Target) -> Vec<Action> {
    let mut out = Vec::new();
    // Compose pipelines need rewrites that do not exist yet.
    let Some(prim) = spec.primitive() else { return out };
    for kernel in KernelKind::ALL {
        if kernel.primitive() == prim {
            out.push(Action::Select(kernel));
        }
    }
    if prim.accumulating_variant().is_some() {
        out.push(Action::ToAccum);
    }
    let shape = spec.shape();
    let reductions = prim.reduction_dims(shape.len());
    let untileable = prim.untileable_dims();
    for (d, &size) in shape.iter().enumerate() {
        if untileable.contains(&(d as u32)) || reductions.contains(&(d as u32)) && !prim.is_accumulating() {
            continue;
        }
        let mut t = 1;
        while t < size {
            let mut tile: crate::shape::Shape = shape.into();
            tile[d] = t;
            out.push(Action::Tile { tile });
            t *= 2;
        }
    }
    for (i, operand) in spec.operands().iter().enumerate() {
        for &level in operand.level().move_destinations() {
            if level.is_register_file() && !KernelKind::any_accepts(prim, i, level) {
                continue;
            }
            push_moves(&mut out, i, operand, level, target);
        }
    }
    out
}

fn push_moves(out: &mut Vec<Action>, operand: usize, src: &TensorSpec, level: Level, target: &Target) {
    let shape = src.shape();
    match level {
        Level::RF => out.push(Action::Move { operand, level, layout: Layout::empty(), vector_size: None }),
        Level::VRF => {
            // Vector kernels consume registers holding rows in row-major order.
            for lanes in target.vector_lanes(src.dtype().size_bytes()) {
                if src.volume().is_multiple_of(u64::from(lanes)) {
                    let layout = Layout::row_major(shape);
                    out.push(Action::Move { operand, level, layout, vector_size: Some(lanes) });
                }
            }
        }
        Level::L1 | Level::GL => {
            if level.is_hardware_managed() {
                out.push(Action::Move { operand, level, layout: src.layout().clone(), vector_size: None });
            }
            for layout in relayouts(shape, src, target) {
                if layout.dims() != src.layout().dims() {
                    out.push(Action::Move { operand, level, layout, vector_size: None });
                }
            }
        }
    }
}

/// Every nesting order of the dimensions larger than 1, as fully contiguous layouts.
fn dimension_orders(shape: &[u32]) -> Vec<Layout> {
    let dims: Vec<u8> = (0..shape.len() as u8).filter(|&d| shape[usize::from(d)] > 1).collect();
    let mut out = Vec::new();
    permutations(&dims, &mut Vec::new(), &mut |order| out.push(Layout::from_order(shape, order.iter().copied())));
    out
}

/// Dimension orders, each also with one packed strip (of a vector width) appended for one
/// dimension that is not already innermost.
fn relayouts(shape: &[u32], src: &TensorSpec, target: &Target) -> Vec<Layout> {
    let mut out = Vec::new();
    for order in dimension_orders(shape) {
        let dims = order.dims().to_vec();
        for pd in dims.iter().take(dims.len().saturating_sub(1)) {
            let size = shape[usize::from(pd.logical)];
            for strip in target.vector_lanes(src.dtype().size_bytes()) {
                if strip < size && size.is_multiple_of(strip) {
                    let mut packed = dims.clone();
                    packed.push(PhysDim::packed(pd.logical, strip));
                    if let Ok(l) = Layout::new(&packed, None, shape)
                        && !out.contains(&l)
                    {
                        out.push(l);
                    }
                }
            }
        }
        if !out.contains(&order) {
            out.push(order);
        }
    }
    out
}

fn permutations(items: &[u8], prefix: &mut Vec<u8>, f: &mut impl FnMut(&[u8])) {
    if prefix.len() == items.len() {
        f(prefix);
        return;
    }
    for &x in items {
        if !prefix.contains(&x) {
            prefix.push(x);
            permutations(items, prefix, f);
            prefix.pop();
        }
    }
}
