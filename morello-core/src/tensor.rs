//! Tensor specifications: what a Spec knows about each of its operands.

use crate::dtype::Dtype;
use crate::fxhash::fingerprint;
use crate::layout::{Layout, LayoutError};
use crate::level::{LEVEL_COUNT, Level};
use crate::shape::{Shape, volume};
use crate::target::Target;
use crate::view::ViewMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use thiserror::Error;

/// The description of one operand: shape, element type, memory level, layout (with
/// contiguity) and, for vector registers, the number of lanes per register.
///
/// It carries a hash of its contents, computed once at construction, so that a Spec's own
/// fingerprint ([`crate::spec::LogicalSpec`]) combines its operands' in one step each.
#[derive(PartialOrd, Ord, Debug)]
pub struct TensorSpec {
    shape: Shape,
    dtype: Dtype,
    level: Level,
    layout: Layout,
    vector_size: Option<u32>,
    /// Hash of the fields above (see [`TensorSpec::sealed`]).
    fingerprint: u64,
}

// The shape is copied as a slice: a derived clone goes element by element, and the search
// clones tensors on every rewrite it applies.
impl Clone for TensorSpec {
    fn clone(&self) -> Self {
        TensorSpec {
            shape: Shape::from_slice(&self.shape),
            dtype: self.dtype,
            level: self.level,
            layout: self.layout.clone(),
            vector_size: self.vector_size,
            fingerprint: self.fingerprint,
        }
    }
}

impl PartialEq for TensorSpec {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && self.dtype == other.dtype
            && self.level == other.level
            && self.vector_size == other.vector_size
            && self.shape == other.shape
            && self.layout == other.layout
    }
}

impl Eq for TensorSpec {}

impl Hash for TensorSpec {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

/// Why a tensor specification is invalid.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum TensorSpecError {
    /// The layout does not fit the shape.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A VRF tensor without a vector size.
    #[error("a VRF tensor needs a vector size such as `v8`")]
    MissingVectorSize,
    /// A vector size on a tensor outside the vector register file.
    #[error("only VRF tensors have a vector size; remove `v{lanes}` from this {level} tensor")]
    UnexpectedVectorSize {
        /// The tensor's level.
        level: Level,
        /// The vector size given.
        lanes: u32,
    },
    /// A vector size that is not a register width of the target.
    #[error("`v{lanes}` of {dtype} is not a vector register width of {target} ({allowed})")]
    VectorWidth {
        /// The vector size given.
        lanes: u32,
        /// The element type.
        dtype: Dtype,
        /// The target name.
        target: &'static str,
        /// The allowed sizes, formatted (or that there are none).
        allowed: String,
    },
    /// A VRF tensor whose registers would not be whole: its contiguous runs are not made of
    /// whole vectors.
    #[error(
        "this VRF tensor's contiguous runs hold {block} values, which is not a multiple of its \
         vector size {lanes}"
    )]
    PartialVectors {
        /// Values per contiguous run.
        block: u64,
        /// The vector size.
        lanes: u32,
    },
}

impl TensorSpec {
    /// Builds a tensor specification. `layout` must be canonical for `shape` (as every
    /// constructor of [`Layout`] guarantees); RF tensors ignore it.
    pub fn new(
        shape: Shape,
        dtype: Dtype,
        level: Level,
        layout: Layout,
        vector_size: Option<u32>,
        target: &Target,
    ) -> Result<TensorSpec, TensorSpecError> {
        let layout = if level.has_layout() { layout } else { Layout::empty() };
        let t = TensorSpec { shape, dtype, level, layout, vector_size, fingerprint: 0 }.sealed();
        t.check_vector_size(target)?;
        Ok(t)
    }

    /// This tensor with its fingerprint computed from its contents.
    fn sealed(mut self) -> TensorSpec {
        self.fingerprint = fingerprint(&(&self.shape, self.dtype, self.level, &self.layout, self.vector_size));
        self
    }

