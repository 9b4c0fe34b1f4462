//! Where a Spec lives in the database: a table of discrete features and a point in Z≥0.
//!
//! The table key holds what has no useful order: the primitive (or Compose stages), the
//! operands' dtypes and layouts, the serial flag. The coordinates hold what does (paper §4.1),
//! so that neighbouring Specs tend to share decisions and their rectangles merge:
//!
//! 1. `log2` of every Spec dimension (for a Compose, every stage's);
//! 2. per operand, a level-and-vector code (`8·level + log2(lanes) + 1`, or `8·level`
//!    without vectors) and its contiguity deficit (physical dimensions minus contiguous
//!    ones, so that tiling a dimension down to 1 does not move the point);
//! 3. per memory level, the limit: a register count for register files, the bit length of
//!    the byte limit (`0` for none, `k + 1` for `2^k`) for L1 and global memory, and for a
//!    capacity that is not a power of two, one more than the bit length of the powers below it.
//!
//! A Spec with a dimension that is not a power of two, or with more coordinates than a point
//! holds, moves its shape (and, if still needed, its operand codes) into the table key; its
//! point then varies only along the remaining axes.

use crate::level::{LEVEL_COUNT, Level};
use crate::limits::MemoryLimits;
use crate::spec::{LogicalSpec, SpecKind};
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Coordinates per point. Unused trailing coordinates are 0.
pub const DIMS: usize = 16;

/// A point of a table: integer coordinates, stored as `f64` for the R*-tree's area
/// arithmetic (exact for these small integers, and free of overflow).
pub type Point = [f64; DIMS];

/// The discrete features shared by every Spec of one table.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct TableKey {
    /// The primitive (`MatmulAccum`, `Softmax scan=1`) or Compose stages, by stable name.
    pub kind: String,
    /// Per operand: dtype and layout, by stable name.
    pub operands: Vec<OperandKey>,
    /// Whether the Specs are serial.
    pub serial: bool,
    /// Which features are exact key values rather than coordinates.
    pub exact: Exactness,
    /// The exact values (shape, then operand codes), per [`TableKey::exact`].
    pub exact_values: Vec<u32>,
}

/// The dtype and layout of one operand, as text (`f32`, `0 1 2 p16`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct OperandKey {
    /// The dtype's name.
    pub dtype: String,
    /// The layout's physical dimensions, as written in Spec syntax (empty for registers).
    pub layout: String,
    /// Whether its runs start whole pages apart ([`crate::tensor::TensorSpec::paged`]).
    pub paged: bool,
}

/// How much of a Spec the table key pins down exactly.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Exactness {
    /// Shape and operand codes are coordinates.
    Spatial,
    /// The shape is in the key (it is not all powers of two, or too long).
    Shape,
    /// The shape and the operand codes are in the key; only limits are coordinates.
    LimitsOnly,
}

/// A Spec's table and point.
#[derive(Clone, PartialEq, Debug)]
pub struct Location {
    /// The table.
    pub key: TableKey,
    /// The coordinates without limits, and how many there are.
    pub base: Point,
    /// Number of coordinates in `base`; the limits follow at this offset.
    pub limits_at: usize,
}

impl Location {
    /// The table and coordinates (without limits) of `spec`.
    pub fn of(spec: &LogicalSpec) -> Location {
        let shape_coords = shape_dims(spec);
        let operand_coords: Vec<u32> = spec
            .operands()
            .iter()
            .flat_map(|t| {
                let vector = t.vector_size().map_or(0, |lanes| lanes.trailing_zeros() + 1);
                let code = 8 * t.level().index() as u32 + vector;
                let deficit = t.layout().dims().len() as u32 - u32::from(t.layout().contig());
                [code, deficit]
            })
            .collect();
        let all_powers = shape_coords.iter().all(|d| d.is_power_of_two());
        let fits = |n: usize| n + LEVEL_COUNT <= DIMS;
        let (exact, coords, exact_values): (Exactness, Vec<u32>, Vec<u32>) =
            if all_powers && fits(shape_coords.len() + operand_coords.len()) {
                let logs = shape_coords.iter().map(|d| d.trailing_zeros());
                (Exactness::Spatial, logs.chain(operand_coords).collect(), Vec::new())
            } else if fits(operand_coords.len()) {
                (Exactness::Shape, operand_coords, shape_coords)
            } else {
                (Exactness::LimitsOnly, Vec::new(), shape_coords.into_iter().chain(operand_coords).collect())
            };
        let mut base = [0.0; DIMS];
        for (slot, &c) in base.iter_mut().zip(&coords) {
            *slot = f64::from(c);
        }
        let key = TableKey {
            kind: kind_name(spec.kind()),
            operands: spec
                .operands()
                .iter()
                .map(|t| OperandKey {
                    dtype: t.dtype().name().to_owned(),
                    layout: layout_text(t.layout().dims()),
                    paged: t.paged(),
                })
                .collect(),
            serial: spec.serial(),
            exact,
            exact_values,
        };
        Location { key, base, limits_at: coords.len() }
    }

