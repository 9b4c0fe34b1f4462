//! Rewrites: the actions that turn a Spec into a partial implementation (paper §2).
//!
//! One [`Action`] value describes one rewrite. [`Action::apply`] is the single definition used
//! by user schedules and by the search alike: it returns the new node with its children as
//! unscheduled Specs, or a typed reason why the rewrite does not apply.

mod broadcast_first;
mod bufferize;
mod moves;
mod peel;
mod select;
mod softmax;
mod spatial_split;
mod spread;
mod temps;
mod tile;
mod to_accum;

pub use temps::TempDest;

use crate::dtype::Dtype;
use crate::imp::ImplNode;
use crate::kernels::{KernelKind, KernelMismatch};
use crate::layout::{Layout, LayoutError};
use crate::level::Level;
use crate::primitive::Primitive;
use crate::shape::Shape;
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::{TensorSpec, TensorSpecError};
use std::fmt;
use thiserror::Error;

/// One rewrite, fully parameterized.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Action {
    /// Loop over tiles of the given size along each Spec dimension. Tiling a reduction
    /// dimension (a `split`) requires an accumulating Spec. A parallel loop runs its
    /// iterations on several threads; its main body is serial (a nested parallel loop would
    /// run serially anyway), while its boundary regions, which run after the iterations on
    /// the calling thread, may have parallel loops of their own.
    Tile {
        /// Tile size per Spec dimension.
        tile: Shape,
        /// Whether iterations run in parallel.
        parallel: bool,
    },
    /// Loop over the contraction dimension of a MatmulAccum in tiles of `bands` values, one
    /// from each of `bands` equal bands (see [`crate::imp::LoopNode::spread`]).
    Spread {
        /// Values per tile, and bands.
        bands: u32,
    },
    /// Move operand `operand` into a new tensor at `level` with `layout` and `dtype`.
    Move {
        /// Operand index.
        operand: usize,
        /// Destination level.
        level: Level,
        /// Destination layout (canonical for the operand's shape). When it has the same
        /// physical dimensions as the operand, the dtype is unchanged and the destination is
        /// hardware-managed, the move is a cache fill that keeps the operand's layout and emits
        /// no code.
        layout: Layout,
        /// Lanes per register for a VRF destination.
        vector_size: Option<u32>,
        /// Destination dtype: the operand's, or a lossless widening of an input's.
        dtype: Dtype,
    },
    /// Rewrite a non-accumulating Spec into "initialize the output, then accumulate".
    ToAccum,
    /// Split the one reduction dimension of a non-accumulating Spec: the Spec over its first
    /// `size` values, then the accumulating variant over the rest (a pass over the output
    /// fewer than `to_accum` and a tiled reduction).
    Peel {
        /// Values of the reduction the first stage computes.
        size: u32,
    },
    /// Implement the Spec with a microkernel.
    Select(KernelKind),
    /// Split a Compose at stage `index`: a pipeline that computes the stages after `index`
    /// into a temporary, then the stages up to `index` from it.
    Bufferize {
        /// The stage whose first input becomes the temporary (0 = the head).
        index: usize,
        /// Where the temporary lives.
        dest: TempDest,
    },
    /// A ConvAccum with a 1×1 output: a loop over filter positions, each a MatmulAccum over
    /// views of the operands.
    SpatialSplit,
    /// DivideVecScalar as a pipeline: broadcast the scalars into a temporary, then DivideVec.
    BroadcastFirst {
        /// Where the broadcast temporary lives.
        dest: TempDest,
    },
    /// Softmax as SoftmaxDenominatorAndUnscaled into the output, then DivideVecScalar.
    ToSoftmaxParts {
        /// Where the denominators live.
        denom: TempDest,
    },
    /// Softmax as SoftmaxDenominatorAndMax, then SoftmaxComplete (recomputing exponentials).
    ToSoftmaxPartsRecompute {
        /// Where the maxima live.
        max: TempDest,
        /// Where the denominators live.
        denom: TempDest,
    },
    /// SoftmaxDenominatorAndMax as Max, then SoftmaxDenominator (two passes).
    ToMaxAndDenominator,
    /// SoftmaxDenominatorAndUnscaled as Max into a temporary, then
    /// SoftmaxDenominatorAndUnscaledFromMax.
    ToMaxAndUnscaled {
        /// Where the maxima live.
        max: TempDest,
    },
    /// SoftmaxDenominatorAndMax over chunks of `chunk` values (per-chunk maxima and
    /// denominators, which parallel tiling can compute concurrently), then merged with
    /// SoftmaxDenominatorAndMaxFromParts.
    ParallelSplit {
        /// Values per chunk along the scan dimension.
        chunk: u32,
        /// Where the per-chunk results live.
        partials: TempDest,
    },
}

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
            level: Level::L1,
            layout: tensor.layout().clone(),
            vector_size: None,
            dtype: tensor.dtype(),
        }
    }

    /// Applies the rewrite to `spec`, returning the new node whose children are unscheduled.
    pub fn apply(&self, spec: &Spec, target: &Target) -> Result<ImplNode, RewriteError> {
        match self {
            Action::Tile { tile, parallel } => tile::apply(spec, tile, *parallel, target),
            Action::Spread { bands } => spread::apply(spec, *bands, target),
            Action::Move { operand, level, layout, vector_size, dtype } => moves::apply(
                spec,
                *operand,
                moves::Destination { level, layout, vector_size: *vector_size, dtype: *dtype },
                target,
            ),
            Action::ToAccum => to_accum::apply(spec),
            Action::Peel { size } => peel::apply(spec, *size, target),
            Action::Select(kernel) => select::apply(spec, *kernel, target),
            Action::Bufferize { index, dest } => bufferize::apply(spec, *index, dest, target),
            Action::SpatialSplit => spatial_split::apply(spec, target),
            Action::BroadcastFirst { dest } => broadcast_first::apply(spec, dest, target),
            Action::ToSoftmaxParts { denom } => softmax::to_softmax_parts(spec, denom, target),
            Action::ToSoftmaxPartsRecompute { max, denom } => {
                softmax::to_softmax_parts_recompute(spec, max, denom, target)
            }
            Action::ToMaxAndDenominator => softmax::to_max_and_denominator(spec),
            Action::ToMaxAndUnscaled { max } => softmax::to_max_and_unscaled(spec, max, target),
            Action::ParallelSplit { chunk, partials } => softmax::parallel_split(spec, *chunk, partials, target),
        }
    }

    /// The rewrite's name in schedule syntax.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Tile { .. } => "tile",
            Action::Spread { .. } => "spread",
            Action::Move { .. } => "move_param",
            Action::ToAccum => "to_accum",
            Action::Peel { .. } => "peel",
            Action::Select(_) => "select",
            Action::Bufferize { .. } => "bufferize",
            Action::SpatialSplit => "spatial_split",
            Action::BroadcastFirst { .. } => "broadcast_first",
            Action::ToSoftmaxParts { .. } => "to_softmax_parts",
            Action::ToSoftmaxPartsRecompute { .. } => "to_softmax_parts_recompute",
            Action::ToMaxAndDenominator => "to_max_and_denominator",
            Action::ToMaxAndUnscaled { .. } => "to_max_and_unscaled",
            Action::ParallelSplit { .. } => "parallel_split",
        }
    }
}

