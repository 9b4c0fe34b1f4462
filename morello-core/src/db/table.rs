//! One table: disjoint rectangles of Spec coordinates in an R*-tree, merged greedily.
//!
//! A put covers a box (a Spec's point, stretched over the memory limits its decision holds
//! for). Parts of the box that earlier puts already cover keep their value — both are optimal
//! there, and keeping the first makes answers independent of later puts. What is left is
//! inserted piece by piece, and each piece absorbs any same-valued neighbour that matches it
//! in every dimension but one and touches it in that one: the union of the two is exactly
//! their bounding box, so merging never changes an answer (paper §4.1, Figure 2).

use super::key::{DIMS, Point};
use super::stored::StoredValue;
use rstar::{AABB, PointDistance, RTree, RTreeObject};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// A rectangle of integer coordinates, both corners inclusive, and its value.
///
/// Serialized with one byte per coordinate (see `packed_point` in this module).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Rect {
    /// Lowest corner.
    #[serde(with = "packed_point")]
    pub lo: Point,
    /// Highest corner.
    #[serde(with = "packed_point")]
    pub hi: Point,
    /// The value at every point inside.
    pub value: StoredValue,
}

impl Rect {
    /// Number of points inside.
    pub fn volume(&self) -> u64 {
        self.lo.iter().zip(&self.hi).map(|(l, h)| (h - l) as u64 + 1).product()
    }

    fn contains(&self, p: &Point) -> bool {
        (0..DIMS).all(|i| self.lo[i] <= p[i] && p[i] <= self.hi[i])
    }

    /// Whether `self` and a box touch or overlap along `axis` and coincide on every other.
    fn joins(&self, lo: &Point, hi: &Point, axis: usize) -> bool {
        (0..DIMS).all(|i| {
            if i == axis {
                self.lo[i] <= hi[i] + 1.0 && lo[i] <= self.hi[i] + 1.0
            } else {
                self.lo[i] == lo[i] && self.hi[i] == hi[i]
            }
        })
    }
}

impl RTreeObject for Rect {
    type Envelope = AABB<Point>;

    fn envelope(&self) -> Self::Envelope {
        AABB::from_corners(self.lo, self.hi)
    }
}

impl PointDistance for Rect {
    fn distance_2(&self, point: &Point) -> f64 {
        self.envelope().distance_2(point)
    }

    fn contains_point(&self, point: &Point) -> bool {
        self.contains(point)
    }
}

/// Disjoint rectangles with their values.
///
/// A table read from a file keeps its rectangles in a list and builds its R*-tree the first
/// time it is asked: bulk-loading trees of 16-dimensional boxes was most of the cost of
/// reading a database (the 256³ database: 110 ms to read with every tree built, 16 ms
/// without), and one query touches few tables.
#[derive(Clone, Default)]
pub struct Table {
    /// Rectangles not yet in `tree` (only before the tree is built).
    loaded: Vec<Rect>,
    /// Every rectangle, once built.
    tree: OnceLock<RTree<Rect>>,
}

impl Table {
    /// A table holding `rects` (which must be disjoint).
    pub fn from_rects(rects: Vec<Rect>) -> Table {
        Table { loaded: rects, tree: OnceLock::new() }
    }

    /// The tree, built from the loaded rectangles if this is its first use.
    fn tree(&self) -> &RTree<Rect> {
        self.tree.get_or_init(|| RTree::bulk_load(self.loaded.clone()))
    }

    /// The tree, to change; the loaded list is no longer needed.
    fn tree_mut(&mut self) -> &mut RTree<Rect> {
        if self.tree.get().is_none() {
            let _ = self.tree.set(RTree::bulk_load(std::mem::take(&mut self.loaded)));
        }
        self.loaded = Vec::new();
        self.tree.get_mut().expect("built above")
    }

    /// The rectangle containing `point`, if any.
    pub fn get(&self, point: &Point) -> Option<&Rect> {
        self.tree().locate_at_point(*point)
    }

    /// Number of rectangles.
    pub fn len(&self) -> usize {
        self.tree.get().map_or(self.loaded.len(), RTree::size)
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every rectangle, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Rect> {
        let (tree, loaded) = match self.tree.get() {
            Some(tree) => (Some(tree), &[][..]),
            None => (None, &self.loaded[..]),
        };
        tree.into_iter().flat_map(RTree::iter).chain(loaded)
    }

    /// Stores `value` on the part of the box `lo..=hi` that no rectangle covers yet, merging
    /// with neighbours. Returns the number of points newly covered.
    pub fn put(&mut self, lo: Point, hi: Point, value: &StoredValue) -> u64 {
        let mut pieces = vec![(lo, hi)];
        let covered: Vec<(Point, Point)> =
            self.tree_mut().locate_in_envelope_intersecting(AABB::from_corners(lo, hi)).map(|r| (r.lo, r.hi)).collect();
        for (clo, chi) in &covered {
            pieces = pieces.into_iter().flat_map(|(l, h)| subtract(l, h, clo, chi)).collect();
        }
        let mut added = 0;
        for (l, h) in pieces {
            added += (0..DIMS).map(|i| (h[i] - l[i]) as u64 + 1).product::<u64>();
            self.insert_merging(l, h, value);
        }
        added
    }

    fn insert_merging(&mut self, mut lo: Point, mut hi: Point, value: &StoredValue) {
        loop {
            let mut search_lo = lo;
            let mut search_hi = hi;
            for i in 0..DIMS {
                search_lo[i] -= 1.0;
                search_hi[i] += 1.0;
            }
            let neighbour = self
                .tree_mut()
                .locate_in_envelope_intersecting(AABB::from_corners(search_lo, search_hi))
                .find(|r| r.value == *value && (0..DIMS).any(|axis| r.joins(&lo, &hi, axis)))
                .cloned();
            let Some(n) = neighbour else { break };
            self.tree_mut().remove(&n);
            for i in 0..DIMS {
                lo[i] = lo[i].min(n.lo[i]);
                hi[i] = hi[i].max(n.hi[i]);
            }
        }
        self.tree_mut().insert(Rect { lo, hi, value: value.clone() });
    }
}

/// A point as one `u128`, a byte per coordinate, the first coordinate lowest: what files
/// store. Every coordinate is a small integer (a log2 shape, an operand code, a register count
/// or the bit length of a byte limit), so a point takes 16 bytes instead of 128.
mod packed_point {
    use super::{DIMS, Point};
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    const _: () = assert!(DIMS * 8 <= u128::BITS as usize, "a point packs into a u128");

