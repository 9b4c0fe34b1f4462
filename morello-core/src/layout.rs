//! Data layouts: how a tensor's logical coordinates map to offsets in its buffer (paper §2.4.2).
//!
//! A [`Layout`] is a list of *physical dimensions*, slowest-varying first. Each physical
//! dimension belongs to one logical dimension and is either the *dynamic* part of it ("whatever
//! remains") or a fixed-size *strip* (packing). Row-major is one dynamic physical dimension per
//! logical dimension in order; column-major reverses the order; a Goto-style packed matrix
//! `[0, 2, 1, 2 p16]` puts 16-wide column strips innermost. An *odd-even* strip (`2 oe16`)
//! also permutes the values inside each strip with the paper's
//! `σ(s, x) = 2·(x mod s/2) + ⌊2x/s⌋`, interleaving its two halves so that a vector of `s/2`
//! lanes can be split into even and odd lanes.
//!
//! A layout also carries a *contiguity* count: how many innermost physical dimensions are known
//! to be adjacent in memory (paper §2.4.3). Fresh buffers are fully contiguous; tiling reduces
//! contiguity through [`Layout::tile`].
//!
//! Layouts are always stored in canonical form for the shape of the tensor they describe:
//! physical dimensions of extent 1 are dropped, a logical dimension's outermost physical
//! dimension is dynamic and its inner ones are strips of their extent, and adjacent pieces of one
//! logical dimension that are contiguous with each other are merged. Two tensors whose buffers
//! behave identically therefore have equal layouts, which is what makes Specs canonical.

mod view;

use crate::index::IndexArith;
use smallvec::SmallVec;
use std::fmt;
use thiserror::Error;

/// One physical dimension of a layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct PhysDim {
    /// The logical dimension this physical dimension indexes.
    pub logical: u8,
    /// Which part of the logical dimension it is.
    pub kind: PhysKind,
}

/// The part of a logical dimension a physical dimension holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum PhysKind {
    /// The outermost part: whatever the strips inside it leave.
    Dynamic,
    /// A strip of this many consecutive values.
    Packed(u32),
    /// A strip of this many values, interleaved by the paper's σ (the size is even).
    OddEven(u32),
}

impl PhysDim {
    /// The dynamic physical dimension of logical dimension `logical`.
    pub fn dynamic(logical: u8) -> Self {
        PhysDim { logical, kind: PhysKind::Dynamic }
    }

    /// A strip of `size` values of logical dimension `logical`.
    pub fn packed(logical: u8, size: u32) -> Self {
        PhysDim { logical, kind: PhysKind::Packed(size) }
    }

    /// An odd-even strip of `size` values of logical dimension `logical`.
    pub fn odd_even(logical: u8, size: u32) -> Self {
        PhysDim { logical, kind: PhysKind::OddEven(size) }
    }

    /// The strip size, for packed and odd-even strips.
    pub fn strip(self) -> Option<u32> {
        match self.kind {
            PhysKind::Dynamic => None,
            PhysKind::Packed(s) | PhysKind::OddEven(s) => Some(s),
        }
    }
}

impl fmt::Display for PhysDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PhysKind::Dynamic => write!(f, "{}", self.logical),
            PhysKind::Packed(s) => write!(f, "{} p{s}", self.logical),
            PhysKind::OddEven(s) => write!(f, "{} oe{s}", self.logical),
        }
    }
}

