//! The primitive table: every primitive Spec type declared once.
//!
//! Each family of primitives has one [`PrimitiveDef`] entry: its name (and the name of its
//! accumulating variant), rank, parameter, operands with their roles and dimension rules, the
//! dimension it may not be tiled along, and its reference semantics. Everything else — operand
//! shapes, directions, reduction dimensions, how a tile of the Spec tiles each operand
//! (including Conv's sliding windows), the initial values `to_accum` writes — is derived.
//! Facts about the primitives follow `../shared/reference/upstream-morello-facts.md` §1.2 (beside the repository).

pub mod semantics;
mod table;

pub use table::{AccumInit, DimExpr, DimRule, OperandDef, PrimitiveDef, Role, is_upcast};

use crate::dtype::Dtype;
use crate::shape::Shape;
use smallvec::SmallVec;
use std::fmt;

/// A primitive Spec type, with its parameters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Primitive {
    /// Batched matrix multiplication over `b×m×k×n`: `out[b,m,n] (+)= Σₖ lhs[b,m,k]·rhs[b,k,n]`.
    Matmul {
        /// Accumulate into the output.
        accum: bool,
    },
    /// Batched, multi-channel, valid (unpadded, stride-1) 2-D convolution over
    /// `b×f×c×h×w×fh×fw` (`h×w` is the output's spatial size):
    /// `out[b,f,y,x] (+)= Σ_{c,i,j} image[b,c,y+i,x+j]·filters[f,c,i,j]`.
    Conv {
        /// Accumulate into the output.
        accum: bool,
    },
    /// Copy between tensors that may differ in level, layout, vector size and (upcasting) dtype.
    Move,
    /// Fill the output with a constant.
    Fill(FillValue),
    /// `out[0, ...] = input[...]`: a view with a leading unit dimension.
    OnePrefix,
    /// Replicate `input` (size 1 along `dim`) along `dim`.
    Broadcast {
        /// The broadcast dimension.
        dim: u8,
    },
    /// `values[i] /= divisor[i]`.
    DivideVec,
    /// `values[i] /= scalars[i with scan := 0]`.
    DivideVecScalar {
        /// The dimension the scalars are constant along.
        scan: u8,
    },
    /// `out (max)= max along dim of input`.
    Max {
        /// The reduced dimension.
        dim: u8,
        /// Accumulate into the output.
        accum: bool,
    },
    /// `out = exp(x − max(x)) / Σ exp(x − max(x))` along the scan dimension.
    Softmax {
        /// The scan dimension.
        scan: u8,
    },
    /// `out = exp(x − max) / denom`, given the maximum and denominator.
    SoftmaxComplete {
        /// The scan dimension.
        scan: u8,
    },
    /// `denom (+)= Σ exp(x − max)`, given the maximum.
    SoftmaxDenominator {
        /// The scan dimension.
        scan: u8,
        /// Accumulate into the denominator.
        accum: bool,
    },
    /// The maximum and the denominator in one pass (online softmax when accumulating).
    SoftmaxDenominatorAndMax {
        /// The scan dimension.
        scan: u8,
        /// Update a running maximum and denominator.
        accum: bool,
    },
    /// Merges per-chunk maxima and denominators (laid out along the scan dimension).
    SoftmaxDenominatorAndMaxFromParts {
        /// The scan dimension.
        scan: u8,
        /// Merge into a running maximum and denominator.
        accum: bool,
    },
    /// The denominator and the unscaled exponentials `exp(x − max(x))`.
    SoftmaxDenominatorAndUnscaled {
        /// The scan dimension.
        scan: u8,
    },
    /// The denominator and the unscaled exponentials, given the maximum.
    SoftmaxDenominatorAndUnscaledFromMax {
        /// The scan dimension.
        scan: u8,
        /// Accumulate into the denominator (the exponentials are always written).
        accum: bool,
    },
}

/// The constant a [`Primitive::Fill`] writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum FillValue {
    /// Zero.
    Zero,
    /// Negative infinity (float dtypes only).
    NegInf,
    /// The dtype's lowest value (for floats, the most negative finite value).
    Min,
}

/// How a Spec reads and writes an operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Direction {
    /// Read only.
    In,
    /// Written, without reading the previous contents.
    Out,
    /// Read and written.
    InOut,
}

impl Direction {
    /// Whether the operand's previous contents are read.
    pub fn reads(self) -> bool {
        matches!(self, Direction::In | Direction::InOut)
    }

    /// Whether the operand is written.
    pub fn writes(self) -> bool {
        matches!(self, Direction::Out | Direction::InOut)
    }
}

