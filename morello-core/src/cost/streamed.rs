//! Streamed fills: the hardware cache fills of a Matmul's rhs that cost nothing, because L2
//! delivers them while the multiply-adds run.
//!
//! A register tile that runs over the whole of `k` (a 6×64 tile of the output summed in
//! registers and stored once) reads its rhs one 256-byte row per step of `k`; with the rhs in
//! 64-column panels (`[2, 1, 2 p64]`), the rows follow each other in memory and L2 streams them
//! into L1 while the core runs the step's 24 multiply-adds. On the Zen 4 development VM such
//! tiles ran at 97% of the FMA peak at 1024³ and 2048³, 7–9% faster than the 128-deep tiles
//! whose rhs block stays in L1, yet the model charged them 29% more: each step's fill paid its
//! 4 lines at L2's fill weight and again at L1's (`bench/README.md`, "Full-k register tiles").
//!
//! So a hardware fill ([`crate::imp::AllocNode::cache_miss`]) of the rhs into L1 is free
//! ([`streamed_fill`]) when the Spec is held in the innermost cache and the rhs tile is a
//! contiguous run of at least two rows of `k`: rows that follow each other in memory, which
//! is what lets the prefetchers stream them. A single row is not enough: tiles that read the
//! 256-byte rows of a row-major 1024-wide rhs in place, 4 KiB apart, ran 5% slower at 1024³
//! than the kernel cost model 15 chose, under a trial model that made those fills free too.
//! The lhs keeps its fill costs: its register tile reads one value from each of several rows
//! per step.
//!
//! The first reads from further out still pay: a Spec held in L2 inside one held in L3 or in
//! memory pays [`crate::cost::cache_fill`] for its lines as before. What the rhs's lines then
//! cost at least, for the search's bounds, is [`streamed_line_weight`], for an rhs with a tile
//! that can stream ([`may_stream`]). An rhs whose contiguous runs are pieces of single rows (a
//! tile of a wider row-major matrix) keeps the full bound. A line that streams still costs the
//! kernels something to read out of L1, which the bounds count for every input
//! (`search::l1_reads`). (On the AVX2 target the narrowed search of a 256³ GEMM solved 17.62
//! million Specs under model 16 with only the first of these, against model 15's 10.00
//! million; with both, 9.25 million.)

use crate::level::Level;
use crate::primitive::Primitive;
use crate::spec::LogicalSpec;
use crate::target::{Residency, Target};
use crate::tensor::TensorSpec;

/// The operand whose fills may stream: a Matmul's rhs.
const RHS: usize = 1;

/// The rhs's logical dimension along `k` (its shape is `[b, k, n]`).
const RHS_K: u8 = 1;

/// Whether a Spec of primitive `primitive` whose operand `operand` is `tensor` may fill
/// that operand (or the tiles of it its sub-Specs read in place) into L1 for free, in some
/// sub-Spec: the operand is a Matmul's rhs, and its contiguous runs hold several rows of `k`.
///
/// A streamed fill needs a contiguous tile of at least two rows of `k` ([`streamed_fill`]).
/// The Matmul rewrites make no views, so a sub-Spec reads the rhs in place only through tiles
/// of it, and a tile's contiguous innermost dimensions are among its parent's (tiling only
/// narrows them: [`crate::layout::Layout::tile`]). So when no innermost contiguous physical
/// dimension of `tensor` runs along `k` with more than one value (a tile of the rows of a
/// wider row-major matrix: each run is a piece of one row), no tile of it streams; its lines
/// stream only after a copy, which pays for reading them.
pub fn may_stream(primitive: Primitive, operand: usize, tensor: &TensorSpec) -> bool {
    is_matmul_rhs(primitive, operand) && runs_hold_rows_of_k(tensor)
}

/// Whether operand `operand` of a Spec of primitive `primitive` is a Matmul's rhs.
fn is_matmul_rhs(primitive: Primitive, operand: usize) -> bool {
    matches!(primitive, Primitive::Matmul { .. }) && operand == RHS
}

/// Whether the contiguous runs of the rhs `tensor` hold more than one value of `k`; never for
/// a tensor in registers (no layout), which no fill reads.
fn runs_hold_rows_of_k(tensor: &TensorSpec) -> bool {
    tensor.level().has_layout() && tensor.layout().values_per_run(tensor.shape(), RHS_K) > 1
}

/// Whether a hardware cache fill of operand `operand` of `spec`, held in `held`, into L1 is
/// streamed: free. See the module documentation.
pub fn streamed_fill(spec: &LogicalSpec, operand: usize, held: Residency, target: &Target) -> bool {
    let Some(primitive) = spec.primitive() else { return false };
    if held != target.innermost_residency() || held == Residency::Memory {
        return false;
    }
    // One contiguous run holding several rows of `k`: the bound's condition, on the whole tile.
    let rhs = &spec.operands()[operand];
    rhs.level() == Level::GL && rhs.is_contiguous() && may_stream(primitive, operand, rhs)
}

/// The least a line of a Matmul's rhs in global memory costs on its way into L1, for a Spec in
/// which `weight` is the least weight of a line ([`Target::least_line_cost`]), when some tile
/// of the rhs may stream ([`may_stream`]).
///
/// A line may be filled into L1 for free in a sub-Spec held in the innermost cache, after
/// paying the difference between the Spec's fill weight and that cache's on its way in
/// ([`crate::cost::cache_fill`]). Reading it out of L1 costs more, whichever way it came in
/// (the search's bounds count that separately).
pub fn streamed_line_weight(weight: u64, target: &Target) -> u64 {
    match target.innermost_residency() {
        Residency::Memory => weight,
        innermost => weight.saturating_sub(target.fill_line_cost(innermost)),
    }
}
