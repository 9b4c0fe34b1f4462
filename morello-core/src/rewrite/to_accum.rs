//! The to-accumulator rewrite: initialize the output, then run the accumulating variant.

use super::RewriteError;
use crate::imp::{BlockNode, Impl, ImplNode};
use crate::primitive::Primitive;
use crate::spec::{LogicalSpec, Operands, Spec};
use smallvec::smallvec;

pub(super) fn apply(spec: &Spec) -> Result<ImplNode, RewriteError> {
    let prim = spec.primitive();
    let accum = prim.accumulating_variant().ok_or(RewriteError::NoAccumulatingVariant { primitive: prim })?;
    let init = accum.def().accum_init.expect("accumulating primitives declare their initial value");
    let out = prim.output_index();
    let out_tensor = spec.operand(out).clone();
    let ops: Operands = smallvec![out_tensor.clone()];
    let fill = LogicalSpec::from_tensors(Primitive::Fill(init), out_tensor.shape(), ops, spec.logical().serial());
    let limits = *spec.limits();
    Ok(ImplNode::Block(BlockNode {
        stages: vec![
            Impl::leaf(Spec::new(fill, limits)),
            Impl::leaf(Spec::new(spec.logical().with_primitive(accum), limits)),
        ],
        bindings: vec![smallvec![out], (0..spec.operands().len()).collect()],
        default_stage: 1,
    }))
}