/// Why a layout is not valid for a shape, or cannot follow a tiling.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum LayoutError {
    /// A physical dimension names a logical dimension the tensor does not have.
    #[error("layout names dimension {dim}, but the tensor has only {rank} dimensions")]
    DimOutOfRange {
        /// The offending logical dimension.
        dim: u8,
        /// The tensor's rank.
        rank: usize,
    },
    /// A logical dimension larger than 1 is missing from the layout.
    #[error("layout does not mention dimension {dim} (size {size})")]
    MissingDim {
        /// The missing logical dimension.
        dim: u8,
        /// Its size.
        size: u32,
    },
    /// A strip smaller than 2.
    #[error("strip size {strip} of dimension {dim} must be at least 2")]
    StripTooSmall {
        /// The logical dimension.
        dim: u8,
        /// The strip size.
        strip: u32,
    },
    /// A logical dimension's dynamic part is not its outermost physical dimension.
    #[error("dimension {dim} has a dynamic part inside one of its strips; the dynamic part must come first")]
    DynamicNotOutermost {
        /// The logical dimension.
        dim: u8,
    },
    /// A logical dimension appears twice without a strip.
    #[error("dimension {dim} appears twice without a strip size")]
    DuplicateDynamic {
        /// The logical dimension.
        dim: u8,
    },
    /// Strip sizes do not tile a dimension exactly.
    #[error("strips of total size {strips} do not evenly divide dimension {dim} of size {size}")]
    StripDoesNotDivide {
        /// The logical dimension.
        dim: u8,
        /// Product of the dimension's strip sizes.
        strips: u64,
        /// The dimension's size.
        size: u32,
    },
    /// A contiguity count larger than the number of physical dimensions.
    #[error("contiguity c{contig} exceeds the layout's {dims} physical dimensions")]
    ContigTooLarge {
        /// The requested contiguity.
        contig: u8,
        /// Number of physical dimensions after canonicalization.
        dims: usize,
    },
    /// An odd-even strip of odd size, or not innermost in its dimension.
    #[error(
        "the odd-even strip oe{strip} of dimension {dim} must have an even size and be the dimension's innermost piece"
    )]
    BadOddEven {
        /// The logical dimension.
        dim: u8,
        /// The strip size.
        strip: u32,
    },
    /// A tile takes part of an odd-even strip.
    #[error(
        "a tile of size {tile} along dimension {dim} takes part of its odd-even strips of size {strip}; \
         tile by whole strips or single elements"
    )]
    TileInsideOddEven {
        /// The logical dimension.
        dim: u8,
        /// The strip size.
        strip: u32,
        /// The requested tile extent.
        tile: u32,
    },
    /// A tile cuts across the strips of a packed dimension.
    #[error(
        "a tile of size {tile} along dimension {dim} cuts across its strips of size {strip}; \
         use a tile size that divides or is a multiple of {strip}"
    )]
    TileCrossesStrip {
        /// The logical dimension.
        dim: u8,
        /// The strip size.
        strip: u32,
        /// The requested tile extent.
        tile: u32,
    },
}

/// A data layout in canonical form. See the module documentation.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Layout {
    dims: SmallVec<[PhysDim; 6]>,
    contig: u8,
}

// Copied as a slice: a derived clone goes element by element, and the search clones layouts on
// every rewrite it applies.
impl Clone for Layout {
    fn clone(&self) -> Self {
        Layout { dims: SmallVec::from_slice(&self.dims), contig: self.contig }
    }
}

/// Physical extents, one per physical dimension.
pub type Extents = SmallVec<[u32; 6]>;

impl Layout {
    /// The layout with no physical dimensions: register tensors and single elements.
    pub fn empty() -> Self {
        Layout { dims: SmallVec::new(), contig: 0 }
    }

    /// Row-major (C order) for `shape`, fully contiguous.
    pub fn row_major(shape: &[u32]) -> Self {
        Self::from_order(shape, (0..shape.len()).map(|d| d as u8))
    }

    /// Column-major (Fortran order) for `shape`, fully contiguous.
    pub fn col_major(shape: &[u32]) -> Self {
        Self::from_order(shape, (0..shape.len()).rev().map(|d| d as u8))
    }

    /// Logical dimensions nested in `order` (slowest first), fully contiguous. Dimensions of
    /// size 1 are dropped.
    pub fn from_order(shape: &[u32], order: impl IntoIterator<Item = u8>) -> Self {
        let dims: SmallVec<[PhysDim; 6]> =
            order.into_iter().filter(|&d| shape[usize::from(d)] > 1).map(PhysDim::dynamic).collect();
        let contig = dims.len() as u8;
        Layout { dims, contig }
    }

