//! The primitive table: every primitive Spec type declared once.
//!
//! A primitive's operands, their directions, how each operand's dimensions derive from the
//! Spec's dimensions (which also says how a tile of the Spec tiles each operand), which
//! dimensions are reductions, its accumulating variant and that variant's initial output
//! value all come from one [`PrimitiveDef`] entry; everything else is derived.

use crate::shape::Shape;
use std::fmt;

/// A primitive Spec type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Primitive {
    /// Batched matrix multiplication over `b×m×k×n`: `out[b,m,n] (+)= Σ_k lhs[b,m,k]·rhs[b,k,n]`.
    Matmul {
        /// Accumulate into the output instead of overwriting it.
        accum: bool,
    },
    /// Copy between tensors that may differ in level, layout and vector size.
    Move,
    /// Fill the output with a constant.
    Fill(FillValue),
}

/// The constant a [`Primitive::Fill`] writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum FillValue {
    /// Zero.
    Zero,
}

/// How a Spec reads and writes an operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Direction {
    /// Read only.
    In,
    /// Written, without reading the previous contents.
    Out,
    /// Read and written (accumulating outputs).
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

/// One operand of a primitive.
#[derive(Debug)]
pub struct OperandDef {
    /// Name used in wrappers and messages.
    pub name: &'static str,
    /// For each operand dimension, the Spec dimension it is; `None` means the operand has
    /// exactly the Spec's dimensions.
    pub dims: Option<&'static [usize]>,
    /// Whether this is the output.
    pub output: bool,
}

/// A family of primitives sharing operands and shape rules.
#[derive(Debug)]
pub struct PrimitiveDef {
    /// Name of the plain variant.
    pub name: &'static str,
    /// Name of the accumulating variant, if the family has one.
    pub accum_name: Option<&'static str>,
    /// Required Spec rank, or `None` for any rank.
    pub rank: Option<usize>,
    /// Names of the Spec dimensions, for messages (fixed-rank families).
    pub dim_names: &'static [&'static str],
    /// The operands, in parameter order.
    pub operands: &'static [OperandDef],
    /// What the output must hold before the accumulating variant runs.
    pub accum_init: Option<FillValue>,
}

static MATMUL: PrimitiveDef = PrimitiveDef {
    name: "Matmul",
    accum_name: Some("MatmulAccum"),
    rank: Some(4),
    dim_names: &["b", "m", "k", "n"],
    operands: &[
        OperandDef { name: "lhs", dims: Some(&[0, 1, 2]), output: false },
        OperandDef { name: "rhs", dims: Some(&[0, 2, 3]), output: false },
        OperandDef { name: "out", dims: Some(&[0, 1, 3]), output: true },
    ],
    accum_init: Some(FillValue::Zero),
};

static MOVE: PrimitiveDef = PrimitiveDef {
    name: "Move",
    accum_name: None,
    rank: None,
    dim_names: &[],
    operands: &[
        OperandDef { name: "src", dims: None, output: false },
        OperandDef { name: "dst", dims: None, output: true },
    ],
    accum_init: None,
};

static FILL_ZERO: PrimitiveDef = PrimitiveDef {
    name: "FillZero",
    accum_name: None,
    rank: None,
    dim_names: &[],
    operands: &[OperandDef { name: "out", dims: None, output: true }],
    accum_init: None,
};

impl Primitive {
    /// Every primitive, in a fixed order.
    pub const ALL: [Primitive; 4] = [
        Primitive::Matmul { accum: false },
        Primitive::Matmul { accum: true },
        Primitive::Move,
        Primitive::Fill(FillValue::Zero),
    ];

    /// The family entry in the primitive table.
    pub fn def(self) -> &'static PrimitiveDef {
        match self {
            Primitive::Matmul { .. } => &MATMUL,
            Primitive::Move => &MOVE,
            Primitive::Fill(FillValue::Zero) => &FILL_ZERO,
        }
    }

    /// Whether this is an accumulating variant.
    pub fn is_accumulating(self) -> bool {
        matches!(self, Primitive::Matmul { accum: true })
    }

    /// The accumulating variant of a non-accumulating primitive that has one.
    pub fn accumulating_variant(self) -> Option<Primitive> {
        match self {
            Primitive::Matmul { accum: false } => Some(Primitive::Matmul { accum: true }),
            _ => None,
        }
    }

    /// Name in Spec syntax.
    pub fn name(self) -> &'static str {
        let def = self.def();
        if self.is_accumulating() { def.accum_name.unwrap_or(def.name) } else { def.name }
    }

    /// Looks a primitive up by its Spec-syntax name.
    pub fn from_name(name: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Number of operands.
    pub fn operand_count(self) -> usize {
        self.def().operands.len()
    }

    /// The operand table entries.
    pub fn operands(self) -> &'static [OperandDef] {
        self.def().operands
    }

    /// Direction of operand `i`.
    pub fn direction(self, i: usize) -> Direction {
        let op = &self.def().operands[i];
        match (op.output, self.is_accumulating()) {
            (false, _) => Direction::In,
            (true, false) => Direction::Out,
            (true, true) => Direction::InOut,
        }
    }

    /// Index of the (unique) output operand.
    pub fn output_index(self) -> usize {
        self.def().operands.iter().position(|o| o.output).expect("every primitive has an output")
    }

    /// Whether `rank` is a valid Spec rank.
    pub fn accepts_rank(self, rank: usize) -> bool {
        self.def().rank.is_none_or(|r| r == rank) && rank > 0
    }

    /// The Spec dimensions operand `i`'s dimensions correspond to.
    pub fn operand_dims(self, i: usize, spec_rank: usize) -> Shape {
        match self.def().operands[i].dims {
            Some(dims) => dims.iter().map(|&d| d as u32).collect(),
            None => (0..spec_rank as u32).collect(),
        }
    }

    /// The shape of operand `i` for a Spec of shape `spec_shape`.
    pub fn operand_shape(self, i: usize, spec_shape: &[u32]) -> Shape {
        self.operand_dims(i, spec_shape.len()).iter().map(|&d| spec_shape[d as usize]).collect()
    }

    /// Spec dimensions that do not index the output: tiling them re-visits output elements,
    /// which only accumulating primitives allow.
    pub fn reduction_dims(self, spec_rank: usize) -> Shape {
        let out = self.operand_dims(self.output_index(), spec_rank);
        (0..spec_rank as u32).filter(|d| !out.contains(d)).collect()
    }

    /// A human name for Spec dimension `d` (`k`, or `dim 2`).
    pub fn dim_name(self, d: usize) -> String {
        match self.def().dim_names.get(d) {
            Some(name) => (*name).to_owned(),
            None => format!("dimension {d}"),
        }
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
    fn names_round_trip() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_name(p.name()), Some(p));
        }
    }
}