    /// The point of this Spec at `limits`.
    pub fn at(&self, limits: &MemoryLimits, target: &Target) -> Point {
        let mut p = self.base;
        for level in Level::ALL {
            p[self.limits_at + level.index()] = f64::from(limit_coordinate(level, limits.get(level), target));
        }
        p
    }

    /// The limits of coordinates `point` (the inverse of [`Location::at`]).
    pub fn limits(&self, point: &Point, target: &Target) -> MemoryLimits {
        MemoryLimits::from_bytes_unchecked(std::array::from_fn(|i| {
            limit_bytes(Level::ALL[i], point[self.limits_at + i] as u32, target)
        }))
    }
}

/// The coordinate of a limit (or peak) of `bytes` at `level`; limits above the target's
/// capacity count as the capacity.
pub fn limit_coordinate(level: Level, bytes: u64, target: &Target) -> u32 {
    let info = target.level(level);
    let bytes = bytes.min(info.capacity_bytes);
    if info.register_bytes > 0 {
        (bytes / u64::from(info.register_bytes)) as u32
    } else if bytes == info.capacity_bytes && !bytes.is_power_of_two() {
        bit_length(bytes) + 1
    } else {
        bit_length(bytes)
    }
}

/// Bits needed to write `bytes`: `k + 1` for `2^k`, 0 for 0.
fn bit_length(bytes: u64) -> u32 {
    u64::BITS - bytes.leading_zeros()
}

/// The byte limit at coordinate `c` of `level` (the inverse of [`limit_coordinate`] on valid
/// limits).
pub fn limit_bytes(level: Level, c: u32, target: &Target) -> u64 {
    let info = target.level(level);
    if info.register_bytes > 0 {
        u64::from(c) * u64::from(info.register_bytes)
    } else if c == 0 {
        0
    } else if c > bit_length(info.capacity_bytes) {
        info.capacity_bytes
    } else {
        1 << (c - 1)
    }
}

/// Every Spec dimension: the primitive's, or every Compose stage's, head first.
fn shape_dims(spec: &LogicalSpec) -> Vec<u32> {
    match spec.kind() {
        SpecKind::Primitive(_) => spec.shape().to_vec(),
        SpecKind::Compose(components) => components.iter().flat_map(|c| c.shape.iter().copied()).collect(),
    }
}

/// The stable name of what a Spec computes.
fn kind_name(kind: &SpecKind) -> String {
    let stage = |p: crate::primitive::Primitive| match (p.def().param, p.param()) {
        (Some(param), Some(value)) => format!("{} {param}={value}", p.name()),
        _ => p.name().to_owned(),
    };
    match kind {
        SpecKind::Primitive(p) => stage(*p),
        SpecKind::Compose(components) => {
            let stages: Vec<String> =
                components.iter().map(|c| format!("{}:{}", stage(c.primitive), c.output_dtype.name())).collect();
            format!("Compose[{}]", stages.join(", "))
        }
    }
}

/// Physical dimensions as text, `0 1 p16`.
fn layout_text(dims: &[crate::layout::PhysDim]) -> String {
    let parts: Vec<String> = dims.iter().map(ToString::to_string).collect();
    parts.join(", ")
}

impl fmt::Display for TableKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        for o in &self.operands {
            write!(f, " ({}, [{}]{})", o.dtype, o.layout, if o.paged { ", paged" } else { "" })?;
        }
        if self.serial {
            f.write_str(" serial")?;
        }
        if !self.exact_values.is_empty() {
            write!(f, " exact {:?}", self.exact_values)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{X86_AVX2, X86_AVX512};

    #[test]
    fn limit_coordinates_keep_the_order_of_permitted_limits_and_map_back() {
        for target in [&X86_AVX512, &X86_AVX2] {
            let capacity = target.level(Level::L1).capacity_bytes;
            let mut permitted: Vec<u64> = std::iter::once(0).chain((0..63).map(|k| 1u64 << k)).collect();
            permitted.retain(|&b| b < capacity);
            permitted.push(capacity);
            let coordinates: Vec<u32> = permitted.iter().map(|&b| limit_coordinate(Level::L1, b, target)).collect();
            assert!(coordinates.windows(2).all(|w| w[0] < w[1]), "{}: {coordinates:?}", target.name);
            for (&bytes, &c) in permitted.iter().zip(&coordinates) {
                assert_eq!(limit_bytes(Level::L1, c, target), bytes, "{}", target.name);
            }
            // A limit between two permitted ones shares the lower one's coordinate; above the
            // capacity, the capacity's.
            let between = capacity - 64;
            let below = target.level(Level::L1).limit_at_most(between);
            assert_eq!(limit_coordinate(Level::L1, between, target), limit_coordinate(Level::L1, below, target));
            assert_eq!(limit_coordinate(Level::L1, 2 * capacity, target), *coordinates.last().unwrap());
        }
    }
}
