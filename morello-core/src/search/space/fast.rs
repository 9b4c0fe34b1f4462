//! The rules of [`super::SearchSpace::Fast`] (see the module's documentation): which moves
//! into memory and vector registers it keeps.

use crate::dtype::Dtype;
use crate::layout::{Layout, PhysDim};
use crate::level::Level;
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