/// Names under which primitives are written, with how to build them from their parameter.
type Constructor = fn(u8) -> Primitive;
const NAMES: &[(&str, Constructor)] = &[
    ("Matmul", |_| Primitive::Matmul { accum: false }),
    ("MatmulAccum", |_| Primitive::Matmul { accum: true }),
    ("Conv", |_| Primitive::Conv { accum: false }),
    ("ConvAccum", |_| Primitive::Conv { accum: true }),
    ("Move", |_| Primitive::Move),
    ("FillZero", |_| Primitive::Fill(FillValue::Zero)),
    ("FillNegInf", |_| Primitive::Fill(FillValue::NegInf)),
    ("FillMin", |_| Primitive::Fill(FillValue::Min)),
    ("OnePrefix", |_| Primitive::OnePrefix),
    ("Broadcast", |dim| Primitive::Broadcast { dim }),
    ("DivideVec", |_| Primitive::DivideVec),
    ("DivideVecScalar", |scan| Primitive::DivideVecScalar { scan }),
    ("Max", |dim| Primitive::Max { dim, accum: false }),
    ("MaxAccum", |dim| Primitive::Max { dim, accum: true }),
    ("Softmax", |scan| Primitive::Softmax { scan }),
    ("SoftmaxComplete", |scan| Primitive::SoftmaxComplete { scan }),
    ("SoftmaxDenominator", |scan| Primitive::SoftmaxDenominator { scan, accum: false }),
    ("SoftmaxDenominatorAccum", |scan| Primitive::SoftmaxDenominator { scan, accum: true }),
    ("SoftmaxDenominatorAndMax", |scan| Primitive::SoftmaxDenominatorAndMax { scan, accum: false }),
    ("SoftmaxDenominatorAndMaxAccum", |scan| Primitive::SoftmaxDenominatorAndMax { scan, accum: true }),
    ("SoftmaxDenominatorAndMaxFromParts", |scan| Primitive::SoftmaxDenominatorAndMaxFromParts { scan, accum: false }),
    ("SoftmaxDenominatorAndMaxFromPartsAccum", |scan| Primitive::SoftmaxDenominatorAndMaxFromParts {
        scan,
        accum: true,
    }),
    ("SoftmaxDenominatorAndUnscaled", |scan| Primitive::SoftmaxDenominatorAndUnscaled { scan }),
    ("SoftmaxDenominatorAndUnscaledFromMax", |scan| Primitive::SoftmaxDenominatorAndUnscaledFromMax {
        scan,
        accum: false,
    }),
    ("SoftmaxDenominatorAndUnscaledFromMaxAccum", |scan| Primitive::SoftmaxDenominatorAndUnscaledFromMax {
        scan,
        accum: true,
    }),
];

