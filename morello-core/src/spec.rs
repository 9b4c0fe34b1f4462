//! Specs: what a kernel must compute, where its operands live and how much memory it may use
//! (paper §2.2).
//!
//! A [`Spec`] is a [`LogicalSpec`] (a primitive or a Compose pipeline, its shape, the operand
//! tensor specifications, the serial flag) plus [`MemoryLimits`]. Both can only be built through
//! validating constructors, and every part is stored canonically, so equal computations are
//! equal values — the property the synthesis memo table relies on.

mod compose;
mod decl;

pub use compose::{Component, ComponentDecl, DisplayComponents, parameter_bindings};
pub use decl::{LayoutDecl, OperandDecl};

use crate::dtype::Dtype;
use crate::fxhash::fingerprint;
use crate::limits::{LimitsError, MemoryLimits};
use crate::primitive::{Direction, Primitive};
use crate::shape::{DisplayShape, Shape, volume};
use crate::target::Target;
use crate::tensor::{TensorSpec, TensorSpecError};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use thiserror::Error;

/// Operand tensor specifications of one Spec.
pub type Operands = SmallVec<[TensorSpec; 3]>;

/// What a Spec computes.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum SpecKind {
    /// One primitive.
    Primitive(Primitive),
    /// A pipeline of primitives, head (outermost) first.
    Compose(Vec<Component>),
}

/// A Spec without memory limits: the key of the synthesis memo table.
///
/// It carries a hash of its contents, computed once at construction, so the synthesis
/// tables hash a Spec in one step and tell most unequal Specs apart without comparing them.
#[derive(Clone, PartialOrd, Ord, Debug)]
pub struct LogicalSpec {
    kind: SpecKind,
    /// The primitive's shape; for a Compose, the head's.
    shape: Shape,
    operands: Operands,
    serial: bool,
    /// Hash of the fields above (see [`LogicalSpec::sealed`]).
    fingerprint: u64,
}

impl PartialEq for LogicalSpec {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && self.serial == other.serial
            && self.shape == other.shape
            && self.kind == other.kind
            && self.operands == other.operands
    }
}

impl Eq for LogicalSpec {}

