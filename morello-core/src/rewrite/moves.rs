//! The move rewrite: a new tensor for one operand, with a load before and a store after when the
//! move is not a hardware cache fill. Moves may also change the layout (packing, transposing)
//! and widen an input's dtype (upcasting), or copy a tile of a global-memory operand that is not
//! contiguous into a contiguous buffer of the same layout (packing a block of a matrix, as
//! BLAS libraries do, so that its rows no longer lie a whole page apart: see
//! [`crate::tensor::TensorSpec::paged`]).

use super::form::Notation;
use super::{RewriteError, operand_name};
use crate::dtype::Dtype;
use crate::imp::{AllocNode, Impl, ImplNode};
use crate::layout::Layout;
use crate::level::Level;
use crate::primitive::{Primitive, is_upcast};
use crate::spec::{LogicalSpec, Operands, Spec};
use crate::target::Target;
use crate::tensor::TensorSpec;
use smallvec::smallvec;
use std::fmt;

/// Where a move puts its operand.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MoveDest {
    /// Destination level.
    pub level: Level,
    /// Destination layout (canonical for the operand's shape). When it has the same physical
    /// dimensions as the operand, the dtype is unchanged and the destination is
    /// hardware-managed, the move is a cache fill that keeps the operand's layout and emits no
    /// code.
    pub layout: Layout,
    /// Lanes per register for a VRF destination.
    pub vector_size: Option<u32>,
    /// Destination dtype: the operand's, or a lossless widening of an input's.
    pub dtype: Dtype,
}

/// Schedule syntax: `LEVEL, layout[, vN], dtype[, cN]`.
impl Notation for MoveDest {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.level, self.layout)?;
        if let Some(v) = self.vector_size {
            write!(f, ", v{v}")?;
        }
        write!(f, ", {}", self.dtype)?;
        if self.level.has_layout() && !self.layout.is_fully_contiguous() {
            write!(f, ", c{}", self.layout.contig())?;
        }
        Ok(())
    }
}

pub(super) fn apply(spec: &Spec, operand: &usize, to: &MoveDest, target: &Target) -> Result<ImplNode, RewriteError> {
    let operand = *operand;
    let count = spec.operands().len();
    if operand >= count {
        return Err(RewriteError::OperandOutOfRange { what: super::spec_name(spec), index: operand, count });
    }
    let (level, layout, vector_size, dtype) = (to.level, &to.layout, to.vector_size, to.dtype);
    // Only errors name the operand: build the name there, not on every (search) application.
    let name = || operand_name(spec, operand);
    let src = spec.operand(operand);
    let allowed = src.level().move_destinations();
    if !allowed.contains(&level) {
        let allowed = if allowed.is_empty() {
            "nowhere (register tensors are final)".to_owned()
        } else {
            allowed.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ")
        };
        return Err(RewriteError::MoveDestination { operand: name(), from: src.level(), to: level, allowed });
    }
    let direction = spec.logical().direction(operand);
    if dtype != src.dtype() {
        if !is_upcast(src.dtype(), dtype) {
            return Err(RewriteError::NotUpcast { operand: name(), from: src.dtype(), to: dtype });
        }
        if direction.writes() {
            return Err(RewriteError::UpcastWritten { operand: name() });
        }
    }
    let same_dims = !level.has_layout() && !src.level().has_layout() || layout.dims() == src.layout().dims();
    let same_dtype = dtype == src.dtype();
    let packs = level == Level::GL && !src.is_contiguous();
    if level == src.level() && same_dims && vector_size == src.vector_size() && same_dtype && !packs {
        return Err(RewriteError::SelfMove { operand: name(), level });
    }
    let cache_miss = level.is_hardware_managed() && same_dims && vector_size.is_none() && same_dtype;
    let dst = if cache_miss {
        Ok(src.cache_filled(level))
    } else {
        src.moved(dtype, level, layout.with_contig(u8::MAX), vector_size, target)
    }
    .map_err(|source| RewriteError::MoveInvalid { operand: name(), source })?;
    if !same_dtype {
        spec.logical().check_dtypes_replacing(operand, dtype).map_err(RewriteError::Dtypes)?;
    }
    let needed = dst.consumption(target);
    let limits = spec.limits().allocate(level, needed, target).ok_or(RewriteError::OutOfMemory {
        level,
        needed,
        available: spec.limits().get(level),
    })?;
    // Built last: the search applies many moves that do not fit, and a Spec is costly to build.
    let body_logical = spec.logical().with_operand(operand, dst.clone());

    let serial = spec.logical().serial();
    let move_spec = |from: &TensorSpec, to: &TensorSpec| {
        let ops: Operands = smallvec![from.clone(), to.clone()];
        Box::new(Impl::leaf(Spec::new(LogicalSpec::from_tensors(Primitive::Move, from.shape(), ops, serial), limits)))
    };
    let prologue = (!cache_miss && direction.reads()).then(|| move_spec(src, &dst));
    let epilogue = (!cache_miss && direction.writes()).then(|| move_spec(&dst, src));
    let body = Spec::new(body_logical, limits);
    Ok(ImplNode::Alloc(AllocNode {
        operand,
        tensor: dst,
        cache_miss,
        prologue,
        body: Box::new(Impl::leaf(body)),
        epilogue,
    }))
}
