//! Rewrites: the actions that turn a Spec into a partial implementation (paper §2).
//!
//! One [`Action`] value describes one rewrite. [`Action::apply`] is the single definition used
//! by user schedules and by the search alike: it returns the new node with its children as
//! unscheduled Specs, or a typed reason why the rewrite does not apply.

mod broadcast_first;
mod bufferize;
pub mod form;
mod moves;
mod peel;
mod select;
mod softmax;
mod spatial_split;
mod spread;
pub mod table;
mod temps;
mod tile;
mod to_accum;

pub use moves::MoveDest;
pub use temps::TempDest;

use crate::dtype::Dtype;
use crate::imp::ImplNode;
use crate::kernels::{KernelKind, KernelMismatch};
use crate::layout::LayoutError;
use crate::level::Level;
use crate::primitive::Primitive;
use crate::shape::Shape;
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::{TensorSpec, TensorSpecError};
use form::{Form, Mapper, Notation};
use std::fmt;
use thiserror::Error;

table::rewrite_table!(define_rewrites);
use form::define_rewrites;

/// Arguments resolved for one Spec: the form the search applies and compares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Resolved {}

impl Form for Resolved {
    type Count = u32;
    type Operand = usize;
    type Stage = usize;
    type Tile = Shape;
    type Parallel = bool;
    type Kernel = KernelKind;
    type Temp = TempDest;
    type GroupedTemp = TempDest;
    type MoveDest = MoveDest;
}

/// One rewrite, fully parameterized.
pub type Action = Rewrite<Resolved>;

/// Why a rewrite does not apply.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum RewriteError {
    /// The rewrite is not available for Compose Specs.
    #[error("{rewrite} does not apply to a Compose; split it into stages with `bufferize` first")]
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
         apply `to_accum` or `peel` first"
    )]
    ReductionNeedsAccum {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
        /// The primitive.
        primitive: Primitive,
    },
    /// `peel` on a Spec that already accumulates.
    #[error("{primitive} already accumulates, so there is no first stage to peel; tile its reduction with `split`")]
    PeelAccumulating {
        /// The primitive.
        primitive: Primitive,
    },
    /// `peel` on a primitive without exactly one reduction dimension.
    #[error("peel splits one reduction dimension, but {primitive} has {count}")]
    PeelReductions {
        /// The primitive.
        primitive: Primitive,
        /// Its reduction dimensions.
        count: usize,
    },
    /// A peel that would leave a stage empty.
    #[error("peel size {size} along {dim_name} leaves a stage empty; it must be 1 to {last} (the dimension is {extent})", last = extent.saturating_sub(1))]
    PeelSize {
        /// The reduction dimension's name.
        dim_name: String,
        /// The size given.
        size: u32,
        /// The dimension's extent.
        extent: u32,
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
    /// The rewrite applies to other primitives.
    #[error("{rewrite} applies to {expected}, not to {found}")]
    WrongPrimitive {
        /// The rewrite.
        rewrite: &'static str,
        /// What it applies to.
        expected: &'static str,
        /// What the Spec is.
        found: String,
    },
    /// Parallelism requested on a serial Spec.
    #[error("the Spec is serial, so {rewrite} cannot run anything in parallel")]
    SerialOnly {
        /// The rewrite.
        rewrite: &'static str,
    },
    /// A parallel loop over an operand held in registers.
    #[error("operand `{operand}` is in {level}; registers belong to one thread, so the loop cannot be parallel")]
    ParallelInRegisters {
        /// Operand name.
        operand: String,
        /// Its level.
        level: Level,
    },
    /// A parallel loop along a reduction dimension (iterations would race on the output).
    #[error("a parallel loop along the reduction dimension {dim_name} would race on the output; tile it serially")]
    ParallelReduction {
        /// Dimension index.
        dim: usize,
        /// Dimension name.
        dim_name: String,
    },
    /// A dtype change that is not a lossless widening.
    #[error(
        "operand `{operand}` is {from}; a move can only widen it losslessly (bf16 → f32, wider integers), not to {to}"
    )]
    NotUpcast {
        /// Operand name.
        operand: String,
        /// Its dtype.
        from: Dtype,
        /// The requested dtype.
        to: Dtype,
    },
    /// A dtype change of an operand the Spec writes (the store would narrow it).
    #[error("operand `{operand}` is written, so its dtype cannot change (storing back would narrow it)")]
    UpcastWritten {
        /// Operand name.
        operand: String,
    },
    /// The Spec after the rewrite would mix dtypes its primitive does not accept.
    #[error("{0}")]
    Dtypes(String),
    /// A Compose stage index out of range.
    #[error("this Compose has {stages} stages, so it can be split after stages 0..{last}; not at {index}")]
    StageOutOfRange {
        /// Index given.
        index: usize,
        /// Number of stages.
        stages: usize,
        /// One past the largest valid index.
        last: usize,
    },
    /// A temporary tensor that cannot be placed as requested.
    #[error("the {what} temporary cannot be placed there: {source}")]
    TempInvalid {
        /// Which temporary.
        what: &'static str,
        /// Why.
        source: TensorSpecError,
    },
    /// A temporary's layout does not fit its shape.
    #[error("the {what} temporary's layout does not fit its shape {shape}: {source}")]
    TempLayout {
        /// Which temporary.
        what: &'static str,
        /// The temporary's shape, formatted.
        shape: String,
        /// Why.
        source: LayoutError,
    },
    /// An operand cannot be viewed as the rewrite needs.
    #[error("operand `{operand}` cannot be viewed as {shape}: {source}")]
    ViewInvalid {
        /// Operand name.
        operand: String,
        /// The view's shape, formatted.
        shape: String,
        /// Why.
        source: TensorSpecError,
    },
    /// A Spec shape the rewrite does not handle.
    #[error("{rewrite} needs {requirement}")]
    Shape {
        /// The rewrite.
        rewrite: &'static str,
        /// What it needs, in words.
        requirement: String,
    },
}

impl Action {
    /// The cache fill of operand `operand`, the tensor `tensor`, into L1: the same layout and
    /// dtype, no code emitted.
    pub fn cache_fill(operand: usize, tensor: &TensorSpec) -> Action {
        Action::Move {
            operand,
            dest: MoveDest {
                level: Level::L1,
                layout: tensor.layout().clone(),
                vector_size: None,
                dtype: tensor.dtype(),
            },
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
