//! Operands and layouts as written in Spec syntax, before they are built for a shape.

use crate::dtype::Dtype;
use crate::layout::{Layout, LayoutError, PhysDim};
use crate::level::Level;
use crate::target::Target;
use crate::tensor::{TensorSpec, TensorSpecError};
use std::fmt;

/// How a layout is named in Spec and schedule syntax, before it is built for a shape.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum LayoutDecl {
    /// `row_major`.
    RowMajor,
    /// `col_major`.
    ColMajor,
    /// An explicit list of physical dimensions, e.g. `[0, 2, 1, 2 p16]`.
    Physical(Vec<PhysDim>),
}

impl LayoutDecl {
    /// The canonical layout for a buffer of `shape`, with `contig` innermost dimensions
    /// contiguous (`None` = fully contiguous).
    ///
    /// `contig` counts physical dimensions as written; `row_major` and `col_major` stand for
    /// the dimensions larger than 1, in order or reversed (which is also how layouts print).
    pub fn build(&self, shape: &[u32], contig: Option<u8>) -> Result<Layout, LayoutError> {
        let larger_than_one = |d: &u8| shape[usize::from(*d)] > 1;
        let dims: Vec<PhysDim> = match self {
            LayoutDecl::RowMajor => (0..shape.len() as u8).filter(larger_than_one).map(PhysDim::dynamic).collect(),
            LayoutDecl::ColMajor => {
                (0..shape.len() as u8).rev().filter(larger_than_one).map(PhysDim::dynamic).collect()
            }
            LayoutDecl::Physical(dims) => dims.clone(),
        };
        Layout::new(&dims, contig, shape)
    }
}

impl fmt::Display for LayoutDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutDecl::RowMajor => f.write_str("row_major"),
            LayoutDecl::ColMajor => f.write_str("col_major"),
            LayoutDecl::Physical(dims) => {
                f.write_str("[")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// An operand as written in Spec syntax; its shape comes from the Spec.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OperandDecl {
    /// Element type.
    pub dtype: Dtype,
    /// Memory level.
    pub level: Level,
    /// Layout (ignored for RF).
    pub layout: LayoutDecl,
    /// Lanes per vector register (VRF only).
    pub vector_size: Option<u32>,
    /// Contiguous innermost physical dimensions; `None` = fully contiguous.
    pub contig: Option<u8>,
    /// Whether the runs start whole pages apart (`paged`, see [`TensorSpec::paged`]).
    pub paged: bool,
}

impl OperandDecl {
    /// The tensor specification of this operand with shape `shape`.
    pub fn build(&self, shape: &[u32], target: &Target) -> Result<TensorSpec, TensorSpecError> {
        let layout = if self.level.has_layout() { self.layout.build(shape, self.contig)? } else { Layout::empty() };
        let tensor = TensorSpec::new(shape.into(), self.dtype, self.level, layout, self.vector_size, target)?;
        if self.paged { tensor.with_paged_runs() } else { Ok(tensor) }
    }
}
