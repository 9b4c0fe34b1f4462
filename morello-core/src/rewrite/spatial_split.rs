//! Spatial split: a ConvAccum whose output is a single pixel becomes a loop over filter
//! positions, each a MatmulAccum over views of the operands (image `[b, c]` as `1×b×c`,
//! filters `[f, c]` as `1×c×f`, output `[b, f]` as `1×b×f`).

use super::{RewriteError, operand_name, tile};
use crate::imp::{Binding, BlockNode, Impl, ImplNode};
use crate::primitive::Primitive;
use crate::shape::DisplayShape;
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;
use crate::view::ViewMap;
use smallvec::SmallVec;

pub(super) fn apply(spec: &Spec, target: &Target) -> Result<ImplNode, RewriteError> {
    if spec.primitive() != Some(Primitive::Conv { accum: true }) {
        return Err(RewriteError::WrongPrimitive {
            rewrite: "spatial_split",
            expected: "ConvAccum (apply `to_accum` to a Conv first)",
            found: super::spec_name(spec),
        });
    }
    let &[b, f, c, h, w, fh, fw] = spec.shape() else { unreachable!("Conv is rank 7") };
    if (h, w) != (1, 1) {
        return Err(RewriteError::Shape {
            rewrite: "spatial_split",
            requirement: format!(
                "a 1×1 output image (the image as large as the filters); this one is {h}×{w}: tile h and w to 1 first"
            ),
        });
    }
    if (fh, fw) == (1, 1) {
        return as_matmul(spec, target);
    }
    let ImplNode::Loop(mut l) = tile::apply(spec, &[b, f, c, 1, 1, 1, 1], &false, target)? else {
        unreachable!("tiling yields a loop")
    };
    debug_assert!(l.boundaries.is_empty());
    let node = as_matmul(&l.body.spec, target)?;
    l.body.node = node;
    Ok(ImplNode::Loop(l))
}

/// ConvAccum(b×f×c×1×1×1×1) as MatmulAccum(1×b×c×f) over views.
fn as_matmul(spec: &Spec, target: &Target) -> Result<ImplNode, RewriteError> {
    let &[b, f, c, ..] = spec.shape() else { unreachable!("Conv is rank 7") };
    let views = [
        (ViewMap::renaming(&[Some(1), Some(2), None, None]), [1, b, c]),
        (ViewMap::renaming(&[Some(2), Some(1), None, None]), [1, c, f]),
        (ViewMap::renaming(&[Some(1), Some(2), None, None]), [1, b, f]),
    ];
    let mut operands = Operands::new();
    let mut bindings: SmallVec<[Binding; 4]> = SmallVec::new();
    for (i, (map, shape)) in views.into_iter().enumerate() {
        let t = spec.operand(i).view(&shape, &map, target).map_err(|source| RewriteError::ViewInvalid {
            operand: operand_name(spec, i),
            shape: DisplayShape(&shape).to_string(),
            source,
        })?;
        operands.push(t);
        bindings.push(Binding::param(i).viewed(map));
    }
    let matmul =
        LogicalSpec::from_tensors(Primitive::Matmul { accum: true }, &[1, b, c, f], operands, spec.logical().serial());
    Ok(ImplNode::Block(BlockNode {
        temps: Vec::new(),
        stages: vec![Impl::leaf(Spec::new(matmul, *spec.limits()))],
        bindings: vec![bindings],
        default_stage: Some(0),
    }))
}