/// Formats as a step of the schedule language, which parses back to the same rewrite.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Tile { tile, parallel } => {
                let sizes: Vec<String> = tile.iter().map(u32::to_string).collect();
                write!(f, "tile([{}]", sizes.join(", "))?;
                f.write_str(if *parallel { ", parallel)" } else { ")" })
            }
            Action::Move { operand, level, layout, vector_size, dtype } => {
                write!(f, "move_param({operand}, {level}, {layout}")?;
                if let Some(v) = vector_size {
                    write!(f, ", v{v}")?;
                }
                write!(f, ", {dtype}")?;
                if level.has_layout() && !layout.is_fully_contiguous() {
                    write!(f, ", c{}", layout.contig())?;
                }
                f.write_str(")")
            }
            Action::Spread { bands } => write!(f, "spread({bands})"),
            Action::Peel { size } => write!(f, "peel({size})"),
            Action::Select(k) => write!(f, "select({k})"),
            Action::Bufferize { index, dest } => write!(f, "bufferize({index}, {dest})"),
            Action::BroadcastFirst { dest: d }
            | Action::ToSoftmaxParts { denom: d }
            | Action::ToMaxAndUnscaled { max: d } => write!(f, "{}({d})", self.name()),
            Action::ToSoftmaxPartsRecompute { max, denom } => write!(f, "{}(({max}), ({denom}))", self.name()),
            Action::ParallelSplit { chunk, partials } => write!(f, "parallel_split({chunk}, {partials})"),
            Action::ToAccum | Action::SpatialSplit | Action::ToMaxAndDenominator => f.write_str(self.name()),
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
