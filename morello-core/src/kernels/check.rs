//! Applicability checks shared by the kernels, and why a kernel does not apply.

use crate::dtype::Dtype;
use crate::level::Level;
use crate::shape::DisplayShape;
use crate::spec::LogicalSpec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use thiserror::Error;

/// Why a kernel does not implement a Spec.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum KernelMismatch {
    /// The kernel implements another primitive.
    #[error("it implements {expected}, not {found}")]
    Primitive {
        /// What it implements.
        expected: &'static str,
        /// What the Spec is.
        found: String,
    },
    /// An operand must be a single element.
    #[error("operand `{operand}` must be a single element, but it is {shape}")]
    NotScalar {
        /// Operand name.
        operand: String,
        /// Its shape, formatted.
        shape: String,
    },
    /// An operand is at the wrong level.
    #[error("operand `{operand}` must be in {allowed}, but it is in {found}")]
    Level {
        /// Operand name.
        operand: String,
        /// Allowed levels, formatted.
        allowed: String,
        /// Its level.
        found: Level,
    },
    /// Operand dtypes are not a combination the kernel handles.
    #[error("it handles {expected}, not {found}")]
    Dtypes {
        /// The combinations it handles, in words.
        expected: &'static str,
        /// The operands' dtypes, formatted.
        found: String,
    },
    /// An operand is not contiguous.
    #[error("operand `{operand}` must be contiguous")]
    NotContiguous {
        /// Operand name.
        operand: String,
    },
    /// Operands disagree on vector size or layout.
    #[error("operands must have the same shape, layout and vector size")]
    Mismatched,
    /// The target lacks what the kernel needs.
    #[error("{target} has no {feature}")]
    Target {
        /// The target's name.
        target: &'static str,
        /// What is missing.
        feature: &'static str,
    },
    /// The Spec's shape or layout is not what the kernel handles.
    #[error("{0}")]
    Shape(String),
}

/// Applicability checks over one Spec's operands.
pub struct Checker<'a> {
    spec: &'a LogicalSpec,
}

impl<'a> Checker<'a> {
    pub(super) fn new(spec: &'a LogicalSpec) -> Self {
        Checker { spec }
    }

    /// The Spec.
    pub fn spec(&self) -> &'a LogicalSpec {
        self.spec
    }

    /// Operand `i`.
    pub fn op(&self, i: usize) -> &'a TensorSpec {
        &self.spec.operands()[i]
    }

    fn name(&self, i: usize) -> String {
        self.spec.operand_name(i).into_owned()
    }

    /// Every operand has the same dtype, one of `allowed`.
    pub fn same_dtype_in(&self, allowed: &[Dtype], expected: &'static str) -> Result<(), KernelMismatch> {
        let d = self.op(0).dtype();
        if allowed.contains(&d) && self.spec.operands().iter().all(|t| t.dtype() == d) {
            Ok(())
        } else {
            Err(self.dtypes(expected))
        }
    }

    /// The operands' dtypes are exactly `dtypes`.
    pub fn dtypes_are(&self, dtypes: &[Dtype], expected: &'static str) -> Result<(), KernelMismatch> {
        if self.spec.operands().iter().map(TensorSpec::dtype).eq(dtypes.iter().copied()) {
            Ok(())
        } else {
            Err(self.dtypes(expected))
        }
    }

    /// The error for operand dtypes other than `expected`.
    pub fn dtypes(&self, expected: &'static str) -> KernelMismatch {
        let found = self.spec.operands().iter().map(|t| t.dtype().name()).collect::<Vec<_>>().join(", ");
        KernelMismatch::Dtypes { expected, found }
    }

    /// Operand `i` is a single element.
    pub fn scalar(&self, i: usize) -> Result<(), KernelMismatch> {
        if self.op(i).is_scalar() {
            Ok(())
        } else {
            Err(KernelMismatch::NotScalar {
                operand: self.name(i),
                shape: DisplayShape(self.op(i).shape()).to_string(),
            })
        }
    }

    /// Every operand is a single element.
    pub fn all_scalars(&self) -> Result<(), KernelMismatch> {
        (0..self.spec.operands().len()).try_for_each(|i| self.scalar(i))
    }

    /// Operand `i` is at one of `allowed`.
    pub fn level(&self, i: usize, allowed: &[Level]) -> Result<(), KernelMismatch> {
        let found = self.op(i).level();
        if allowed.contains(&found) {
            Ok(())
        } else {
            Err(KernelMismatch::Level {
                operand: self.name(i),
                allowed: allowed.iter().map(|l| l.name()).collect::<Vec<_>>().join(" or "),
                found,
            })
        }
    }

    /// Operand `i` occupies one dense block.
    pub fn contiguous(&self, i: usize) -> Result<(), KernelMismatch> {
        if self.op(i).is_contiguous() { Ok(()) } else { Err(KernelMismatch::NotContiguous { operand: self.name(i) }) }
    }

    /// Every operand occupies one dense block.
    pub fn all_contiguous(&self) -> Result<(), KernelMismatch> {
        (0..self.spec.operands().len()).try_for_each(|i| self.contiguous(i))
    }

    /// Operands `a` and `b` hold the same values in the same order in whole vectors of equal
    /// size (a memory operand is read in vectors of the other's size).
    pub fn same_vectors(&self, a: usize, b: usize) -> Result<(), KernelMismatch> {
        let (x, y) = (self.op(a), self.op(b));
        let lanes_agree = match (x.vector_size(), y.vector_size()) {
            (Some(p), Some(q)) => p == q,
            (Some(l), None) | (None, Some(l)) => x.volume() % u64::from(l) == 0,
            (None, None) => false,
        };
        if x.shape() == y.shape() && x.layout().dims() == y.layout().dims() && lanes_agree {
            Ok(())
        } else {
            Err(KernelMismatch::Mismatched)
        }
    }

    /// The target has vector registers.
    pub fn has_vectors(&self, target: &Target) -> Result<(), KernelMismatch> {
        if target.vector_bytes.is_empty() {
            Err(KernelMismatch::Target { target: target.name, feature: "vector registers" })
        } else {
            Ok(())
        }
    }

    /// The target has the ISA extension `feature`.
    pub fn has_feature(&self, target: &Target, feature: &'static str) -> Result<(), KernelMismatch> {
        if target.has_feature(feature) { Ok(()) } else { Err(KernelMismatch::Target { target: target.name, feature }) }
    }

    /// Only dimension `dim` of operand `i` may be larger than 1.
    pub fn only_along(&self, i: usize, dim: usize) -> Result<(), KernelMismatch> {
        if self.op(i).shape().iter().enumerate().all(|(d, &s)| d == dim || s == 1) {
            Ok(())
        } else {
            Err(KernelMismatch::Shape(format!(
                "operand `{}` may only extend along dimension {dim}, but it is {}",
                self.name(i),
                DisplayShape(self.op(i).shape())
            )))
        }
    }

    /// A shape requirement.
    pub fn require(&self, ok: bool, what: impl FnOnce() -> String) -> Result<(), KernelMismatch> {
        if ok { Ok(()) } else { Err(KernelMismatch::Shape(what())) }
    }
}
