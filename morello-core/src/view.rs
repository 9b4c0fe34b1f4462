//! Views: a tensor seen with other dimensions, without moving data.
//!
//! A [`ViewMap`] says how the coordinates of a view map to the coordinates of the tensor it
//! views: each source dimension is a sum of view dimensions times constant strides. Three
//! shapes of view occur in rewrites:
//!
//! * renaming and dropping unit dimensions (Conv with a 1×1 output seen as a Matmul: spatial
//!   split);
//! * adding unit dimensions (per-chunk partial results seen with a unit scan dimension);
//! * splitting one dimension into an outer and an inner one (a softmax row seen as chunks: the
//!   parallel split).

use crate::index::IndexArith;
use smallvec::SmallVec;

/// One term of a source coordinate: view dimension `dim` times `stride`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ViewTerm {
    /// The view dimension.
    pub dim: u8,
    /// Its stride in the source dimension.
    pub stride: u32,
}

/// How view coordinates map to source coordinates. See the module documentation.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ViewMap {
    /// Per source dimension, the view dimensions (with strides) whose sum it is. A source
    /// dimension with no terms is always 0 (it has extent 1).
    pub sources: SmallVec<[SmallVec<[ViewTerm; 2]>; 6]>,
}

impl ViewMap {
    /// The identity on `rank` dimensions.
    pub fn identity(rank: usize) -> ViewMap {
        ViewMap { sources: (0..rank).map(|d| smallvec::smallvec![ViewTerm { dim: d as u8, stride: 1 }]).collect() }
    }

    /// A view whose dimension `view_of[d]` (if any) is source dimension `d`. Source dimensions
    /// without a view dimension must have extent 1; view dimensions not named must too.
    pub fn renaming(view_of: &[Option<u8>]) -> ViewMap {
        ViewMap {
            sources: view_of.iter().map(|v| v.map(|dim| ViewTerm { dim, stride: 1 }).into_iter().collect()).collect(),
        }
    }

    /// Source dimension `dim` of a rank-`rank` tensor split into an outer view dimension `dim`
    /// (stride `inner`) and an inner view dimension `dim + 1`; later dimensions shift by one.
    pub fn split(rank: usize, dim: usize, inner: u32) -> ViewMap {
        let sources = (0..rank)
            .map(|d| match d.cmp(&dim) {
                std::cmp::Ordering::Less => smallvec::smallvec![ViewTerm { dim: d as u8, stride: 1 }],
                std::cmp::Ordering::Equal => smallvec::smallvec![
                    ViewTerm { dim: d as u8, stride: inner },
                    ViewTerm { dim: d as u8 + 1, stride: 1 }
                ],
                std::cmp::Ordering::Greater => smallvec::smallvec![ViewTerm { dim: d as u8 + 1, stride: 1 }],
            })
            .collect();
        ViewMap { sources }
    }

    /// The identity on `rank` dimensions with dimension `dim` stretched: its view coordinate
    /// `x` is source coordinate `stride · x` (the tiles of a spread loop).
    pub fn stretched(rank: usize, dim: usize, stride: u32) -> ViewMap {
        let mut map = ViewMap::identity(rank);
        map.sources[dim][0].stride = stride;
        map
    }

    /// A unit view dimension inserted at position `at` of a rank-`rank` tensor.
    pub fn insert_unit(rank: usize, at: usize) -> ViewMap {
        let view_of: Vec<Option<u8>> = (0..rank).map(|d| Some(if d < at { d as u8 } else { d as u8 + 1 })).collect();
        ViewMap::renaming(&view_of)
    }

    /// The source coordinate of view coordinate `coord`.
    pub fn apply<E: IndexArith>(&self, coord: &[E]) -> SmallVec<[E; 6]> {
        self.sources
            .iter()
            .map(|terms| {
                terms.iter().fold(E::constant(0), |acc, t| {
                    acc.add(coord[usize::from(t.dim)].clone().mul_const(u64::from(t.stride)))
                })
            })
            .collect()
    }

    /// The map of `inner` (a view of this map's view) straight onto this map's source.
    pub fn compose(&self, inner: &ViewMap) -> ViewMap {
        let sources = self
            .sources
            .iter()
            .map(|terms| {
                let mut out: SmallVec<[ViewTerm; 2]> = SmallVec::new();
                for t in terms {
                    for u in &inner.sources[usize::from(t.dim)] {
                        out.push(ViewTerm { dim: u.dim, stride: t.stride * u.stride });
                    }
                }
                out
            })
            .collect();
        ViewMap { sources }
    }

    /// Whether this is the identity.
    pub fn is_identity(&self) -> bool {
        *self == ViewMap::identity(self.sources.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_maps_chunks_back() {
        // A row of 12 seen as 3 chunks of 4: (2, 1) is element 9.
        let m = ViewMap::split(2, 1, 4);
        assert_eq!(&m.apply::<u64>(&[5, 2, 1])[..], &[5, 9]);
        let unit = ViewMap::insert_unit(2, 2);
        assert_eq!(&unit.apply::<u64>(&[5, 2, 0])[..], &[5, 2]);
        let both = m.compose(&ViewMap::identity(3));
        assert_eq!(both, m);
    }

    #[test]
    fn renaming_drops_and_reorders() {
        // Filters [f, c, 1, 1] seen as [1, c, f].
        let m = ViewMap::renaming(&[Some(2), Some(1), None, None]);
        assert_eq!(&m.apply::<u64>(&[0, 3, 7])[..], &[7, 3, 0, 0]);
    }
}
