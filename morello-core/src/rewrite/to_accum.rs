//! The to-accumulator rewrite: initialize the outputs, then run the accumulating variant.

use super::{RewriteError, spec_name};
use crate::imp::{Binding, BlockNode, Impl, ImplNode};
use crate::primitive::Primitive;
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;
use smallvec::{SmallVec, smallvec};

pub(super) fn apply(spec: &Spec, _target: &Target) -> Result<ImplNode, RewriteError> {
    let Some(prim) = spec.primitive() else { return Err(RewriteError::Compose { rewrite: "to_accum" }) };
    let accum =
        prim.accumulating_variant().ok_or_else(|| RewriteError::NoAccumulatingVariant { what: spec_name(spec) })?;
    let limits = *spec.limits();
    let serial = spec.logical().serial();
    let mut stages = Vec::new();
    let mut bindings: Vec<SmallVec<[Binding; 4]>> = Vec::new();
    for out in accum.outputs() {
        let tensor = spec.operand(out);
        if let Some(value) = accum.accum_init(out, tensor.dtype()) {
            let ops: Operands = smallvec![tensor.clone()];
            let fill = LogicalSpec::from_tensors(Primitive::Fill(value), tensor.shape(), ops, serial);
            stages.push(Impl::leaf(Spec::new(fill, limits)));
            bindings.push(smallvec![Binding::param(out)]);
        }
    }
    stages.push(Impl::leaf(Spec::new(spec.logical().with_primitive(accum), limits)));
    bindings.push((0..spec.operands().len()).map(Binding::param).collect());
    Ok(ImplNode::Block(BlockNode { temps: Vec::new(), default_stage: Some(stages.len() - 1), stages, bindings }))
}
