//! The spread rewrite: a loop over the contraction dimension of a MatmulAccum whose tiles take
//! one row from each of several bands ([`crate::imp::LoopNode::spread`]).

use super::{RewriteError, operand_name};
use crate::imp::{Impl, ImplNode, LoopNode};
use crate::primitive::Primitive;
use crate::shape::{DisplayShape, Shape};
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;

/// The contraction dimension of a Matmul (`b×m×k×n`).
const K: usize = 2;

pub(super) fn apply(spec: &Spec, bands: &u32, target: &Target) -> Result<ImplNode, RewriteError> {
    let bands = *bands;
    let Some(prim @ Primitive::Matmul { accum: true }) = spec.primitive() else {
        return Err(RewriteError::WrongPrimitive {
            rewrite: "spread",
            expected: "MatmulAccum (apply `to_accum` to a Matmul first)",
            found: super::spec_name(spec),
        });
    };
    let shape = spec.shape();
    let k = shape[K];
    if bands < 2 || bands >= k || !k.is_multiple_of(bands) {
        return Err(RewriteError::Shape {
            rewrite: "spread",
            requirement: format!("a number of bands from 2 up to k = {k}, dividing it; not {bands}"),
        });
    }
    let mut tile: Shape = shape.into();
    tile[K] = bands;
    // The operands `k` indexes (the lhs and rhs) are spread along it; the loop leaves the output
    // whole.
    let mut operands = Operands::new();
    for (i, t) in spec.operands().iter().enumerate() {
        let tile_shape = prim.operand_shape(i, &tile);
        let Some(dim) = prim.operand_dims(i, shape.len()).iter().position(|e| e.uses(K as u8)) else {
            operands.push(t.clone());
            continue;
        };
        let spread =
            t.spread_tile(&tile_shape, dim, k / bands, target).map_err(|source| RewriteError::TileInvalid {
                operand: operand_name(spec, i),
                shape: DisplayShape(&tile_shape).to_string(),
                source,
            })?;
        operands.push(spread);
    }
    let body = LogicalSpec::from_tensors(prim, &tile, operands, spec.logical().serial());
    Ok(ImplNode::Loop(LoopNode {
        tile,
        parallel: false,
        spread: true,
        body: Box::new(Impl::leaf(Spec::new(body, *spec.limits()))),
        boundaries: Vec::new(),
    }))
}