    /// Validates a layout written for a buffer of `shape` and puts it in canonical form.
    ///
    /// `contig` counts innermost entries of `dims` (as written) known to be adjacent; `None`
    /// means fully contiguous.
    pub fn new(dims: &[PhysDim], contig: Option<u8>, shape: &[u32]) -> Result<Layout, LayoutError> {
        let rank = shape.len();
        for (i, pd) in dims.iter().enumerate() {
            if usize::from(pd.logical) >= rank {
                return Err(LayoutError::DimOutOfRange { dim: pd.logical, rank });
            }
            if let Some(s) = pd.strip()
                && s < 2
            {
                return Err(LayoutError::StripTooSmall { dim: pd.logical, strip: s });
            }
            if let PhysKind::OddEven(s) = pd.kind
                && (s % 2 != 0 || dims[i + 1..].iter().any(|q| q.logical == pd.logical))
            {
                return Err(LayoutError::BadOddEven { dim: pd.logical, strip: s });
            }
        }
        let mut extents: Extents = SmallVec::with_capacity(dims.len());
        for (d, &size) in shape.iter().enumerate() {
            let d = d as u8;
            let mine: SmallVec<[&PhysDim; 4]> = dims.iter().filter(|p| p.logical == d).collect();
            if mine.is_empty() && size > 1 {
                return Err(LayoutError::MissingDim { dim: d, size });
            }
            let dynamic_count = mine.iter().filter(|p| p.kind == PhysKind::Dynamic).count();
            if dynamic_count > 1 {
                return Err(LayoutError::DuplicateDynamic { dim: d });
            }
            if dynamic_count == 1 && mine[0].kind != PhysKind::Dynamic {
                return Err(LayoutError::DynamicNotOutermost { dim: d });
            }
            let Some(strips) = mine.iter().filter_map(|p| p.strip()).map(u64::from).try_fold(1u64, u64::checked_mul)
            else {
                return Err(LayoutError::StripDoesNotDivide { dim: d, strips: u64::MAX, size });
            };
            let covers = if dynamic_count == 1 { u64::from(size) % strips == 0 } else { strips == u64::from(size) };
            if !covers {
                return Err(LayoutError::StripDoesNotDivide { dim: d, strips, size });
            }
        }
        for pd in dims {
            extents.push(match pd.strip() {
                Some(s) => s,
                None => {
                    let strips: u64 = dims
                        .iter()
                        .filter(|p| p.logical == pd.logical)
                        .filter_map(|p| p.strip())
                        .map(u64::from)
                        .product();
                    (u64::from(shape[usize::from(pd.logical)]) / strips) as u32
                }
            });
        }
        let contig = contig.unwrap_or(dims.len() as u8);
        if usize::from(contig) > dims.len() {
            return Err(LayoutError::ContigTooLarge { contig, dims: dims.len() });
        }
        Ok(canonicalize(dims, &extents, contig))
    }

    /// The physical dimensions, slowest first.
    pub fn dims(&self) -> &[PhysDim] {
        &self.dims
    }

    /// How many innermost physical dimensions are known to be adjacent in memory.
    pub fn contig(&self) -> u8 {
        self.contig
    }

    /// Whether the whole tensor occupies one dense block.
    pub fn is_fully_contiguous(&self) -> bool {
        usize::from(self.contig) == self.dims.len()
    }

    /// This layout with its contiguity set to `contig` (clamped to the number of dimensions).
    pub fn with_contig(&self, contig: u8) -> Layout {
        Layout { dims: self.dims.clone(), contig: contig.min(self.dims.len() as u8) }
    }

    /// Whether this is the row-major layout of `shape` (ignoring contiguity).
    pub fn is_row_major(&self, shape: &[u32]) -> bool {
        self.dims == Layout::row_major(shape).dims
    }

    /// Whether this is the column-major layout of `shape` (ignoring contiguity).
    pub fn is_col_major(&self, shape: &[u32]) -> bool {
        self.dims == Layout::col_major(shape).dims
    }

    /// Physical extents of a tensor of `shape` stored in this (canonical) layout.
    pub fn extents(&self, shape: &[u32]) -> Extents {
        self.extents_iter(shape).collect()
    }

