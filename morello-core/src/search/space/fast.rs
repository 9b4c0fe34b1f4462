//! The rules of [`super::SearchSpace::Fast`] (see the module's documentation): which moves
//! into memory and vector registers it keeps (none of a Conv's within global memory), how small
//! it tiles Matmuls in global memory and Convs' windows, and which Specs it solves outright.

use super::super::enumerate::REGISTER_BLOCK_ROWS;
use crate::dtype::Dtype;
use crate::layout::{Layout, PhysDim};
use crate::level::Level;
use crate::primitive::Primitive;
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use smallvec::SmallVec;

/// Whether the fast space keeps a move of `spec`'s operand `operand` to `level` in `layout`
/// and `dtype`.
pub(super) fn allows_move(
    spec: &Spec,
    operand: usize,
    level: Level,
    layout: &Layout,
    dtype: Dtype,
    target: &Target,
) -> bool {
    let source = spec.operand(operand);
    let writes = spec.logical().direction(operand).writes();
    let same_layout = layout.dims() == source.layout().dims();
    match (level, writes) {
        (Level::RF, _) => true,
        (Level::VRF, _) => keeps_dimension_order(source, layout),
        (Level::GL, true) => false,
        (Level::GL, false) if has_sliding_windows(spec) => false,
        (_, true) => same_layout && dtype == source.dtype(),
        (_, false) => {
            same_layout
                || strips_are_widest(layout, dtype, target)
                    && keeps_dimension_order(source, layout)
                    && (level == Level::GL || !transposes_vector_rows(source, layout, dtype, target))
        }
    }
}

/// The dimensions of `source` longer than 1 in the order `layout` nests them, outermost
/// first, packed strips aside.
fn dimension_order(source: &TensorSpec, layout: &Layout) -> SmallVec<[u8; 6]> {
    let long = |d: &&PhysDim| d.strip().is_none() && source.shape()[usize::from(d.logical)] > 1;
    layout.dims().iter().filter(long).map(|d| d.logical).collect()
}

/// Whether `layout` transposes `source` although its contiguous rows already hold a vector of
/// `dtype` (in the widest registers): such a copy into L1 gains the kernels nothing. Where
/// rows are shorter (a tile at the edge of a matrix whose size is not a multiple of the
/// vector), a transposed copy lets the kernels run along the longer dimension.
fn transposes_vector_rows(source: &TensorSpec, layout: &Layout, dtype: Dtype, target: &Target) -> bool {
    let from = dimension_order(source, source.layout());
    let widest = target.vector_lanes(dtype.size_bytes()).max().unwrap_or(1);
    let row = from.last().map_or(1, |&d| source.shape()[usize::from(d)]);
    dimension_order(source, layout) != from && row >= widest
}

/// Whether `layout` orders the dimensions of `source` longer than 1 as `source` does, or
/// with the innermost two swapped (a matrix transposed), packed strips aside. Other orders
/// move an outer dimension (a batch, a convolution's channels or image rows) inward.
fn keeps_dimension_order(source: &TensorSpec, layout: &Layout) -> bool {
    let (from, to) = (dimension_order(source, source.layout()), dimension_order(source, layout));
    if to == from {
        return true;
    }
    let mut transposed = from;
    let n = transposed.len();
    n >= 2 && {
        transposed.swap(n - 1, n - 2);
        to == transposed
    }
}

/// Whether every packed strip of `layout` is as wide as the widest vector register holds of
/// `dtype`, or wider (the panels of copies into global memory), or a bf16 pair.
fn strips_are_widest(layout: &Layout, dtype: Dtype, target: &Target) -> bool {
    let widest = target.vector_lanes(dtype.size_bytes()).max().unwrap_or(1);
    layout.dims().iter().filter_map(|d| d.strip()).all(|strip| strip >= widest || dtype == Dtype::Bf16 && strip == 2)
}

/// Whether the fast space keeps tiling `spec` to `tile`: see [`allows_matmul_tile`] and
/// [`allows_window_tile`]; other primitives are tiled freely.
pub(super) fn allows_tile(spec: &Spec, tile: &[u32], target: &Target) -> bool {
    match spec.logical().primitive() {
        Some(Primitive::Matmul { .. }) => allows_matmul_tile(spec, tile, target),
        Some(prim) if prim.has_sliding_windows() => allows_window_tile(spec, prim, tile),
        _ => true,
    }
}