    pub(super) fn serialize<S: Serializer>(point: &Point, s: S) -> Result<S::Ok, S::Error> {
        let mut packed = 0u128;
        for (i, &c) in point.iter().enumerate() {
            if !(0.0..=255.0).contains(&c) || c.fract() != 0.0 {
                return Err(S::Error::custom(format!("coordinate {i} is {c}, not an integer in 0..=255")));
            }
            packed |= u128::from(c as u8) << (8 * i);
        }
        s.serialize_u128(packed)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Point, D::Error> {
        let packed = u128::deserialize(d)?;
        Ok(std::array::from_fn(|i| f64::from((packed >> (8 * i)) as u8)))
    }
}

/// The parts of box `lo..=hi` outside box `clo..=chi`, as disjoint boxes.
fn subtract(mut lo: Point, mut hi: Point, clo: &Point, chi: &Point) -> Vec<(Point, Point)> {
    if (0..DIMS).any(|i| chi[i] < lo[i] || hi[i] < clo[i]) {
        return vec![(lo, hi)];
    }
    let mut out = Vec::new();
    for i in 0..DIMS {
        if lo[i] < clo[i] {
            let mut h = hi;
            h[i] = clo[i] - 1.0;
            out.push((lo, h));
            lo[i] = clo[i];
        }
        if chi[i] < hi[i] {
            let mut l = lo;
            l[i] = chi[i] + 1.0;
            out.push((l, hi));
            hi[i] = chi[i];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(tag: u64) -> StoredValue {
        StoredValue { action: None, intensity: (tag, 1), peak: [0; 4], depth: 0 }
    }

    fn point(coords: &[u8]) -> Point {
        std::array::from_fn(|i| f64::from(coords.get(i).copied().unwrap_or(0)))
    }

    fn rect(lo: &[u8], hi: &[u8], tag: u64) -> Rect {
        Rect { lo: point(lo), hi: point(hi), value: value(tag) }
    }

    #[test]
    fn a_point_is_written_as_one_byte_per_coordinate_and_read_back() {
        let r = Rect { lo: std::array::from_fn(|i| i as f64), hi: [255.0; DIMS], value: value(3) };
        let bytes = bincode::serialize(&r).unwrap();
        assert_eq!(bytes.len(), 2 * 16 + bincode::serialize(&r.value).unwrap().len());
        assert_eq!(bincode::deserialize::<Rect>(&bytes).unwrap(), r);
    }

    #[test]
    fn a_coordinate_that_does_not_fit_a_byte_is_an_error_not_a_wrong_file() {
        for bad in [256.0, -1.0, 1.5] {
            let mut r = rect(&[1], &[2], 1);
            r.hi[3] = bad;
            let error = bincode::serialize(&r).unwrap_err().to_string();
            assert!(error.contains("coordinate 3"), "{error}");
        }
    }

    #[test]
    fn a_loaded_table_answers_and_grows_like_a_built_one() {
        let rects = vec![rect(&[0, 0], &[1, 3], 1), rect(&[2, 0], &[2, 3], 2)];
        let mut table = Table::from_rects(rects.clone());
        assert_eq!(table.len(), 2);
        let mut listed: Vec<Rect> = table.iter().cloned().collect();
        listed.sort_by(|a, b| a.lo.partial_cmp(&b.lo).unwrap());
        assert_eq!(listed, rects, "listing does not need the tree");
        assert_eq!(table.get(&point(&[1, 2])).map(|r| r.value.intensity.0), Some(1));
        assert_eq!(table.get(&point(&[3, 0])), None);
        assert_eq!(table.iter().count(), 2, "after the tree is built, each rectangle is listed once");
        // A put next to a loaded rectangle of the same value merges with it.
        assert_eq!(table.put(point(&[3, 0]), point(&[3, 3]), &value(2)), 4);
        assert_eq!(table.len(), 2);
        assert_eq!(table.get(&point(&[2, 1])).map(|r| (r.lo, r.hi)), Some((point(&[2, 0]), point(&[3, 3]))));
    }
}