    /// [`Layout::extents`] one at a time, for callers that only fold them: the search costs
    /// layouts on every rewrite it applies.
    fn extents_iter<'a>(&'a self, shape: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        self.dims.iter().map(move |pd| match pd.strip() {
            Some(s) => s,
            None => {
                let strips: u64 = self.strips_of(pd.logical).map(u64::from).product();
                (u64::from(shape[usize::from(pd.logical)]) / strips) as u32
            }
        })
    }

    fn strips_of(&self, logical: u8) -> impl Iterator<Item = u32> + '_ {
        self.dims.iter().filter(move |p| p.logical == logical).filter_map(|p| p.strip())
    }

    /// Number of elements in the innermost contiguous block.
    pub fn contiguous_block(&self, shape: &[u32]) -> u64 {
        self.runs_and_block(shape).1
    }

    /// How many contiguous runs a tensor of `shape` in this layout has (the positions outside
    /// its innermost contiguous block), and the elements of each run
    /// ([`Layout::contiguous_block`]).
    pub fn runs_and_block(&self, shape: &[u32]) -> (u64, u64) {
        let split = self.dims.len() - usize::from(self.contig);
        let (mut runs, mut block) = (1u64, 1u64);
        for (i, extent) in self.extents_iter(shape).enumerate() {
            if i < split {
                runs *= u64::from(extent);
            } else {
                block *= u64::from(extent);
            }
        }
        (runs, block)
    }

    /// How many values of logical dimension `logical` each contiguous run of a tensor of
    /// `shape` in this layout holds: the product of that dimension's extents inside the
    /// innermost contiguous block ([`Layout::runs_and_block`]).
    pub fn values_per_run(&self, shape: &[u32], logical: u8) -> u64 {
        let split = self.dims.len() - usize::from(self.contig);
        self.dims
            .iter()
            .zip(self.extents_iter(shape))
            .skip(split)
            .filter(|(pd, _)| pd.logical == logical)
            .map(|(_, extent)| u64::from(extent))
            .product()
    }

    /// The layout of a `tile_shape` tile of a tensor of `parent_shape` in this layout, with
    /// contiguity updated by the transfer function of paper §2.4.3.
    ///
    /// A tile is valid when, along every packed dimension, its extent divides the strip size or
    /// is a multiple of it; power-of-two tiles of power-of-two strips always are.
    pub fn tile(&self, parent_shape: &[u32], tile_shape: &[u32]) -> Result<Layout, LayoutError> {
        let parent = self.extents(parent_shape);
        let tile = self.tile_extents(tile_shape)?;
        let n = self.dims.len();
        let equal_suffix = (0..n).rev().take_while(|&i| parent[i] == tile[i]).count();
        let contig = usize::from(self.contig).min(1 + equal_suffix).min(n) as u8;
        Ok(canonicalize(&self.dims, &tile, contig))
    }

    /// The physical extents, in this layout's dimensions, of a `tile_shape` tile (valid as
    /// for [`Layout::tile`]).
    pub fn tile_extents(&self, tile_shape: &[u32]) -> Result<Extents, LayoutError> {
        let mut tile: Extents = smallvec::smallvec![1; self.dims.len()];
        for (d, &size) in tile_shape.iter().enumerate() {
            let d = d as u8;
            let mut remaining = size;
            for i in (0..self.dims.len()).rev().filter(|&i| self.dims[i].logical == d) {
                match self.dims[i].kind {
                    PhysKind::OddEven(s) if remaining < s && remaining > 1 => {
                        return Err(LayoutError::TileInsideOddEven { dim: d, strip: s, tile: size });
                    }
                    PhysKind::Packed(s) | PhysKind::OddEven(s) if remaining >= s => {
                        if remaining % s != 0 {
                            return Err(LayoutError::TileCrossesStrip { dim: d, strip: s, tile: size });
                        }
                        tile[i] = s;
                        remaining /= s;
                    }
                    PhysKind::Packed(s) | PhysKind::OddEven(s) => {
                        if s % remaining != 0 {
                            return Err(LayoutError::TileCrossesStrip { dim: d, strip: s, tile: size });
                        }
                        tile[i] = remaining;
                        remaining = 1;
                    }
                    PhysKind::Dynamic => {
                        tile[i] = remaining;
                        remaining = 1;
                    }
                }
            }
            debug_assert_eq!(remaining, 1, "tile larger than its parent along dimension {d}");
        }
        Ok(tile)
    }

    /// The buffer offset of logical coordinate `coord` in a buffer of `shape` laid out this way.
    /// Works for concrete integers and for symbolic index expressions alike.
    pub fn buffer_index<E: IndexArith>(&self, shape: &[u32], coord: &[E]) -> E {
        let extents = self.extents(shape);
        let mut components: SmallVec<[Option<E>; 6]> = smallvec::smallvec![None; self.dims.len()];
        for (d, x) in coord.iter().enumerate() {
            let mut x = x.clone();
            for i in (0..self.dims.len()).rev().filter(|&i| usize::from(self.dims[i].logical) == d) {
                match self.dims[i].kind {
                    PhysKind::Packed(s) => {
                        components[i] = Some(x.clone().rem_const(u64::from(s)));
                        x = x.div_const(u64::from(s));
                    }
                    PhysKind::OddEven(s) => {
                        // σ(s, r) = 2·(r mod s/2) + ⌊r / (s/2)⌋ for the position r in the strip.
                        let (s, half) = (u64::from(s), u64::from(s / 2));
                        let r = x.clone().rem_const(s);
                        components[i] = Some(r.clone().rem_const(half).mul_const(2).add(r.div_const(half)));
                        x = x.div_const(s);
                    }
                    PhysKind::Dynamic => components[i] = Some(x.clone()),
                }
            }
        }
        let mut index = E::constant(0);
        let mut stride = 1u64;
        for i in (0..self.dims.len()).rev() {
            let component = components[i].take().unwrap_or_else(|| E::constant(0));
            index = index.add(component.mul_const(stride));
            stride *= u64::from(extents[i]);
        }
        index
    }

    /// Number of elements of the buffer backing a tensor of `shape` in this layout.
    pub fn buffer_volume(&self, shape: &[u32]) -> u64 {
        self.extents(shape).iter().map(|&e| u64::from(e)).product()
    }
}