impl Hash for LogicalSpec {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

/// A complete Spec: a logical Spec and the memory its implementation may use.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Spec {
    logical: LogicalSpec,
    limits: MemoryLimits,
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
    /// A dimension parameter outside the shape.
    #[error("{primitive}'s {param}={value} is not a dimension of its {rank}-dimensional shape")]
    ParamOutOfRange {
        /// The primitive.
        primitive: Primitive,
        /// The parameter's name.
        param: &'static str,
        /// Its value.
        value: u8,
        /// The Spec's rank.
        rank: usize,
    },
    /// Wrong number of operands.
    #[error("{what} takes {expected} operands ({names}); found {found}")]
    OperandCount {
        /// The primitive or Compose.
        what: String,
        /// Required count.
        expected: usize,
        /// Count given.
        found: usize,
        /// Operand names.
        names: String,
    },
    /// An explicitly written operand shape disagrees with the Spec's shape.
    #[error("operand `{name}` has shape {found}, but {what} requires {expected}")]
    OperandShape {
        /// The Spec, briefly.
        what: String,
        /// Operand name.
        name: String,
        /// Required shape, formatted.
        expected: String,
        /// Shape given, formatted.
        found: String,
    },
    /// An invalid operand.
    #[error("operand `{name}`: {source}")]
    Operand {
        /// Operand index.
        index: usize,
        /// Operand name.
        name: String,
        /// What is wrong with it.
        source: TensorSpecError,
    },
    /// Operand dtypes the primitive does not accept.
    #[error("{0}")]
    Dtypes(String),
    /// A Compose with fewer than two components.
    #[error("a Compose needs at least two components")]
    ComposeTooShort,
    /// An invalid Compose component.
    #[error("component {index}: {reason}")]
    Component {
        /// Component index (0 = head).
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// Invalid memory limits.
    #[error(transparent)]
    Limits(#[from] LimitsError),
}

/// The largest Spec rank accepted.
pub const MAX_RANK: usize = 8;

/// Specs may have at most `2^MAX_VOLUME_LOG2` iteration points (keeps costs and indices far
/// from overflow).
pub const MAX_VOLUME_LOG2: u32 = 48;

impl LogicalSpec {
    /// Builds a primitive Spec from operands as written in syntax, deriving operand shapes.
    pub fn new(
        primitive: Primitive,
        shape: &[u32],
        operands: &[OperandDecl],
        serial: bool,
        target: &Target,
    ) -> Result<LogicalSpec, SpecError> {
        check_shape(primitive, shape)?;
        let names: Vec<&str> = primitive.operands().iter().map(|o| o.name).collect();
        let shapes: Vec<Shape> = (0..names.len()).map(|i| primitive.operand_shape(i, shape)).collect();
        let tensors = build_operands(&primitive.to_string(), &names, &shapes, operands, target)?;
        let dtypes: Vec<_> = tensors.iter().map(|t| t.dtype()).collect();
        primitive.check_dtypes(&dtypes).map_err(SpecError::Dtypes)?;
        Ok(LogicalSpec {
            kind: SpecKind::Primitive(primitive),
            shape: shape.into(),
            operands: tensors,
            serial,
            fingerprint: 0,
        }
        .sealed())
    }

    /// Builds a Compose Spec from its components (head first) and parameters as written.
    pub fn compose(
        components: &[ComponentDecl],
        operands: &[OperandDecl],
        serial: bool,
        target: &Target,
    ) -> Result<LogicalSpec, SpecError> {
        let output_dtype = operands.last().map_or(crate::dtype::Dtype::F32, |o| o.dtype);
        let components = compose::check_components(components, output_dtype)?;
        let bindings = parameter_bindings(&components);
        let names: Vec<String> = (0..bindings.len()).map(|i| compose::parameter_name(&components, i)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let shapes: Vec<Shape> =
            bindings.iter().map(|&(c, o)| components[c].primitive.operand_shape(o, &components[c].shape)).collect();
        let tensors = build_operands("this Compose", &names, &shapes, operands, target)?;
        let dtypes: Vec<_> = tensors.iter().map(|t| t.dtype()).collect();
        compose::check_component_dtypes(&components, &dtypes)?;
        let shape = components[0].shape.clone();
        Ok(LogicalSpec { kind: SpecKind::Compose(components), shape, operands: tensors, serial, fingerprint: 0 }
            .sealed())
    }

    /// Builds a primitive Spec from already-valid operand tensor specifications (as rewrites
    /// do). Operand shapes must match the primitive's shape rules.
    pub fn from_tensors(primitive: Primitive, shape: &[u32], operands: Operands, serial: bool) -> LogicalSpec {
        debug_assert_eq!(operands.len(), primitive.operand_count());
        debug_assert!(
            operands.iter().enumerate().all(|(i, t)| t.shape() == &primitive.operand_shape(i, shape)[..]),
            "operand shapes disagree with {primitive}({})",
            DisplayShape(shape)
        );
        LogicalSpec { kind: SpecKind::Primitive(primitive), shape: shape.into(), operands, serial, fingerprint: 0 }
            .sealed()
    }

    /// Builds a Compose Spec from already-valid components and operand tensor specifications
    /// (as rewrites do). Operand shapes must match the components' shape rules.
    pub fn compose_from_tensors(components: Vec<Component>, operands: Operands, serial: bool) -> LogicalSpec {
        debug_assert!(components.len() >= 2);
        debug_assert_eq!(operands.len(), parameter_bindings(&components).len());
        let shape = components[0].shape.clone();
        LogicalSpec { kind: SpecKind::Compose(components), shape, operands, serial, fingerprint: 0 }.sealed()
    }

    /// This Spec, required to run on one thread.
    pub fn as_serial(&self) -> LogicalSpec {
        LogicalSpec { serial: true, ..self.clone() }.sealed()
    }

    /// Whether the operand dtypes are acceptable to the primitive (or to every Compose stage);
    /// `Err` explains why not.
    pub fn check_dtypes(&self) -> Result<(), String> {
        let dtypes: Vec<_> = self.operands.iter().map(TensorSpec::dtype).collect();
        self.check_operand_dtypes(&dtypes)
    }

    /// [`LogicalSpec::check_dtypes`] for this Spec with operand `index` of type `dtype`, without
    /// building that Spec.
    pub(crate) fn check_dtypes_replacing(&self, index: usize, dtype: Dtype) -> Result<(), String> {
        let mut dtypes: Vec<_> = self.operands.iter().map(TensorSpec::dtype).collect();
        dtypes[index] = dtype;
        self.check_operand_dtypes(&dtypes)
    }

    fn check_operand_dtypes(&self, dtypes: &[Dtype]) -> Result<(), String> {
        match &self.kind {
            SpecKind::Primitive(p) => p.check_dtypes(dtypes),
            SpecKind::Compose(components) => {
                compose::check_component_dtypes(components, dtypes).map_err(|e| e.to_string())
            }
        }
    }

    /// What the Spec computes.
    pub fn kind(&self) -> &SpecKind {
        &self.kind
    }

    /// The primitive, unless this is a Compose.
    pub fn primitive(&self) -> Option<Primitive> {
        match self.kind {
            SpecKind::Primitive(p) => Some(p),
            SpecKind::Compose(_) => None,
        }
    }

    /// The Spec's shape (e.g. `b×m×k×n` for Matmul; the head's for a Compose).
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
        match &self.kind {
            SpecKind::Primitive(p) => p.direction(i),
            SpecKind::Compose(components) => {
                let head = components[0].primitive;
                if i + 1 == self.operands.len() { head.direction(head.operand_count() - 1) } else { Direction::In }
            }
        }
    }

    /// Name of operand `i` (a valid Rust identifier).
    pub fn operand_name(&self, i: usize) -> Cow<'static, str> {
        match &self.kind {
            SpecKind::Primitive(p) => Cow::Borrowed(p.operands()[i].name),
            SpecKind::Compose(components) => Cow::Owned(compose::parameter_name(components, i)),
        }
    }

    /// This Spec with operand `i` replaced by `tensor` (same shape).
    pub fn with_operand(&self, i: usize, tensor: TensorSpec) -> LogicalSpec {
        let mut out = self.clone();
        debug_assert_eq!(out.operands[i].shape(), tensor.shape());
        out.operands[i] = tensor;
        out.sealed()
    }

    /// This primitive Spec as another primitive with the same operands (e.g. its accumulating
    /// variant).
    pub fn with_primitive(&self, primitive: Primitive) -> LogicalSpec {
        debug_assert!(matches!(self.kind, SpecKind::Primitive(_)));
        LogicalSpec { kind: SpecKind::Primitive(primitive), ..self.clone() }.sealed()
    }

    /// The hash of this Spec's contents, computed at construction.
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// This Spec with its fingerprint computed from its contents.
    fn sealed(mut self) -> LogicalSpec {
        self.fingerprint = fingerprint(&(&self.kind, &self.shape, &self.operands, self.serial));
        self
    }
}

fn build_operands(
    what: &str,
    names: &[&str],
    shapes: &[Shape],
    operands: &[OperandDecl],
    target: &Target,
) -> Result<Operands, SpecError> {
    if operands.len() != names.len() {
        return Err(SpecError::OperandCount {
            what: what.to_owned(),
            expected: names.len(),
            found: operands.len(),
            names: names.join(", "),
        });
    }
    operands
        .iter()
        .enumerate()
        .map(|(i, decl)| {
            decl.build(&shapes[i], target).map_err(|source| SpecError::Operand {
                index: i,
                name: names[i].to_owned(),
                source,
            })
        })
        .collect()
}

pub(crate) fn check_shape(primitive: Primitive, shape: &[u32]) -> Result<(), SpecError> {
    if shape.len() > MAX_RANK {
        return Err(SpecError::TooManyDims { rank: shape.len() });
    }
    let def = primitive.def();
    if def.rank.is_some_and(|r| r != shape.len()) || shape.is_empty() {
        return Err(SpecError::Rank {
            primitive,
            expected: def.rank.unwrap_or(1),
            found: shape.len(),
            names: def.dim_names.join("×"),
        });
    }
    if let (Some(param), Some(value)) = (def.param, primitive.param())
        && usize::from(value) >= shape.len()
    {
        return Err(SpecError::ParamOutOfRange { primitive, param, value, rank: shape.len() });
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

    /// The primitive, unless this is a Compose.
    pub fn primitive(&self) -> Option<Primitive> {
        self.logical.primitive()
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
    /// Formats in Spec syntax: `Matmul(1×4×4×16, (f32, RF), ..., serial)` or
    /// `Compose([...], (f32, GL), ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            SpecKind::Primitive(p) => {
                write!(f, "{p}({}", DisplayShape(&self.shape))?;
                if let (Some(param), Some(value)) = (p.def().param, p.param()) {
                    write!(f, ", {param}={value}")?;
                }
            }
            SpecKind::Compose(components) => write!(f, "Compose({}", DisplayComponents(components))?,
        }
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
    use crate::dtype::Dtype;
    use crate::level::Level;
    use crate::target::X86_AVX2;

    fn decl(dtype: Dtype, level: Level, vs: Option<u32>) -> OperandDecl {
        OperandDecl { dtype, level, layout: LayoutDecl::RowMajor, vector_size: vs, contig: None, paged: false }
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

    #[test]
    fn compose_binds_parameters_in_the_papers_order() {
        let components = [
            ComponentDecl {
                primitive: Primitive::Matmul { accum: false },
                shape: Shape::from_slice(&[1, 64, 32, 128]),
                output_dtype: None,
            },
            ComponentDecl {
                primitive: Primitive::Matmul { accum: false },
                shape: Shape::from_slice(&[1, 64, 1024, 32]),
                output_dtype: Some(Dtype::F32),
            },
        ];
        let gl = decl(Dtype::F32, Level::GL, None);
        let c = LogicalSpec::compose(&components, &[gl.clone(), gl.clone(), gl.clone(), gl], false, &X86_AVX2).unwrap();
        let shapes: Vec<String> = c.operands().iter().map(|t| DisplayShape(t.shape()).to_string()).collect();
        assert_eq!(shapes, ["1×32×128", "1×64×1024", "1×1024×32", "1×64×128"]);
        let names: Vec<_> = (0..4).map(|i| c.operand_name(i).into_owned()).collect();
        assert_eq!(names, ["rhs", "lhs_1", "rhs_1", "out"]);
        assert_eq!(c.direction(3), Direction::Out);
        assert_eq!(
            c.to_string(),
            "Compose([Matmul(1×64×32×128), Matmul(1×64×1024×32) -> f32], (f32, GL, row_major), (f32, GL, row_major), \
             (f32, GL, row_major), (f32, GL, row_major))"
        );
    }

    #[test]
    fn compose_rejects_side_effecting_inner_stages() {
        let components = [
            ComponentDecl {
                primitive: Primitive::Matmul { accum: false },
                shape: Shape::from_slice(&[1, 4, 4, 4]),
                output_dtype: None,
            },
            ComponentDecl {
                primitive: Primitive::Matmul { accum: true },
                shape: Shape::from_slice(&[1, 4, 4, 4]),
                output_dtype: Some(Dtype::F32),
            },
        ];
        let gl = decl(Dtype::F32, Level::GL, None);
        let err =
            LogicalSpec::compose(&components, &[gl.clone(), gl.clone(), gl.clone(), gl], false, &X86_AVX2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "component 1: MatmulAccum has side effects, so it can only be the head (first) component"
        );
    }
}
