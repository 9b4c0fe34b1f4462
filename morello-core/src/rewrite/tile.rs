//! The tiling rewrite: a loop nest over tiles, with boundary regions for tile sizes that do not
//! divide their dimension.

use super::{RewriteError, operand_name};
use crate::imp::{Boundary, Impl, ImplNode, LoopNode};
use crate::primitive::Primitive;
use crate::shape::{DisplayShape, Shape};
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;
use smallvec::SmallVec;

pub(super) fn apply(spec: &Spec, tile: &[u32], parallel: &bool, target: &Target) -> Result<ImplNode, RewriteError> {
    let parallel = *parallel;
    let Some(prim) = spec.primitive() else { return Err(RewriteError::Compose { rewrite: "tile" }) };
    let shape = spec.shape();
    if tile.len() != shape.len() {
        return Err(RewriteError::TileRank {
            primitive: prim,
            expected: shape.len(),
            found: tile.len(),
            names: (0..shape.len()).map(|d| prim.dim_name(d)).collect::<Vec<_>>().join("×"),
        });
    }
    for (d, (&t, &s)) in tile.iter().zip(shape).enumerate() {
        if t == 0 {
            return Err(RewriteError::TileZero { dim: d, dim_name: prim.dim_name(d) });
        }
        if t > s {
            return Err(RewriteError::TileLarger { dim: d, dim_name: prim.dim_name(d), tile: t, size: s });
        }
    }
    if tile == shape {
        return Err(RewriteError::TileUnchanged { tile: DisplayShape(tile).to_string() });
    }
    if let Some(&d) = prim.untileable_dims().iter().find(|&&d| tile[d as usize] < shape[d as usize]) {
        return Err(RewriteError::Untileable { dim: d as usize, dim_name: prim.dim_name(d as usize), primitive: prim });
    }
    if !prim.is_accumulating()
        && let Some(&d) = prim.reduction_dims(shape.len()).iter().find(|&&d| tile[d as usize] < shape[d as usize])
    {
        let (dim, dim_name) = (d as usize, prim.dim_name(d as usize));
        return Err(match prim.accumulating_variant() {
            Some(_) => RewriteError::ReductionNeedsAccum { dim, dim_name, primitive: prim },
            None => RewriteError::Untileable { dim, dim_name, primitive: prim },
        });
    }

    if parallel {
        check_parallel(spec, prim, tile)?;
    }

    let mut body = region_spec(spec, prim, tile, target)?;
    if parallel {
        body = Spec::new(body.logical().as_serial(), *body.limits());
    }
    let remainder_dims: SmallVec<[usize; 4]> =
        (0..shape.len()).filter(|&d| !shape[d].is_multiple_of(tile[d])).collect();
    let mut boundaries = Vec::new();
    for mask in 1u32..(1 << remainder_dims.len()) {
        let dims: SmallVec<[usize; 4]> =
            remainder_dims.iter().enumerate().filter(|(bit, _)| mask & (1 << bit) != 0).map(|(_, &d)| d).collect();
        let region: Shape = (0..shape.len())
            .map(|d| if dims.contains(&d) { shape[d] % tile[d] } else { shape[d] / tile[d] * tile[d] })
            .collect();
        boundaries.push(Boundary { dims, body: Impl::leaf(region_spec(spec, prim, &region, target)?) });
    }
    Ok(ImplNode::Loop(LoopNode {
        tile: tile.into(),
        parallel,
        spread: false,
        body: Box::new(Impl::leaf(body)),
        boundaries,
    }))
}

/// A parallel loop needs a Spec that may use threads, operands in memory (registers belong to
/// one thread) and no tiled reduction (iterations would race on the output).
fn check_parallel(spec: &Spec, prim: Primitive, tile: &[u32]) -> Result<(), RewriteError> {
    if spec.logical().serial() {
        return Err(RewriteError::SerialOnly { rewrite: "a parallel tile" });
    }
    if let Some((i, t)) = spec.operands().iter().enumerate().find(|(_, t)| t.level().is_register_file()) {
        return Err(RewriteError::ParallelInRegisters { operand: operand_name(spec, i), level: t.level() });
    }
    let shape = spec.shape();
    if let Some(&d) = prim.reduction_dims(shape.len()).iter().find(|&&d| tile[d as usize] < shape[d as usize]) {
        return Err(RewriteError::ParallelReduction { dim: d as usize, dim_name: prim.dim_name(d as usize) });
    }
    Ok(())
}

/// The Spec of a region of `spec` with the given extents, operands tiled accordingly.
pub(super) fn region_spec(spec: &Spec, prim: Primitive, region: &[u32], target: &Target) -> Result<Spec, RewriteError> {
    let mut operands = Operands::new();
    for (i, t) in spec.operands().iter().enumerate() {
        let shape = prim.operand_shape(i, region);
        if *shape == *t.shape() {
            // Untouched by this tile (a dimension the operand does not have).
            operands.push(t.clone());
            continue;
        }
        let tiled = t.tile(&shape, target).map_err(|source| RewriteError::TileInvalid {
            operand: operand_name(spec, i),
            shape: DisplayShape(&shape).to_string(),
            source,
        })?;
        operands.push(tiled);
    }
    let logical = LogicalSpec::from_tensors(prim, region, operands, spec.logical().serial());
    Ok(Spec::new(logical, *spec.limits()))
}