/// Puts physical dimensions with the given extents in canonical form. The innermost `contig`
/// entries of `dims` are the known-contiguous suffix.
fn canonicalize(dims: &[PhysDim], extents: &[u32], contig: u8) -> Layout {
    let first_contiguous = dims.len() - usize::from(contig);
    // (logical dim, odd-even, extent, in contiguous suffix), extent-1 entries dropped.
    let mut kept: SmallVec<[(u8, bool, u32, bool); 6]> = dims
        .iter()
        .zip(extents)
        .enumerate()
        .filter(|&(_, (_, &e))| e > 1)
        .map(|(i, (pd, &e))| (pd.logical, matches!(pd.kind, PhysKind::OddEven(_)), e, i >= first_contiguous))
        .collect();
    // Merge adjacent pieces of one logical dimension that are contiguous with each other (an
    // odd-even strip is a permutation and never merges).
    let mut i = 0;
    while i + 1 < kept.len() {
        let (outer, inner) = (kept[i], kept[i + 1]);
        if outer.0 == inner.0 && !outer.1 && !inner.1 && outer.3 && inner.3 {
            kept[i].2 = outer.2 * inner.2;
            kept.remove(i + 1);
        } else {
            i += 1;
        }
    }
    let mut seen: SmallVec<[u8; 6]> = SmallVec::new();
    let dims = kept
        .iter()
        .map(|&(logical, odd_even, extent, _)| {
            let first = !seen.contains(&logical);
            seen.push(logical);
            match (odd_even, first) {
                (true, _) => PhysDim::odd_even(logical, extent),
                (false, true) => PhysDim::dynamic(logical),
                (false, false) => PhysDim::packed(logical, extent),
            }
        })
        .collect();
    let contig = kept.iter().filter(|k| k.3).count() as u8;
    Layout { dims, contig }
}

impl fmt::Display for Layout {
    /// Formats the physical dimensions as `[0, 2, 1, 2 p16]` (contiguity is not shown).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, pd) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{pd}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::coordinates;

    fn packed_b() -> Vec<PhysDim> {
        vec![PhysDim::dynamic(0), PhysDim::dynamic(2), PhysDim::dynamic(1), PhysDim::packed(2, 16)]
    }

    #[test]
    fn row_and_col_major_drop_unit_dims() {
        let rm = Layout::row_major(&[1, 4, 16]);
        assert_eq!(rm.to_string(), "[1, 2]");
        assert!(rm.is_fully_contiguous());
        assert_eq!(Layout::col_major(&[1, 4, 16]).to_string(), "[2, 1]");
        assert_eq!(Layout::row_major(&[1, 1, 1]), Layout::empty());
    }

    #[test]
    fn packed_layout_indexes_goto_style() {
        let shape = [1, 3, 32];
        let l = Layout::new(&packed_b(), None, &shape).unwrap();
        assert_eq!(l.to_string(), "[2, 1, 2 p16]");
        // Element (k=1, n=17) is in strip 1, row 1, lane 1: 1*3*16 + 1*16 + 1.
        assert_eq!(l.buffer_index::<u64>(&shape, &[0, 1, 17]), 48 + 16 + 1);
    }

