//! Every rewrite, declared once.
//!
//! Each entry names the rewrite's variant, its name in schedule syntax, the
//! [`PartialImpl`](crate::schedule::PartialImpl) method that applies it, the function that
//! applies it to a Spec, and its arguments, each with a [kind](super::form::kind) and the words
//! a parse error uses for it. The layers that need one arm per rewrite generate it from this
//! table: the [`Rewrite`](super::Rewrite) enum with its name, printer and argument mapping
//! (`rewrite.rs`), the schedule parser and its error locations (`syntax/schedule/written.rs`)
//! and the schedule methods (`schedule/methods.rs`). The database's encoding is a form of the
//! same enum (`db/stored.rs`), so the order of the entries is the order of its variant tags:
//! new rewrites go at the end.

/// Calls `$generate! { entries }` with the table of rewrites.
macro_rules! rewrite_table {
    ($generate:ident) => {
        $generate! {
            /// Loop over tiles of the given size along each Spec dimension. Tiling a reduction
            /// dimension (a `split`) requires an accumulating Spec. A parallel loop runs its
            /// iterations on several threads; its main body is serial (a nested parallel loop
            /// would run serially anyway), while its boundary regions, which run after the
            /// iterations on the calling thread, may have parallel loops of their own.
            Tile "tile" tile_loop => tile::apply {
                /// Tile size per Spec dimension.
                tile: Tile "tile sizes",
                /// Whether iterations run in parallel.
                parallel: Parallel "`parallel`",
            }
            /// Move an operand into a new tensor. When the destination has the operand's
            /// physical dimensions and dtype and is hardware-managed, the move is a cache fill
            /// that keeps the operand's layout and emits no code.
            Move "move_param" move_to => moves::apply {
                /// Operand index.
                operand: Operand "an operand index",
                /// Where the operand goes.
                dest: MoveDest "a destination level",
            }
            /// Rewrite a non-accumulating Spec into "initialize the output, then accumulate".
            ToAccum "to_accum" to_accum => to_accum::apply {}
            /// Implement the Spec with a microkernel.
            Select "select" select => select::apply {
                /// The kernel.
                kernel: Kernel "a kernel name",
            }
            /// Split a Compose at stage `index`: a pipeline that computes the stages after
            /// `index` into a temporary, then the stages up to `index` from it.
            Bufferize "bufferize" bufferize => bufferize::apply {
                /// The stage whose first input becomes the temporary (0 = the head).
                index: Stage "a Compose stage index",
                /// Where the temporary lives.
                dest: Temp "a destination level",
            }
            /// A ConvAccum with a 1×1 output: a loop over filter positions, each a MatmulAccum
            /// over views of the operands.
            SpatialSplit "spatial_split" spatial_split => spatial_split::apply {}
            /// DivideVecScalar as a pipeline: broadcast the scalars into a temporary, then
            /// DivideVec.
            BroadcastFirst "broadcast_first" broadcast_first => broadcast_first::apply {
                /// Where the broadcast temporary lives.
                dest: Temp "a destination level",
            }
            /// Softmax as SoftmaxDenominatorAndUnscaled into the output, then
            /// DivideVecScalar.
            ToSoftmaxParts "to_softmax_parts" to_softmax_parts => softmax::to_softmax_parts {
                /// Where the denominators live.
                denom: Temp "a destination level",
            }
            /// Softmax as SoftmaxDenominatorAndMax, then SoftmaxComplete (recomputing
            /// exponentials).
            ToSoftmaxPartsRecompute "to_softmax_parts_recompute" to_softmax_parts_recompute
                => softmax::to_softmax_parts_recompute {
                /// Where the maxima live.
                max: GroupedTemp "the maxima's destination",
                /// Where the denominators live.
                denom: GroupedTemp "the denominators' destination",
            }
            /// SoftmaxDenominatorAndMax as Max, then SoftmaxDenominator (two passes).
            ToMaxAndDenominator "to_max_and_denominator" to_max_and_denominator
                => softmax::to_max_and_denominator {}
            /// SoftmaxDenominatorAndUnscaled as Max into a temporary, then
            /// SoftmaxDenominatorAndUnscaledFromMax.
            ToMaxAndUnscaled "to_max_and_unscaled" to_max_and_unscaled => softmax::to_max_and_unscaled {
                /// Where the maxima live.
                max: Temp "a destination level",
            }
            /// SoftmaxDenominatorAndMax over chunks of `chunk` values (per-chunk maxima and
            /// denominators, which parallel tiling can compute concurrently), then merged with
            /// SoftmaxDenominatorAndMaxFromParts.
            ParallelSplit "parallel_split" parallel_split => softmax::parallel_split {
                /// Values per chunk along the scan dimension.
                chunk: Count "the chunk size",
                /// Where the per-chunk results live.
                partials: Temp "a destination level",
            }
            /// Loop over the contraction dimension of a MatmulAccum in tiles of `bands` values,
            /// one from each of `bands` equal bands (see [`crate::imp::LoopNode::spread`]).
            Spread "spread" spread => spread::apply {
                /// Values per tile, and bands.
                bands: Count "the number of bands",
            }
            /// Split the one reduction dimension of a non-accumulating Spec: the Spec over its
            /// first `size` values, then the accumulating variant over the rest (a pass over
            /// the output fewer than `to_accum` and a tiled reduction).
            Peel "peel" peel => peel::apply {
                /// Values of the reduction the first stage computes.
                size: Count "the number of reduction values the first stage computes",
            }
        }
    };
}

pub(crate) use rewrite_table;
