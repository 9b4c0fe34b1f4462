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

/// A rectangle of integer coordinates, both corners inclusive, and its value.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Rect {
    /// Lowest corner.
    pub lo: Point,
    /// Highest corner.
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
#[derive(Clone, Default)]
pub struct Table {
    tree: RTree<Rect>,
}

impl Table {
    /// A table holding `rects` (which must be disjoint).
    pub fn from_rects(rects: Vec<Rect>) -> Table {
        Table { tree: RTree::bulk_load(rects) }
    }

    /// The rectangle containing `point`, if any.
    pub fn get(&self, point: &Point) -> Option<&Rect> {
        self.tree.locate_at_point(*point)
    }

    /// Number of rectangles.
    pub fn len(&self) -> usize {
        self.tree.size()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.tree.size() == 0
    }

    /// Every rectangle, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Rect> {
        self.tree.iter()
    }

    /// Stores `value` on the part of the box `lo..=hi` that no rectangle covers yet, merging
    /// with neighbours. Returns the number of points newly covered.
    pub fn put(&mut self, lo: Point, hi: Point, value: &StoredValue) -> u64 {
        let mut pieces = vec![(lo, hi)];
        let covered: Vec<(Point, Point)> =
            self.tree.locate_in_envelope_intersecting(AABB::from_corners(lo, hi)).map(|r| (r.lo, r.hi)).collect();
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
                .tree
                .locate_in_envelope_intersecting(AABB::from_corners(search_lo, search_hi))
                .find(|r| r.value == *value && (0..DIMS).any(|axis| r.joins(&lo, &hi, axis)))
                .cloned();
            let Some(n) = neighbour else { break };
            self.tree.remove(&n);
            for i in 0..DIMS {
                lo[i] = lo[i].min(n.lo[i]);
                hi[i] = hi[i].max(n.hi[i]);
            }
        }
        self.tree.insert(Rect { lo, hi, value: value.clone() });
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
