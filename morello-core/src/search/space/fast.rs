//! The rules of [`super::SearchSpace::Fast`] (see the module's documentation): which moves
//! into memory and vector registers it keeps, and how small it tiles Matmuls in global memory.

use super::super::enumerate::REGISTER_BLOCK_ROWS;
use crate::dtype::Dtype;
use crate::layout::{Layout, PhysDim};
use crate::level::Level;
use crate::primitive::Primitive;
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use smallvec::SmallVec;

/// Whether the fast space keeps a move of `source` (an operand the Spec writes, if `writes`)
/// to `level` in `layout` and `dtype`.
pub(super) fn allows_move(
    source: &TensorSpec,
    writes: bool,
    level: Level,
    layout: &Layout,
    dtype: Dtype,
    target: &Target,
) -> bool {
    let same_layout = layout.dims() == source.layout().dims();
    match (level, writes) {
        (Level::RF, _) => true,
        (Level::VRF, _) => keeps_dimension_order(source, layout),
        (Level::GL, true) => false,
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

/// Whether the fast space keeps tiling `spec` to `tile`: a Matmul with every operand in global
/// memory is not tiled along its rows, reduction or columns to fewer than
/// [`least_global_tile`] (a dimension already shorter keeps its size). A smaller tile of all
/// three operands fits in L1 together, where the same tiling is offered after moving them;
/// only rows tiled to a register block's count (`REGISTER_BLOCK_ROWS`) are kept at any size.
pub(super) fn allows_tile(spec: &Spec, tile: &[u32], target: &Target) -> bool {
    if !matches!(spec.logical().primitive(), Some(Primitive::Matmul { .. }))
        || spec.operands().iter().any(|t| t.level() != Level::GL)
    {
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
