//! Broadcast-first: DivideVecScalar as a pipeline that broadcasts the scalars into a temporary
//! of the values' shape, then divides element by element.

use super::RewriteError;
use super::temps::{TempDest, block};
use crate::imp::{Binding, ImplNode};
use crate::primitive::Primitive;
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;
use smallvec::smallvec;

pub(super) fn apply(spec: &Spec, dest: &TempDest, target: &Target) -> Result<ImplNode, RewriteError> {
    let Some(Primitive::DivideVecScalar { scan }) = spec.primitive() else {
        return Err(RewriteError::WrongPrimitive {
            rewrite: "broadcast_first",
            expected: "DivideVecScalar",
            found: super::spec_name(spec),
        });
    };
    let (values, scalars) = (spec.operand(0), spec.operand(1));
    let temp = dest.tensor("broadcast", values.shape(), scalars.dtype(), target)?;
    let serial = spec.logical().serial();
    let shape = spec.shape();
    let broadcast = LogicalSpec::from_tensors(
        Primitive::Broadcast { dim: scan },
        shape,
        Operands::from_iter([scalars.clone(), temp.clone()]),
        serial,
    );
    let divide = LogicalSpec::from_tensors(
        Primitive::DivideVec,
        shape,
        Operands::from_iter([values.clone(), temp.clone()]),
        serial,
    );
    block(
        spec,
        vec![temp],
        vec![
            (broadcast, smallvec![Binding::param(1), Binding::temp(0)]),
            (divide, smallvec![Binding::param(0), Binding::temp(0)]),
        ],
        None,
        target,
    )
}