    fn check_vector_size(&self, target: &Target) -> Result<(), TensorSpecError> {
        match (self.level, self.vector_size) {
            (Level::VRF, None) => Err(TensorSpecError::MissingVectorSize),
            (Level::VRF, Some(lanes)) => {
                let size = self.dtype.size_bytes();
                if !target.vector_lanes(size).any(|l| l == lanes) {
                    let allowed: Vec<String> = target.vector_lanes(size).map(|l| format!("v{l}")).collect();
                    return Err(TensorSpecError::VectorWidth {
                        lanes,
                        dtype: self.dtype,
                        target: target.name,
                        allowed: if allowed.is_empty() {
                            "it has no vector registers".to_owned()
                        } else {
                            format!("allowed: {}", allowed.join(", "))
                        },
                    });
                }
                let block = self.layout.contiguous_block(&self.shape);
                if !block.is_multiple_of(u64::from(lanes)) {
                    return Err(TensorSpecError::PartialVectors { block, lanes });
                }
                Ok(())
            }
            (level, Some(lanes)) => Err(TensorSpecError::UnexpectedVectorSize { level, lanes }),
            (_, None) => Ok(()),
        }
    }

    /// The logical shape.
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The memory level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The layout (empty for RF tensors).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Lanes per vector register, for VRF tensors.
    pub fn vector_size(&self) -> Option<u32> {
        self.vector_size
    }

    /// Number of elements.
    pub fn volume(&self) -> u64 {
        volume(&self.shape)
    }

    /// Whether every dimension is 1.
    pub fn is_scalar(&self) -> bool {
        self.shape.iter().all(|&d| d == 1)
    }

    /// Whether the tensor occupies one dense block (RF tensors count as contiguous).
    pub fn is_contiguous(&self) -> bool {
        !self.level.has_layout() || self.layout.is_fully_contiguous()
    }

    /// Bytes of its elements: volume times element size (no padding to lines or registers; see
    /// [`TensorSpec::consumption`] for that).
    pub fn data_bytes(&self) -> u64 {
        self.volume() * u64::from(self.dtype.size_bytes())
    }

    /// Vector registers a VRF tensor occupies.
    pub fn vector_count(&self) -> u64 {
        self.vector_size.map_or(0, |lanes| self.volume() / u64::from(lanes))
    }

    /// Cache lines touched (paper §3), for addressed levels.
    pub fn cache_lines(&self, target: &Target) -> u64 {
        self.layout.cache_lines(&self.shape, self.dtype.size_bytes(), target.line_bytes)
    }

    /// Bytes this tensor consumes at its level when allocated there: whole registers for
    /// register files, whole cache lines otherwise.
    pub fn consumption(&self, target: &Target) -> u64 {
        let info = target.level(self.level);
        match self.level {
            Level::RF => self.volume() * u64::from(info.register_bytes),
            Level::VRF => self.vector_count() * u64::from(info.register_bytes),
            Level::L1 | Level::GL => self.cache_lines(target) * u64::from(target.line_bytes),
        }
    }

    /// The move cost `m(t)` of paper §3: cache lines times the level's weight, doubled when the
    /// tensor is not contiguous.
    pub fn move_cost(&self, target: &Target) -> u64 {
        let weight = target.level(self.level).line_cost;
        if weight == 0 {
            return 0;
        }
        let contiguity_factor = if self.is_contiguous() { 1 } else { 2 };
        self.cache_lines(target) * weight * contiguity_factor
    }

    /// The specification of a `tile_shape` tile of this tensor.
    pub fn tile(&self, tile_shape: &[u32], target: &Target) -> Result<TensorSpec, TensorSpecError> {
        let layout = if self.level.has_layout() { self.layout.tile(&self.shape, tile_shape)? } else { Layout::empty() };
        let t = self.with_shape_and_layout(tile_shape, layout);
        t.check_vector_size(target)?;
        Ok(t)
    }

    /// This tensor with another shape and layout, unchecked. Copies only the scalar fields: the
    /// search tiles tensors on every rewrite it applies.
    fn with_shape_and_layout(&self, shape: &[u32], layout: Layout) -> TensorSpec {
        TensorSpec {
            shape: Shape::from_slice(shape),
            dtype: self.dtype,
            level: self.level,
            layout,
            vector_size: self.vector_size,
            fingerprint: 0,
        }
        .sealed()
    }

