//! Rewrites: the actions that turn a Spec into a partial implementation (paper §2).
//!
//! One [`Action`] value describes one rewrite. [`Action::apply`] is the single definition used
//! by user schedules and by the search alike: it returns the new node with its children as
//! unscheduled Specs, or a typed reason why the rewrite does not apply.

mod moves;
mod select;
mod tile;
mod to_accum;

use crate::imp::ImplNode;
use crate::kernels::{KernelKind, KernelMismatch};
use crate::layout::Layout;
use crate::level::Level;
use crate::primitive::Primitive;
use crate::shape::{DisplayShape, Shape};
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::TensorSpecError;
use std::fmt;
use thiserror::Error;

/// One rewrite, fully parameterized.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Action {
    /// Loop over tiles of the given size along each Spec dimension. Tiling a reduction
    /// dimension (a `split`) requires an accumulating Spec.
    Tile {
        /// Tile size per Spec dimension.
        tile: Shape,
    },
    /// Move operand `operand` into a new tensor at `level` with `layout`.
    Move {
        /// Operand index.
        operand: usize,
        /// Destination level.
        level: Level,
        /// Destination layout (canonical for the operand's shape). When it has the same
        /// physical dimensions as the operand and the destination is hardware-managed, the move
        /// is a cache fill that keeps the operand's layout and emits no code.
        layout: Layout,
        /// Lanes per register for a VRF destination.
        vector_size: Option<u32>,
    },
    /// Rewrite a non-accumulating Spec into "initialize the output, then accumulate".
    ToAccum,
    /// Implement the Spec with a microkernel.
    Select(KernelKind),
}

/// Why a rewrite does not apply.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum RewriteError {
    /// The rewrite is not available for Compose Specs.
    #[error("{rewrite} cannot be applied to a Compose yet: pipelines can only be written and evaluated so far")]
    Compose {
        /// The rewrite.
        rewrite: &'static str,
    },
    /// A tile shape of the wrong rank.
    #[error("{primitive} has {expected} dimensions ({names}), but the tile has {found}")]
    TileRank {
        /// The primitive.
        primitive: Primitive,
        /// Required rank.
        expected: usize,
        /// Rank given.
        found: usize,
        /// Dimension names.
        names: String,
    },
    /// A tile size of 0.
    #[error("tile size 0 along {dim_name}; tile sizes start at 1")]
    TileZero {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
    },
    /// A tile larger than its dimension.
    #[error("tile size {tile} along {dim_name} is larger than the dimension ({size})")]
    TileLarger {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
        /// Tile size.
        tile: u32,
        /// Dimension size.
        size: u32,
    },
    /// A tile equal to the Spec's shape.
    #[error("the tile {tile} equals the Spec's shape, so there is nothing to loop over")]
    TileUnchanged {
        /// The tile, formatted.
        tile: String,
    },
    /// A dimension the computation needs whole.
    #[error("{primitive} needs all of {dim_name} at once, so it cannot be tiled along it")]
    Untileable {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
        /// The primitive.
        primitive: Primitive,
    },
    /// A tiled reduction dimension on a non-accumulating Spec.
    #[error(
        "tiling the reduction dimension {dim_name} of {primitive} would overwrite partial results; \
         apply `to_accum` first"
    )]
    ReductionNeedsAccum {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
        /// The primitive.
        primitive: Primitive,
    },
    /// An operand cannot be tiled that way.
    #[error("operand `{operand}` cannot be tiled to {shape}: {source}")]
    TileInvalid {
        /// Operand name.
        operand: String,
        /// The operand tile shape, formatted.
        shape: String,
        /// Why.
        source: TensorSpecError,
    },
    /// No operand with that index.
    #[error("{what} has {count} operands (indices 0..{count}); there is no operand {index}")]
    OperandOutOfRange {
        /// The primitive, or "this Compose".
        what: String,
        /// Index given.
        index: usize,
        /// Number of operands.
        count: usize,
    },
    /// A destination level a tensor cannot move to.
    #[error("operand `{operand}` is in {from}, which can move only to {allowed}; not to {to}")]
    MoveDestination {
        /// Operand name.
        operand: String,
        /// Source level.
        from: Level,
        /// Requested level.
        to: Level,
        /// Allowed levels, formatted.
        allowed: String,
    },
    /// A move that changes nothing.
    #[error("operand `{operand}` is already in {level} with that layout")]
    SelfMove {
        /// Operand name.
        operand: String,
        /// Its level.
        level: Level,
    },
    /// The destination tensor is invalid.
    #[error("cannot move operand `{operand}` there: {source}")]
    MoveInvalid {
        /// Operand name.
        operand: String,
        /// Why.
        source: TensorSpecError,
    },
    /// Not enough memory left at a level.
    #[error("needs {needed} bytes of {level}, but only {available} are available")]
    OutOfMemory {
        /// The level.
        level: Level,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// `to_accum` on a Spec without an accumulating variant.
    #[error("{what} has no accumulating variant")]
    NoAccumulatingVariant {
        /// The primitive.
        what: String,
    },
    /// A kernel that does not implement this Spec.
    #[error("{kernel} does not apply: {reason}")]
    KernelMismatch {
        /// The kernel.
        kernel: KernelKind,
        /// Why.
        reason: KernelMismatch,
    },
}

impl Action {
    /// Applies the rewrite to `spec`, returning the new node whose children are unscheduled.
    pub fn apply(&self, spec: &Spec, target: &Target) -> Result<ImplNode, RewriteError> {
        match self {
            Action::Tile { tile } => tile::apply(spec, tile, target),
            Action::Move { operand, level, layout, vector_size } => {
                moves::apply(spec, *operand, *level, layout, *vector_size, target)
            }
            Action::ToAccum => to_accum::apply(spec),
            Action::Select(kernel) => select::apply(spec, *kernel, target),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Tile { tile } => write!(f, "tile({})", DisplayShape(tile)),
            Action::Move { operand, level, layout, vector_size } => {
                write!(f, "move_param({operand}, {level}, {layout}")?;
                if let Some(v) = vector_size {
                    write!(f, ", v{v}")?;
                }
                f.write_str(")")
            }
            Action::ToAccum => f.write_str("to_accum"),
            Action::Select(k) => write!(f, "select({k})"),
        }
    }
}

pub(crate) fn operand_name(spec: &Spec, i: usize) -> String {
    spec.logical().operand_name(i).into_owned()
}

/// What a Spec is, for messages: its primitive, or "this Compose".
pub(crate) fn spec_name(spec: &Spec) -> String {
    spec.primitive().map_or_else(|| "this Compose".to_owned(), |p| p.to_string())
}
