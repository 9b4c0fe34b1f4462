//! Specs: what a kernel must compute, where its operands live and how much memory it may use
//! (paper §2.2).
//!
//! A [`Spec`] is a [`LogicalSpec`] (primitive, shape, operand tensor specifications, serial
//! flag) plus [`MemoryLimits`]. Both can only be built through validating constructors, and
//! every part is stored canonically, so equal computations are equal values — the property the
//! synthesis memo table relies on.

use crate::dtype::Dtype;
use crate::layout::{Layout, LayoutError, PhysDim};
use crate::level::Level;
use crate::limits::{LimitsError, MemoryLimits};
use crate::primitive::{Direction, Primitive};
use crate::shape::{DisplayShape, Shape, volume};
use crate::target::Target;
use crate::tensor::{TensorSpec, TensorSpecError};
use smallvec::SmallVec;
use std::fmt;
use thiserror::Error;

/// Operand tensor specifications of one Spec.
pub type Operands = SmallVec<[TensorSpec; 3]>;

/// A Spec without memory limits: the key of the synthesis memo table.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct LogicalSpec {
    primitive: Primitive,
    shape: Shape,
    operands: Operands,
    serial: bool,
}

/// A complete Spec: a logical Spec and the memory its implementation may use.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Spec {
    logical: LogicalSpec,
    limits: MemoryLimits,
}

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
}

/// Why a Spec is invalid.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum SpecError {
    /// A dimension of size 0.
    #[error("dimension {dim} of the Spec has size 0; sizes start at 1")]
    ZeroDim {
        /// Which dimension.
        dim: usize,
    },
    /// More dimensions than Morello supports.
    #[error("Specs have at most {MAX_RANK} dimensions; this one has {rank}")]
    TooManyDims {
        /// The Spec's rank.
        rank: usize,
    },
    /// A Spec with more iteration points than Morello supports.
    #[error("the Spec's shape has more than 2^{MAX_VOLUME_LOG2} points")]
    TooLarge,
    /// Wrong number of Spec dimensions.
    #[error("{primitive} takes a {expected}-dimensional shape ({names}); found {found} dimensions")]
    Rank {
        /// The primitive.
        primitive: Primitive,
        /// Required rank.
        expected: usize,
        /// Rank given.
        found: usize,
        /// Dimension names, e.g. `b×m×k×n`.
        names: String,
    },
    /// Wrong number of operands.
    #[error("{primitive} takes {expected} operands ({names}); found {found}")]
    OperandCount {
        /// The primitive.
        primitive: Primitive,
        /// Required count.
        expected: usize,
        /// Count given.
        found: usize,
        /// Operand names.
        names: String,
    },
    /// An explicitly written operand shape disagrees with the Spec's shape.
    #[error("operand `{name}` has shape {found}, but {primitive}({spec_shape}) requires {expected}")]
    OperandShape {
        /// The primitive.
        primitive: Primitive,
        /// The Spec's shape, formatted.
        spec_shape: String,
        /// Operand name.
        name: &'static str,
        /// Required shape, formatted.
        expected: String,
        /// Shape given, formatted.
        found: String,
    },
    /// An invalid operand.
    #[error("operand `{name}`: {source}")]
    Operand {
        /// Operand name.
        name: &'static str,
        /// What is wrong with it.
        source: TensorSpecError,
    },
    /// Invalid memory limits.
    #[error(transparent)]
    Limits(#[from] LimitsError),
}