    /// This tensor at another level with another dtype, layout and vector size (a move
    /// destination).
    pub fn moved(
        &self,
        dtype: Dtype,
        level: Level,
        layout: Layout,
        vector_size: Option<u32>,
        target: &Target,
    ) -> Result<TensorSpec, TensorSpecError> {
        TensorSpec::new(self.shape.clone(), dtype, level, layout, vector_size, target)
    }

    /// The view `map` of this tensor, with shape `view_shape`: the same memory seen with other
    /// dimensions (see [`crate::view`]).
    pub fn view(&self, view_shape: &[u32], map: &ViewMap, target: &Target) -> Result<TensorSpec, TensorSpecError> {
        let layout =
            if self.level.has_layout() { self.layout.view(&self.shape, view_shape, map)? } else { Layout::empty() };
        let t = self.with_shape_and_layout(view_shape, layout);
        t.check_vector_size(target)?;
        Ok(t)
    }

    /// Formats the layout the way Spec syntax writes it: `row_major`, `col_major` or
    /// `[0, 2, 1, 2 p16]`.
    pub fn layout_syntax(&self) -> String {
        if self.layout.is_row_major(&self.shape) {
            "row_major".to_owned()
        } else if self.layout.is_col_major(&self.shape) {
            "col_major".to_owned()
        } else {
            self.layout.to_string()
        }
    }
}

impl fmt::Display for TensorSpec {
    /// Formats as an operand in Spec syntax: `(f32, VRF, row_major, v8)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}", self.dtype, self.level)?;
        if self.level.has_layout() {
            write!(f, ", {}", self.layout_syntax())?;
        }
        if let Some(lanes) = self.vector_size {
            write!(f, ", v{lanes}")?;
        }
        if self.level.has_layout() && !self.layout.is_fully_contiguous() {
            write!(f, ", c{}", self.layout.contig())?;
        }
        f.write_str(")")
    }
}

/// The bytes `tensors` consume at each level (indexed by [`Level::index`]) when allocated
/// together, as a pipeline's temporaries are. Memory limits, peaks and memo horizons all count
/// temporaries through this one function, so they agree.
pub fn consumption_by_level(tensors: &[TensorSpec], target: &Target) -> [u64; LEVEL_COUNT] {
    let mut bytes = [0; LEVEL_COUNT];
    for t in tensors {
        bytes[t.level().index()] += t.consumption(target);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX2;

    fn t(shape: &[u32], level: Level, vs: Option<u32>) -> Result<TensorSpec, TensorSpecError> {
        TensorSpec::new(shape.into(), Dtype::F32, level, Layout::row_major(shape), vs, &X86_AVX2)
    }

    #[test]
    fn vector_size_rules() {
        assert!(t(&[1, 1, 16], Level::VRF, Some(8)).is_ok());
        assert!(matches!(t(&[1, 1, 16], Level::VRF, None), Err(TensorSpecError::MissingVectorSize)));
        assert!(matches!(t(&[1, 1, 16], Level::VRF, Some(16)), Err(TensorSpecError::VectorWidth { .. })));
        assert!(matches!(t(&[1, 1, 16], Level::L1, Some(8)), Err(TensorSpecError::UnexpectedVectorSize { .. })));
        let rows = t(&[1, 4, 16], Level::VRF, Some(8)).unwrap();
        assert!(matches!(rows.tile(&[1, 4, 4], &X86_AVX2), Err(TensorSpecError::PartialVectors { .. })));
        assert_eq!(rows.tile(&[1, 1, 8], &X86_AVX2).unwrap().vector_count(), 1);
    }

    #[test]
    fn consumption_and_cost() {
        let v = t(&[1, 6, 16], Level::VRF, Some(8)).unwrap();
        assert_eq!(v.consumption(&X86_AVX2), 12 * 32);
        let l1 = t(&[1, 6, 16], Level::L1, None).unwrap();
        assert_eq!(l1.consumption(&X86_AVX2), 6 * 64);
        assert_eq!(l1.move_cost(&X86_AVX2), 12);
        assert_eq!(l1.to_string(), "(f32, L1, row_major)");
        assert_eq!(v.to_string(), "(f32, VRF, row_major, v8)");
    }
}
