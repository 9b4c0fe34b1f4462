//! The peel rewrite: the first values of a reduction computed into the output, the rest
//! accumulated onto them.
//!
//! A non-accumulating Spec whose reduction is tiled otherwise goes through `to_accum`: a pass
//! that zeroes the output, then every tile of the reduction reads the output, adds to it and
//! writes it back. Peeling the first `size` values of the reduction instead runs the Spec
//! itself over them (which may initialize its output wherever it is cheapest, in registers at
//! best, and never reads it) and its accumulating variant over the rest: a pass over the output
//! fewer, and no separate zeroing.

use super::{RewriteError, spec_name, tile::region_spec};
use crate::imp::{Binding, BlockNode, Impl, ImplNode};
use crate::shape::Shape;
use crate::spec::Spec;
use crate::target::Target;
use smallvec::SmallVec;

pub(super) fn apply(spec: &Spec, size: &u32, target: &Target) -> Result<ImplNode, RewriteError> {
    let size = *size;
    let Some(prim) = spec.primitive() else { return Err(RewriteError::Compose { rewrite: "peel" }) };
    if prim.is_accumulating() {
        return Err(RewriteError::PeelAccumulating { primitive: prim });
    }
    let accum =
        prim.accumulating_variant().ok_or_else(|| RewriteError::NoAccumulatingVariant { what: spec_name(spec) })?;
    let shape = spec.shape();
    let rank = shape.len();
    let reductions = prim.reduction_dims(rank);
    let &[reduction] = reductions.as_slice() else {
        return Err(RewriteError::PeelReductions { primitive: prim, count: reductions.len() });
    };
    let d = reduction as usize;
    if prim.untileable_dims().contains(&reduction) {
        return Err(RewriteError::Untileable { dim: d, dim_name: prim.dim_name(d), primitive: prim });
    }
    let extent = shape[d];
    if size == 0 || size >= extent {
        return Err(RewriteError::PeelSize { dim_name: prim.dim_name(d), size, extent });
    }
    let mut first: Shape = shape.into();
    first[d] = size;
    let mut rest: Shape = shape.into();
    rest[d] = extent - size;
    let first = region_spec(spec, prim, &first, target)?;
    let rest = region_spec(spec, prim, &rest, target)?;
    let rest = Spec::new(rest.logical().with_primitive(accum), *rest.limits());
    // The second stage starts `size` values along the reduction: each operand's origin there.
    let mut offsets = vec![0u64; rank];
    offsets[d] = u64::from(size);
    let rest_bindings: SmallVec<[Binding; 4]> = (0..spec.operands().len())
        .map(|i| {
            let origin: Shape = prim
                .operand_dims(i, rank)
                .iter()
                .map(|e| u32::try_from(e.offset(&offsets)).expect("an origin inside the operand"))
                .collect();
            if origin.iter().all(|&o| o == 0) { Binding::param(i) } else { Binding::param(i).at(origin) }
        })
        .collect();
    Ok(ImplNode::Block(BlockNode {
        temps: Vec::new(),
        stages: vec![Impl::leaf(first), Impl::leaf(rest)],
        bindings: vec![(0..spec.operands().len()).map(Binding::param).collect(), rest_bindings],
        default_stage: None,
    }))
}
