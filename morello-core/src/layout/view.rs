//! The layout of a view of a tensor (see [`crate::view`]).

use super::{Extents, Layout, LayoutError, PhysDim, PhysKind, canonicalize};
use crate::view::ViewMap;
use smallvec::SmallVec;

impl Layout {
    /// The layout of the view `map` (with shape `view_shape`) of a tensor of `shape` laid out
    /// this way: the same memory order, described in the view's dimensions.
    ///
    /// Renamed dimensions keep their physical dimensions. A dimension split into an outer and
    /// an inner part keeps its physical order: the innermost pieces covering the inner extent
    /// go to the inner dimension, a dynamic piece straddling the boundary is cut in two, and a
    /// strip straddling it is an error.
    pub fn view(&self, shape: &[u32], view_shape: &[u32], map: &ViewMap) -> Result<Layout, LayoutError> {
        let extents = self.extents(shape);
        let mut dims: SmallVec<[PhysDim; 6]> = SmallVec::new();
        let mut new_extents: Extents = SmallVec::new();
        let mut contig = self.contig();
        let first_contiguous = self.dims.len() - usize::from(self.contig);
        // Per physical dimension (in order), the pieces it becomes: (view dim, kind, extent).
        let mut pieces: Vec<SmallVec<[(u8, PhysKind, u32); 2]>> = vec![SmallVec::new(); self.dims.len()];
        for (d, terms) in map.sources.iter().enumerate() {
            let mine: Vec<usize> = (0..self.dims.len()).filter(|&i| usize::from(self.dims[i].logical) == d).collect();
            match terms.as_slice() {
                [] => {
                    if let Some(&i) = mine.first() {
                        return Err(LayoutError::MissingDim { dim: d as u8, size: extents[i] });
                    }
                }
                [t] => {
                    for &i in &mine {
                        pieces[i].push((t.dim, self.dims[i].kind, extents[i]));
                    }
                }
                [outer, inner] if inner.stride == 1 && outer.stride == view_shape[usize::from(inner.dim)] => {
                    let mut remaining = outer.stride;
                    for &i in mine.iter().rev() {
                        let (kind, e) = (self.dims[i].kind, extents[i]);
                        if remaining == 1 {
                            pieces[i].push((outer.dim, kind, e));
                        } else if remaining.is_multiple_of(e) {
                            pieces[i].push((inner.dim, kind, e));
                            remaining /= e;
                        } else if e.is_multiple_of(remaining) && !matches!(kind, PhysKind::OddEven(_)) {
                            pieces[i].push((outer.dim, PhysKind::Dynamic, e / remaining));
                            pieces[i].push((inner.dim, PhysKind::Dynamic, remaining));
                            remaining = 1;
                            if i >= first_contiguous {
                                contig += 1;
                            }
                        } else {
                            return Err(LayoutError::TileCrossesStrip { dim: d as u8, strip: e, tile: outer.stride });
                        }
                    }
                }
                _ => unreachable!("views rename, add unit dimensions or split one dimension in two"),
            }
        }
        for p in pieces.iter().flatten() {
            let (dim, kind, extent) = *p;
            dims.push(PhysDim { logical: dim, kind });
            new_extents.push(extent);
        }
        debug_assert!(
            (0..view_shape.len()).all(|j| {
                let covered: u64 = dims
                    .iter()
                    .zip(&new_extents)
                    .filter(|(p, _)| usize::from(p.logical) == j)
                    .map(|(_, &e)| u64::from(e))
                    .product();
                covered == u64::from(view_shape[j])
            }),
            "view shape disagrees with the viewed layout"
        );
        Ok(canonicalize(&dims, &new_extents, contig))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::coordinates;

    /// Every view coordinate has the same buffer offset through the view's layout as through
    /// the source layout at the mapped coordinate.
    fn assert_same_offsets(layout: &Layout, shape: &[u32], view_shape: &[u32], map: &ViewMap) {
        let v = layout.view(shape, view_shape, map).unwrap();
        for c in coordinates(view_shape) {
            let c: Vec<u64> = c.iter().map(|&x| u64::from(x)).collect();
            let source = map.apply::<u64>(&c);
            assert_eq!(v.buffer_index::<u64>(view_shape, &c), layout.buffer_index::<u64>(shape, &source), "{c:?}");
        }
    }

    #[test]
    fn split_rows_into_chunks() {
        let shape = [4, 64];
        assert_same_offsets(&Layout::row_major(&shape), &shape, &[4, 4, 16], &ViewMap::split(2, 1, 16));
        assert_same_offsets(&Layout::col_major(&shape), &shape, &[4, 4, 16], &ViewMap::split(2, 1, 16));
        let packed =
            Layout::new(&[PhysDim::dynamic(1), PhysDim::dynamic(0), PhysDim::packed(1, 8)], None, &shape).unwrap();
        assert_same_offsets(&packed, &shape, &[4, 4, 16], &ViewMap::split(2, 1, 16));
        assert_same_offsets(&packed, &shape, &[4, 16, 4], &ViewMap::split(2, 1, 4));
    }

    #[test]
    fn renaming_views_conv_operands_as_matrices() {
        let filters = [8, 3, 1, 1];
        let l = Layout::row_major(&filters);
        let map = ViewMap::renaming(&[Some(2), Some(1), None, None]);
        assert_same_offsets(&l, &filters, &[1, 3, 8], &map);
        assert!(l.view(&filters, &[1, 3, 8], &map).unwrap().is_col_major(&[1, 3, 8]));
    }
}