    #[test]
    fn indexing_is_a_bijection() {
        let shape = [2, 4, 32];
        for layout in
            [Layout::row_major(&shape), Layout::col_major(&shape), Layout::new(&packed_b(), None, &shape).unwrap()]
        {
            let mut seen = vec![false; layout.buffer_volume(&shape) as usize];
            for c in coordinates(&shape) {
                let c: Vec<u64> = c.iter().map(|&x| u64::from(x)).collect();
                let i = layout.buffer_index(&shape, &c) as usize;
                assert!(!seen[i], "{layout} maps two coordinates to {i}");
                seen[i] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn odd_even_strips_interleave_their_halves() {
        let shape = [16];
        let l = Layout::new(&[PhysDim::odd_even(0, 8)], None, &[8]).unwrap();
        assert_eq!(l.to_string(), "[0 oe8]");
        // σ(8, x) for x = 0..8 places the first half at even positions, the second at odd.
        let positions: Vec<u64> = (0..8u64).map(|x| l.buffer_index::<u64>(&[8], &[x])).collect();
        assert_eq!(positions, [0, 2, 4, 6, 1, 3, 5, 7]);
        let two = Layout::new(&[PhysDim::dynamic(0), PhysDim::odd_even(0, 8)], None, &shape).unwrap();
        assert_eq!(two.buffer_index::<u64>(&shape, &[12]), 8 + 1);
        assert!(matches!(two.tile(&shape, &[4]), Err(LayoutError::TileInsideOddEven { .. })));
        assert_eq!(two.tile(&shape, &[8]).unwrap().to_string(), "[0 oe8]");
        assert_eq!(two.tile(&shape, &[1]).unwrap(), Layout::empty());
        assert!(matches!(
            Layout::new(&[PhysDim::odd_even(0, 8), PhysDim::packed(0, 2)], None, &shape),
            Err(LayoutError::BadOddEven { .. })
        ));
    }

    #[test]
    fn tiling_transfers_contiguity() {
        let rm = Layout::row_major(&[1, 8, 16]);
        let row = rm.tile(&[1, 8, 16], &[1, 1, 16]).unwrap();
        assert!(row.is_fully_contiguous());
        let half_rows = rm.tile(&[1, 8, 16], &[1, 8, 8]).unwrap();
        assert_eq!((half_rows.dims().len(), half_rows.contig()), (2, 1));
        let column = rm.tile(&[1, 8, 16], &[1, 8, 1]).unwrap();
        assert_eq!((column.dims().len(), column.contig()), (1, 0));
    }

    #[test]
    fn packed_strip_tiles_become_contiguous_row_major() {
        let shape = [1, 64, 64];
        let l = Layout::new(&packed_b(), None, &shape).unwrap();
        let strip = l.tile(&shape, &[1, 64, 16]).unwrap();
        assert_eq!(strip, Layout::row_major(&[1, 64, 16]));
        let two_strips = l.tile(&shape, &[1, 64, 32]).unwrap();
        assert_eq!(two_strips.to_string(), "[2, 1, 2 p16]");
        assert!(two_strips.is_fully_contiguous());
        assert!(matches!(l.tile(&shape, &[1, 64, 24]), Err(LayoutError::TileCrossesStrip { .. })));
    }

    #[test]
    fn non_adjacent_pieces_are_not_merged() {
        // Dropping k leaves n's dynamic part and strip adjacent but 4*16 apart.
        let shape = [1, 4, 32];
        let l = Layout::new(&packed_b(), None, &shape).unwrap();
        let t = l.tile(&shape, &[1, 1, 32]).unwrap();
        assert_eq!(t.to_string(), "[2, 2 p16]");
        assert_eq!(t.contig(), 1);
    }

    #[test]
    fn invalid_layouts_are_rejected() {
        let shape = [1, 4, 20];
        assert!(matches!(Layout::new(&packed_b(), None, &shape), Err(LayoutError::StripDoesNotDivide { dim: 2, .. })));
        assert!(matches!(
            Layout::new(&[PhysDim::dynamic(1)], None, &shape),
            Err(LayoutError::MissingDim { dim: 2, .. })
        ));
        assert!(matches!(Layout::new(&[PhysDim::dynamic(3)], None, &shape), Err(LayoutError::DimOutOfRange { .. })));
    }

    #[test]
    fn runs_follow_contiguity() {
        let shape = [1, 8, 16];
        let rm = Layout::row_major(&shape);
        // One run of 128 elements (8 lines of f32), or 128 runs of one (128 lines).
        assert_eq!(rm.runs_and_block(&shape), (1, 128));
        assert_eq!(rm.with_contig(0).runs_and_block(&shape), (128, 1));
        // The one run holds all 8 values of dimension 1; with only the rows contiguous, one.
        assert_eq!(rm.values_per_run(&shape, 1), 8);
        assert_eq!(rm.with_contig(1).values_per_run(&shape, 1), 1);
        assert_eq!(rm.with_contig(1).values_per_run(&shape, 2), 16);
    }
}