/// Whether the fast space keeps tiling `spec`, a Spec of `prim`, to `tile` along its sliding
/// windows ([`Primitive::sliding_windows`]; a Conv's): filter rows and columns are tiled only
/// to 1, and once an operand has left global memory, output rows and columns only to
/// [`MAX_PIXEL_TILE`] or fewer (see the module's documentation).
fn allows_window_tile(spec: &Spec, prim: Primitive, tile: &[u32]) -> bool {
    let kept = |d: u8| tile[usize::from(d)] == spec.shape()[usize::from(d)];
    let in_gl = wholly_in_global_memory(spec);
    prim.sliding_windows(spec.shape().len()).into_iter().all(|(out, filter)| {
        (kept(filter) || tile[usize::from(filter)] == 1)
            && (in_gl || kept(out) || tile[usize::from(out)] <= MAX_PIXEL_TILE)
    })
}

/// The longest run of output rows or columns a Conv with an operand out of global memory is
/// tiled to. Neighbouring pixels share all but one column (or row) of their image windows, so
/// a tile of a few pixels reads its image once for all of them; tiles of up to 2 pixels lost
/// 0.2% on AVX2 (`Conv(1x3x5x7x9x3x3)`), up to 4 lost 0.5% on AVX-512 (`1x8x3x30x30x3x3`),
/// and up to 8 found the same costs as tiles of any length on the Convs measured (CHANGELOG).
const MAX_PIXEL_TILE: u32 = 8;

/// Whether every operand of `spec` is in global memory.
fn wholly_in_global_memory(spec: &Spec) -> bool {
    spec.operands().iter().all(|t| t.level() == Level::GL)
}

/// Whether the fast space solves `spec` outright, whatever its parent's budget: a Spec with
/// sliding windows (a Conv) and an operand out of global memory, whose windows and pixels are
/// then tiled little (see [`allows_window_tile`]). What lies below such a Spec is small enough
/// that searching it once in full costs less than refuting it under each of the many budgets
/// its parents ask with.
pub(super) fn solves_outright(spec: &Spec) -> bool {
    has_sliding_windows(spec) && !wholly_in_global_memory(spec)
}

/// Whether `spec` is of a primitive with sliding windows (a Conv).
fn has_sliding_windows(spec: &Spec) -> bool {
    spec.logical().primitive().is_some_and(Primitive::has_sliding_windows)
}

/// Whether the fast space keeps tiling the Matmul `spec` to `tile`: a Matmul with every operand
/// in global memory is not tiled along its rows, reduction or columns to fewer than
/// [`least_global_tile`] (a dimension already shorter keeps its size). A smaller tile of all
/// three operands fits in L1 together, where the same tiling is offered after moving them;
/// only rows tiled to a register block's count (`REGISTER_BLOCK_ROWS`) are kept at any size.
fn allows_matmul_tile(spec: &Spec, tile: &[u32], target: &Target) -> bool {
    if !wholly_in_global_memory(spec) {
        return true;
    }
    let least = least_global_tile(spec, target);
    // Dimensions 1 to 3 of a Matmul: rows, reduction, columns (0 is the batch). Rows tiled to
    // a register block's count stay: that is how a block reaches an output in memory.
    let register_block = |d: usize| d == 1 && REGISTER_BLOCK_ROWS.contains(&tile[d]);
    (1..=3).all(|d| tile[d] == spec.shape()[d] || tile[d] >= least || register_block(d))
}

/// The largest power of two `t` such that a `t×t×t` Matmul of `spec`'s dtypes holds its three
/// operands in L1 at once (64 for f32 in AVX-512's 48 KiB, 32 in AVX2's 32 KiB).
fn least_global_tile(spec: &Spec, target: &Target) -> u32 {
    let bytes_per_square: u64 = spec.operands().iter().map(|t| u64::from(t.dtype().size_bytes())).sum();
    let l1 = target.level(Level::L1).capacity_bytes;
    let mut t: u32 = 1;
    while u64::from(t * 2).pow(2) * bytes_per_square <= l1 {
        t *= 2;
    }
    t
}
