//! Temporaries that rewrites introduce (pipeline intermediates), and the blocks that hold them.

use super::RewriteError;
use crate::dtype::Dtype;
use crate::imp::{Binding, BlockNode, Impl, ImplNode};
use crate::level::Level;
use crate::limits::MemoryLimits;
use crate::shape::DisplayShape;
use crate::spec::{LayoutDecl, LogicalSpec, Spec};
use crate::target::Target;
use crate::tensor::{TensorSpec, consumption_by_level};
use smallvec::SmallVec;
use std::fmt;

/// Where a rewrite puts a temporary tensor it introduces: a level, a layout (built for the
/// temporary's shape) and, in VRF, a vector size. The tensor is fully contiguous.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TempDest {
    /// The memory level.
    pub level: Level,
    /// The layout.
    pub layout: LayoutDecl,
    /// Lanes per vector register (VRF only).
    pub vector_size: Option<u32>,
}

impl TempDest {
    /// A row-major temporary at `level` with no vector size.
    pub fn at(level: Level) -> TempDest {
        TempDest { level, layout: LayoutDecl::RowMajor, vector_size: None }
    }

    /// The tensor this destination describes for a temporary of `shape` and `dtype`.
    pub(super) fn tensor(
        &self,
        what: &'static str,
        shape: &[u32],
        dtype: Dtype,
        target: &Target,
    ) -> Result<TensorSpec, RewriteError> {
        let layout = self.layout.build(shape, None).map_err(|source| RewriteError::TempLayout {
            what,
            shape: DisplayShape(shape).to_string(),
            source,
        })?;
        TensorSpec::new(shape.into(), dtype, self.level, layout, self.vector_size, target)
            .map_err(|source| RewriteError::TempInvalid { what, source })
    }
}

impl fmt::Display for TempDest {
    /// Schedule syntax: `L1, row_major` or `VRF, row_major, v8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.level, self.layout)?;
        if let Some(v) = self.vector_size {
            write!(f, ", v{v}")?;
        }
        Ok(())
    }
}

/// The limits left for a block's stages once `temps` are allocated: the temporaries of each
/// level are allocated together (so the search can invert the tightening exactly).
pub(super) fn limits_after(spec: &Spec, temps: &[TensorSpec], target: &Target) -> Result<MemoryLimits, RewriteError> {
    let mut limits = *spec.limits();
    let per_level = consumption_by_level(temps, target);
    for level in Level::ALL {
        let needed = per_level[level.index()];
        if needed > 0 {
            limits = limits.allocate(level, needed, target).ok_or(RewriteError::OutOfMemory {
                level,
                needed,
                available: spec.limits().get(level),
            })?;
        }
    }
    Ok(limits)
}

/// A block of `stages` (each a logical Spec with its bindings) holding `temps`, every stage at
/// the limits left by the temporaries.
pub(super) fn block(
    spec: &Spec,
    temps: Vec<TensorSpec>,
    stages: Vec<(LogicalSpec, SmallVec<[Binding; 4]>)>,
    default_stage: Option<usize>,
    target: &Target,
) -> Result<ImplNode, RewriteError> {
    let limits = limits_after(spec, &temps, target)?;
    let (stages, bindings) = stages.into_iter().map(|(s, b)| (Impl::leaf(Spec::new(s, limits)), b)).unzip();
    Ok(ImplNode::Block(BlockNode { temps, stages, bindings, default_stage }))
}