impl Primitive {
    /// Every primitive name, in a fixed order.
    pub fn names() -> impl Iterator<Item = &'static str> + Clone {
        NAMES.iter().map(|(n, _)| *n)
    }

    /// The primitive written `name`, with parameter `param` (for families that take one).
    pub fn from_name(name: &str, param: u8) -> Option<Primitive> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, make)| make(param))
    }

    /// Name in Spec syntax.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, make)| make(self.param().unwrap_or(0)) == self)
            .map(|(n, _)| *n)
            .expect("every primitive has a name")
    }

    /// The family's table entry.
    pub fn def(self) -> &'static PrimitiveDef {
        table::def(self)
    }

    /// The dimension parameter (`dim` or `scan`), for families that take one.
    pub fn param(self) -> Option<u8> {
        match self {
            Primitive::Broadcast { dim } | Primitive::Max { dim, .. } => Some(dim),
            Primitive::DivideVecScalar { scan }
            | Primitive::Softmax { scan }
            | Primitive::SoftmaxComplete { scan }
            | Primitive::SoftmaxDenominator { scan, .. }
            | Primitive::SoftmaxDenominatorAndMax { scan, .. }
            | Primitive::SoftmaxDenominatorAndMaxFromParts { scan, .. }
            | Primitive::SoftmaxDenominatorAndUnscaled { scan }
            | Primitive::SoftmaxDenominatorAndUnscaledFromMax { scan, .. } => Some(scan),
            _ => None,
        }
    }

    /// Whether this is an accumulating variant.
    pub fn is_accumulating(self) -> bool {
        match self {
            Primitive::Matmul { accum }
            | Primitive::Conv { accum }
            | Primitive::Max { accum, .. }
            | Primitive::SoftmaxDenominator { accum, .. }
            | Primitive::SoftmaxDenominatorAndMax { accum, .. }
            | Primitive::SoftmaxDenominatorAndMaxFromParts { accum, .. }
            | Primitive::SoftmaxDenominatorAndUnscaledFromMax { accum, .. } => accum,
            _ => false,
        }
    }

    /// The accumulating variant of a non-accumulating primitive that has one.
    pub fn accumulating_variant(self) -> Option<Primitive> {
        let accumulating = match self {
            Primitive::Matmul { accum: false } => Primitive::Matmul { accum: true },
            Primitive::Conv { accum: false } => Primitive::Conv { accum: true },
            Primitive::Max { dim, accum: false } => Primitive::Max { dim, accum: true },
            Primitive::SoftmaxDenominator { scan, accum: false } => Primitive::SoftmaxDenominator { scan, accum: true },
            Primitive::SoftmaxDenominatorAndMax { scan, accum: false } => {
                Primitive::SoftmaxDenominatorAndMax { scan, accum: true }
            }
            Primitive::SoftmaxDenominatorAndMaxFromParts { scan, accum: false } => {
                Primitive::SoftmaxDenominatorAndMaxFromParts { scan, accum: true }
            }
            Primitive::SoftmaxDenominatorAndUnscaledFromMax { scan, accum: false } => {
                Primitive::SoftmaxDenominatorAndUnscaledFromMax { scan, accum: true }
            }
            _ => return None,
        };
        Some(accumulating)
    }

    /// Number of operands.
    pub fn operand_count(self) -> usize {
        self.def().operands.len()
    }

    /// The operand whose rows may stream into L1 (see [`OperandDef::streamed_rows`]) and the
    /// dimension of its rows, if the primitive has one.
    pub fn streamed_operand(self) -> Option<(usize, u8)> {
        self.operands().iter().enumerate().find_map(|(i, o)| o.streamed_rows.map(|d| (i, d)))
    }

    /// The operand table entries.
    pub fn operands(self) -> &'static [OperandDef] {
        self.def().operands
    }

    /// Direction of operand `i`.
    pub fn direction(self, i: usize) -> Direction {
        match self.def().operands[i].role {
            Role::Input => Direction::In,
            Role::InOut => Direction::InOut,
            Role::Output { init } if init.is_some() && self.is_accumulating() => Direction::InOut,
            Role::Output { .. } => Direction::Out,
        }
    }

    /// Indices of the operands the primitive writes.
    pub fn outputs(self) -> impl Iterator<Item = usize> {
        let defs = self.def().operands;
        (0..defs.len()).filter(move |&i| !matches!(defs[i].role, Role::Input))
    }

    /// Whether `rank` is a valid Spec rank.
    pub fn accepts_rank(self, rank: usize) -> bool {
        rank > 0 && self.def().rank.is_none_or(|r| r == rank) && self.param().is_none_or(|p| usize::from(p) < rank)
    }

    /// How operand `i`'s dimensions derive from the Spec's.
    pub fn operand_dims(self, i: usize, spec_rank: usize) -> SmallVec<[DimExpr; 7]> {
        let param = self.param().unwrap_or(0);
        match self.def().operands[i].dims {
            DimRule::Same => (0..spec_rank as u8).map(DimExpr::Spec).collect(),
            DimRule::Reduced => {
                (0..spec_rank as u8).map(|d| if d == param { DimExpr::One } else { DimExpr::Spec(d) }).collect()
            }
            DimRule::Prefixed => std::iter::once(DimExpr::One).chain((0..spec_rank as u8).map(DimExpr::Spec)).collect(),
            DimRule::Fixed(dims) => dims.iter().copied().collect(),
        }
    }

    /// The shape of operand `i` for a Spec (or tile) of shape `spec_shape`.
    pub fn operand_shape(self, i: usize, spec_shape: &[u32]) -> Shape {
        self.operand_dims(i, spec_shape.len()).iter().map(|e| e.extent(spec_shape)).collect()
    }

    /// Spec dimensions some output does not depend on: tiling them re-visits that output,
    /// which only an accumulating variant allows.
    pub fn reduction_dims(self, spec_rank: usize) -> Shape {
        (0..spec_rank as u8)
            .filter(|&d| self.outputs().any(|o| !self.operand_dims(o, spec_rank).iter().any(|e| e.uses(d))))
            .map(u32::from)
            .collect()
    }

    /// The sliding windows of a Spec of rank `spec_rank`, as (output dimension, filter
    /// dimension) pairs: a Conv's output rows with its filter rows, and its columns likewise.
    /// Empty for primitives without windows.
    pub fn sliding_windows(self, spec_rank: usize) -> SmallVec<[(u8, u8); 2]> {
        let mut windows = SmallVec::new();
        for i in 0..self.operand_count() {
            for dim in self.operand_dims(i, spec_rank) {
                if let DimExpr::Window { out, filter } = dim {
                    windows.push((out, filter));
                }
            }
        }
        windows
    }

    /// Whether [`Primitive::sliding_windows`] is not empty, without building it: a check cheap
    /// enough for the search's hot path.
    pub fn has_sliding_windows(self) -> bool {
        self.def().operands.iter().any(|operand| match operand.dims {
            DimRule::Fixed(dims) => dims.iter().any(|d| matches!(d, DimExpr::Window { .. })),
            _ => false,
        })
    }

    /// Spec dimensions that may not be tiled at all (a Softmax's scan dimension).
    pub fn untileable_dims(self) -> Shape {
        match (self.def().untileable_param, self.param()) {
            (true, Some(p)) => smallvec::smallvec![u32::from(p)],
            _ => Shape::new(),
        }
    }

    /// The value `to_accum` fills output `i` with, for the given dtype, if it accumulates.
    pub fn accum_init(self, i: usize, dtype: Dtype) -> Option<FillValue> {
        match self.def().operands[i].role {
            Role::Output { init: Some(AccumInit::Zero) } => Some(FillValue::Zero),
            Role::Output { init: Some(AccumInit::Lowest) } => {
                Some(if dtype.is_float() { FillValue::NegInf } else { FillValue::Min })
            }
            _ => None,
        }
    }

    /// A human name for Spec dimension `d` (`k`, or `dimension 2`).
    pub fn dim_name(self, d: usize) -> String {
        match self.def().dim_names.get(d) {
            Some(name) => (*name).to_owned(),
            None => format!("dimension {d}"),
        }
    }

    /// Whether operand dtypes are acceptable; `Err` explains why not.
    pub fn check_dtypes(self, dtypes: &[Dtype]) -> Result<(), String> {
        table::check_dtypes(self, dtypes)
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_shapes_and_reductions() {
        let mm = Primitive::Matmul { accum: true };
        assert_eq!(&mm.operand_shape(0, &[1, 4, 8, 16])[..], &[1, 4, 8]);
        assert_eq!(&mm.operand_shape(1, &[1, 4, 8, 16])[..], &[1, 8, 16]);
        assert_eq!(&mm.operand_shape(2, &[1, 4, 8, 16])[..], &[1, 4, 16]);
        assert_eq!(&mm.reduction_dims(4)[..], &[2]);
        assert_eq!(mm.direction(2), Direction::InOut);
        assert_eq!(Primitive::Matmul { accum: false }.direction(2), Direction::Out);
        assert!(Primitive::Move.reduction_dims(3).is_empty());
    }

    #[test]
    fn only_convs_have_sliding_windows_pairing_output_and_filter_dimensions() {
        let conv = Primitive::Conv { accum: true };
        assert_eq!(conv.sliding_windows(7).as_slice(), &[(3, 5), (4, 6)]);
        assert!(conv.has_sliding_windows());
        for p in [Primitive::Matmul { accum: false }, Primitive::Move, Primitive::Softmax { scan: 1 }] {
            assert!(p.sliding_windows(4).is_empty() && !p.has_sliding_windows(), "{p:?}");
        }
    }

    #[test]
    fn conv_images_are_sliding_windows() {
        let conv = Primitive::Conv { accum: false };
        // b=2, f=8, c=3, output 5×6, filters 3×2: the image is 7×7.
        let shape = [2, 8, 3, 5, 6, 3, 2];
        assert_eq!(&conv.operand_shape(0, &shape)[..], &[2, 3, 7, 7]);
        assert_eq!(&conv.operand_shape(1, &shape)[..], &[8, 3, 3, 2]);
        assert_eq!(&conv.operand_shape(2, &shape)[..], &[2, 8, 5, 6]);
        assert_eq!(&conv.reduction_dims(7)[..], &[2, 5, 6]);
    }

    #[test]
    fn softmax_parts_have_reduced_operands() {
        let sdam = Primitive::SoftmaxDenominatorAndMax { scan: 1, accum: false };
        assert_eq!(&sdam.operand_shape(1, &[4, 512])[..], &[4, 1]);
        assert_eq!(&sdam.reduction_dims(2)[..], &[1]);
        assert_eq!(sdam.outputs().collect::<Vec<_>>(), vec![1, 2]);
        let accum = sdam.accumulating_variant().unwrap();
        assert_eq!(accum.accum_init(1, Dtype::F32), Some(FillValue::NegInf));
        assert_eq!(accum.accum_init(2, Dtype::F32), Some(FillValue::Zero));
        // The exponentials are written, never accumulated.
        let from_max = Primitive::SoftmaxDenominatorAndUnscaledFromMax { scan: 1, accum: true };
        assert_eq!(from_max.direction(2), Direction::InOut);
        assert_eq!(from_max.direction(3), Direction::Out);
        assert_eq!(&Primitive::Softmax { scan: 1 }.untileable_dims()[..], &[1]);
        assert_eq!(Primitive::Max { dim: 0, accum: true }.accum_init(1, Dtype::U8), Some(FillValue::Min));
    }

    #[test]
    fn names_round_trip() {
        for name in Primitive::names() {
            let p = Primitive::from_name(name, 1).unwrap();
            assert_eq!(p.name(), name);
        }
    }
}