impl LogicalSpec {
    /// Builds a logical Spec from operands as written in syntax, deriving operand shapes.
    pub fn new(
        primitive: Primitive,
        shape: &[u32],
        operands: &[OperandDecl],
        serial: bool,
        target: &Target,
    ) -> Result<LogicalSpec, SpecError> {
        check_shape(primitive, shape)?;
        let defs = primitive.operands();
        if operands.len() != defs.len() {
            return Err(SpecError::OperandCount {
                primitive,
                expected: defs.len(),
                found: operands.len(),
                names: defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", "),
            });
        }
        let mut tensors = Operands::new();
        for (i, decl) in operands.iter().enumerate() {
            let op_shape = primitive.operand_shape(i, shape);
            let name = defs[i].name;
            let wrap = |source: TensorSpecError| SpecError::Operand { name, source };
            let layout = if decl.level.has_layout() {
                decl.layout.build(&op_shape, decl.contig).map_err(|e| wrap(e.into()))?
            } else {
                Layout::empty()
            };
            let t =
                TensorSpec::new(op_shape, decl.dtype, decl.level, layout, decl.vector_size, target).map_err(wrap)?;
            tensors.push(t);
        }
        Ok(LogicalSpec { primitive, shape: shape.into(), operands: tensors, serial })
    }

    /// Builds a logical Spec from already-valid operand tensor specifications (as rewrites do).
    /// Operand shapes must match the primitive's shape rules.
    pub fn from_tensors(primitive: Primitive, shape: &[u32], operands: Operands, serial: bool) -> LogicalSpec {
        debug_assert_eq!(operands.len(), primitive.operand_count());
        debug_assert!(
            operands.iter().enumerate().all(|(i, t)| t.shape() == &primitive.operand_shape(i, shape)[..]),
            "operand shapes disagree with {primitive}({})",
            DisplayShape(shape)
        );
        LogicalSpec { primitive, shape: shape.into(), operands, serial }
    }

    /// The primitive.
    pub fn primitive(&self) -> Primitive {
        self.primitive
    }

    /// The Spec's shape (e.g. `b×m×k×n` for Matmul).
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// Operand tensor specifications in parameter order.
    pub fn operands(&self) -> &[TensorSpec] {
        &self.operands
    }

    /// Whether the implementation must run on one thread.
    pub fn serial(&self) -> bool {
        self.serial
    }

    /// Number of iteration points (product of the shape).
    pub fn volume(&self) -> u64 {
        volume(&self.shape)
    }

    /// Direction of operand `i`.
    pub fn direction(&self, i: usize) -> Direction {
        self.primitive.direction(i)
    }

    /// This Spec with operand `i` replaced by `tensor` (same shape).
    pub fn with_operand(&self, i: usize, tensor: TensorSpec) -> LogicalSpec {
        let mut out = self.clone();
        debug_assert_eq!(out.operands[i].shape(), tensor.shape());
        out.operands[i] = tensor;
        out
    }

    /// This Spec as another primitive with the same operands (e.g. its accumulating variant).
    pub fn with_primitive(&self, primitive: Primitive) -> LogicalSpec {
        LogicalSpec { primitive, ..self.clone() }
    }

    /// The operand shapes, formatted, for messages.
    pub fn describe_operands(&self) -> String {
        let names = self.primitive.operands();
        self.operands
            .iter()
            .zip(names)
            .map(|(t, d)| format!("{} {}", d.name, DisplayShape(t.shape())))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The largest Spec rank accepted.
pub const MAX_RANK: usize = 8;

/// Specs may have at most `2^MAX_VOLUME_LOG2` iteration points (keeps costs and indices far
/// from overflow).
pub const MAX_VOLUME_LOG2: u32 = 48;

fn check_shape(primitive: Primitive, shape: &[u32]) -> Result<(), SpecError> {
    if shape.len() > MAX_RANK {
        return Err(SpecError::TooManyDims { rank: shape.len() });
    }
    if !primitive.accepts_rank(shape.len()) {
        let def = primitive.def();
        return Err(SpecError::Rank {
            primitive,
            expected: def.rank.unwrap_or(1),
            found: shape.len(),
            names: def.dim_names.join("×"),
        });
    }
    if let Some(dim) = shape.iter().position(|&d| d == 0) {
        return Err(SpecError::ZeroDim { dim });
    }
    let volume = shape.iter().try_fold(1u64, |v, &d| v.checked_mul(u64::from(d)));
    if volume.is_none_or(|v| v > 1 << MAX_VOLUME_LOG2) {
        return Err(SpecError::TooLarge);
    }
    Ok(())
}

impl Spec {
    /// Pairs a logical Spec with memory limits.
    pub fn new(logical: LogicalSpec, limits: MemoryLimits) -> Spec {
        Spec { logical, limits }
    }

    /// The logical Spec.
    pub fn logical(&self) -> &LogicalSpec {
        &self.logical
    }

    /// The memory limits.
    pub fn limits(&self) -> &MemoryLimits {
        &self.limits
    }

    /// The primitive.
    pub fn primitive(&self) -> Primitive {
        self.logical.primitive
    }

    /// The Spec's shape.
    pub fn shape(&self) -> &[u32] {
        &self.logical.shape
    }

    /// Operand tensor specifications.
    pub fn operands(&self) -> &[TensorSpec] {
        &self.logical.operands
    }

    /// Operand `i`.
    pub fn operand(&self, i: usize) -> &TensorSpec {
        &self.logical.operands[i]
    }

    /// This Spec with other limits.
    pub fn with_limits(&self, limits: MemoryLimits) -> Spec {
        Spec { logical: self.logical.clone(), limits }
    }
}

impl fmt::Display for LogicalSpec {
    /// Formats in Spec syntax: `Matmul(1×4×4×16, (f32, RF), ..., serial)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}", self.primitive, DisplayShape(&self.shape))?;
        for t in &self.operands {
            write!(f, ", {t}")?;
        }
        if self.serial {
            f.write_str(", serial")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Spec {
    /// Formats in Spec syntax with limits: `(Matmul(...), [64, 512, 32768, 1073741824])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.logical, self.limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX2;

    fn decl(dtype: Dtype, level: Level, vs: Option<u32>) -> OperandDecl {
        OperandDecl { dtype, level, layout: LayoutDecl::RowMajor, vector_size: vs, contig: None }
    }

    #[test]
    fn figure_one_spec_displays_in_paper_notation() {
        let s = LogicalSpec::new(
            Primitive::Matmul { accum: true },
            &[1, 4, 4, 16],
            &[
                decl(Dtype::F32, Level::RF, None),
                decl(Dtype::F32, Level::VRF, Some(8)),
                decl(Dtype::F32, Level::L1, None),
            ],
            true,
            &X86_AVX2,
        )
        .unwrap();
        assert_eq!(
            s.to_string(),
            "MatmulAccum(1×4×4×16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial)"
        );
    }

    #[test]
    fn errors_name_the_operand() {
        let err = LogicalSpec::new(
            Primitive::Matmul { accum: false },
            &[1, 4, 4, 16],
            &[decl(Dtype::F32, Level::GL, None), decl(Dtype::F32, Level::VRF, None), decl(Dtype::F32, Level::GL, None)],
            false,
            &X86_AVX2,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "operand `rhs`: a VRF tensor needs a vector size such as `v8`");
        let err = LogicalSpec::new(Primitive::Matmul { accum: false }, &[4, 4, 4], &[], false, &X86_AVX2).unwrap_err();
        assert!(matches!(err, SpecError::Rank { expected: 4, found: 3, .. }));
    }
}
