//! The table entries, one per primitive family.

use super::semantics::{self, HostTensor, Tolerances};
use super::{FillValue, Primitive};
use crate::dtype::Dtype;
use crate::index::IndexArith;

/// An operand dimension, as a function of the Spec's dimensions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DimExpr {
    /// Spec dimension `d`.
    Spec(u8),
    /// Always 1 (a reduced or prefix dimension).
    One,
    /// A sliding window: `out + filter − 1` positions (Conv's image rows and columns).
    Window {
        /// The output dimension.
        out: u8,
        /// The filter dimension.
        filter: u8,
    },
}

impl DimExpr {
    /// The operand extent for a Spec (or tile) of shape `spec`.
    pub fn extent(self, spec: &[u32]) -> u32 {
        match self {
            DimExpr::Spec(d) => spec[usize::from(d)],
            DimExpr::One => 1,
            DimExpr::Window { out, filter } => spec[usize::from(out)] + spec[usize::from(filter)] - 1,
        }
    }

    /// Whether this operand dimension varies with Spec dimension `d`.
    pub fn uses(self, d: u8) -> bool {
        match self {
            DimExpr::Spec(s) => s == d,
            DimExpr::One => false,
            DimExpr::Window { out, filter } => out == d || filter == d,
        }
    }

    /// The operand coordinate of a tile whose origin is at `offsets` in Spec coordinates.
    pub fn offset<E: IndexArith>(self, offsets: &[E]) -> E {
        match self {
            DimExpr::Spec(d) => offsets[usize::from(d)].clone(),
            DimExpr::One => E::constant(0),
            DimExpr::Window { out, filter } => {
                offsets[usize::from(out)].clone().add(offsets[usize::from(filter)].clone())
            }
        }
    }
}

/// How an operand's dimensions derive from the Spec's.
#[derive(Clone, Copy, Debug)]
pub enum DimRule {
    /// The Spec's dimensions.
    Same,
    /// The Spec's dimensions with the parameter dimension reduced to 1.
    Reduced,
    /// A leading 1, then the Spec's dimensions.
    Prefixed,
    /// An explicit list.
    Fixed(&'static [DimExpr]),
}

/// What a primitive's accumulating variant expects an output to hold before it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AccumInit {
    /// Zero.
    Zero,
    /// The lowest value: −∞ for floats, the dtype's minimum for integers.
    Lowest,
}

/// What a primitive does with an operand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// Read.
    Input,
    /// Written; the accumulating variant reads and updates it when `init` is given.
    Output {
        /// The initial value `to_accum` writes, for outputs the accumulating variant updates.
        init: Option<AccumInit>,
    },
    /// Read and written in place.
    InOut,
}

/// One operand of a primitive.
#[derive(Debug)]
pub struct OperandDef {
    /// Name used in wrappers and messages (a valid Rust identifier).
    pub name: &'static str,
    /// How its dimensions derive from the Spec's.
    pub dims: DimRule,
    /// Whether it is read, written or both.
    pub role: Role,
    /// The operand's dimension along which a register tile reads it one row per step of the
    /// reduction, so that L2 can stream rows that follow each other in memory into L1 while
    /// the multiply-adds run (a Matmul's rhs along `k`; see [`crate::cost::streamed_fill`]).
    pub streamed_rows: Option<u8>,
}

/// Reference semantics: evaluates a primitive of a given shape in place on host tensors, given
/// an error bound on its first operand (per element, row-major) when it is a Compose
/// intermediate; returns the tolerance of every written element.
pub type Semantics = fn(Primitive, &[u32], &mut [HostTensor], Option<&[f64]>) -> Tolerances;

/// A family of primitives sharing operands, shape rules and semantics.
#[derive(Debug)]
pub struct PrimitiveDef {
    /// Required Spec rank, or `None` for any rank.
    pub rank: Option<usize>,
    /// Names of the Spec dimensions, for messages (fixed-rank families).
    pub dim_names: &'static [&'static str],
    /// The name of the dimension parameter in Spec syntax, if the family has one.
    pub param: Option<&'static str>,
    /// The operands, in parameter order.
    pub operands: &'static [OperandDef],
    /// Whether the parameter dimension may not be tiled (the computation needs all of it).
    pub untileable_param: bool,
    /// Reference semantics.
    pub semantics: Semantics,
}

const fn operand(name: &'static str, dims: DimRule, role: Role) -> OperandDef {
    OperandDef { name, dims, role, streamed_rows: None }
}

impl OperandDef {
    /// The operand, read one row along dimension `dim` per reduction step.
    const fn streamed_along(self, dim: u8) -> OperandDef {
        OperandDef { streamed_rows: Some(dim), ..self }
    }
}
const IN: Role = Role::Input;
const OUT: Role = Role::Output { init: None };
const ACCUM_ZERO: Role = Role::Output { init: Some(AccumInit::Zero) };
const ACCUM_LOWEST: Role = Role::Output { init: Some(AccumInit::Lowest) };
use DimExpr::{Spec as S, Window as W};

static MATMUL: PrimitiveDef = PrimitiveDef {
    rank: Some(4),
    dim_names: &["b", "m", "k", "n"],
    param: None,
    operands: &[
        operand("lhs", DimRule::Fixed(&[S(0), S(1), S(2)]), IN),
        operand("rhs", DimRule::Fixed(&[S(0), S(2), S(3)]), IN).streamed_along(1),
        operand("out", DimRule::Fixed(&[S(0), S(1), S(3)]), ACCUM_ZERO),
    ],
    untileable_param: false,
    semantics: semantics::matmul,
};

static CONV: PrimitiveDef = PrimitiveDef {
    rank: Some(7),
    dim_names: &["b", "f", "c", "h", "w", "fh", "fw"],
    param: None,
    operands: &[
        operand("image", DimRule::Fixed(&[S(0), S(2), W { out: 3, filter: 5 }, W { out: 4, filter: 6 }]), IN),
        operand("filters", DimRule::Fixed(&[S(1), S(2), S(5), S(6)]), IN),
        operand("out", DimRule::Fixed(&[S(0), S(1), S(3), S(4)]), ACCUM_ZERO),
    ],
    untileable_param: false,
    semantics: semantics::conv,
};

static MOVE: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: None,
    operands: &[operand("src", DimRule::Same, IN), operand("dst", DimRule::Same, OUT)],
    untileable_param: false,
    semantics: semantics::copy,
};

static FILL: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: None,
    operands: &[operand("out", DimRule::Same, OUT)],
    untileable_param: false,
    semantics: semantics::fill,
};

static ONE_PREFIX: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: None,
    operands: &[operand("input", DimRule::Same, IN), operand("out", DimRule::Prefixed, OUT)],
    untileable_param: false,
    semantics: semantics::copy,
};

static BROADCAST: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: Some("dim"),
    operands: &[operand("input", DimRule::Reduced, IN), operand("out", DimRule::Same, OUT)],
    untileable_param: false,
    semantics: semantics::copy,
};

static DIVIDE_VEC: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: None,
    operands: &[operand("values", DimRule::Same, Role::InOut), operand("divisor", DimRule::Same, IN)],
    untileable_param: false,
    semantics: semantics::divide,
};

static DIVIDE_VEC_SCALAR: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: Some("scan"),
    operands: &[operand("values", DimRule::Same, Role::InOut), operand("scalars", DimRule::Reduced, IN)],
    untileable_param: false,
    semantics: semantics::divide,
};

static MAX: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: Some("dim"),
    operands: &[operand("input", DimRule::Same, IN), operand("out", DimRule::Reduced, ACCUM_LOWEST)],
    untileable_param: false,
    semantics: semantics::max,
};

static SOFTMAX: PrimitiveDef = PrimitiveDef {
    rank: None,
    dim_names: &[],
    param: Some("scan"),
    operands: &[operand("input", DimRule::Same, IN), operand("out", DimRule::Same, OUT)],
    untileable_param: true,
    semantics: semantics::softmax,
};

/// A part of the softmax decompositions: any rank, a `scan` dimension that may be tiled (the
/// parts reduce or broadcast along it), the shared softmax semantics.
const fn softmax_part(operands: &'static [OperandDef]) -> PrimitiveDef {
    PrimitiveDef {
        rank: None,
        dim_names: &[],
        param: Some("scan"),
        operands,
        untileable_param: false,
        semantics: semantics::softmax,
    }
}

static SOFTMAX_COMPLETE: PrimitiveDef = softmax_part(&[
    operand("input", DimRule::Same, IN),
    operand("max", DimRule::Reduced, IN),
    operand("denom", DimRule::Reduced, IN),
    operand("out", DimRule::Same, OUT),
]);

static SOFTMAX_DENOMINATOR: PrimitiveDef = softmax_part(&[
    operand("input", DimRule::Same, IN),
    operand("max", DimRule::Reduced, IN),
    operand("denom", DimRule::Reduced, ACCUM_ZERO),
]);

static SOFTMAX_DENOMINATOR_AND_MAX: PrimitiveDef = softmax_part(&[
    operand("input", DimRule::Same, IN),
    operand("max", DimRule::Reduced, ACCUM_LOWEST),
    operand("denom", DimRule::Reduced, ACCUM_ZERO),
]);

static SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS: PrimitiveDef = softmax_part(&[
    operand("part_max", DimRule::Same, IN),
    operand("part_denom", DimRule::Same, IN),
    operand("max", DimRule::Reduced, ACCUM_LOWEST),
    operand("denom", DimRule::Reduced, ACCUM_ZERO),
]);

static SOFTMAX_DENOMINATOR_AND_UNSCALED: PrimitiveDef = softmax_part(&[
    operand("input", DimRule::Same, IN),
    operand("denom", DimRule::Reduced, OUT),
    operand("unscaled", DimRule::Same, OUT),
]);

static SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX: PrimitiveDef = softmax_part(&[
    operand("input", DimRule::Same, IN),
    operand("max", DimRule::Reduced, IN),
    operand("denom", DimRule::Reduced, ACCUM_ZERO),
    operand("unscaled", DimRule::Same, OUT),
]);

/// The table entry of `p`'s family.
pub(super) fn def(p: Primitive) -> &'static PrimitiveDef {
    match p {
        Primitive::Matmul { .. } => &MATMUL,
        Primitive::Conv { .. } => &CONV,
        Primitive::Move => &MOVE,
        Primitive::Fill(_) => &FILL,
        Primitive::OnePrefix => &ONE_PREFIX,
        Primitive::Broadcast { .. } => &BROADCAST,
        Primitive::DivideVec => &DIVIDE_VEC,
        Primitive::DivideVecScalar { .. } => &DIVIDE_VEC_SCALAR,
        Primitive::Max { .. } => &MAX,
        Primitive::Softmax { .. } => &SOFTMAX,
        Primitive::SoftmaxComplete { .. } => &SOFTMAX_COMPLETE,
        Primitive::SoftmaxDenominator { .. } => &SOFTMAX_DENOMINATOR,
        Primitive::SoftmaxDenominatorAndMax { .. } => &SOFTMAX_DENOMINATOR_AND_MAX,
        Primitive::SoftmaxDenominatorAndMaxFromParts { .. } => &SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS,
        Primitive::SoftmaxDenominatorAndUnscaled { .. } => &SOFTMAX_DENOMINATOR_AND_UNSCALED,
        Primitive::SoftmaxDenominatorAndUnscaledFromMax { .. } => &SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX,
    }
}

/// Whether `from` can be moved into `to`: equal, bf16 → f32, or an integer widening that
/// preserves every value.
pub fn is_upcast(from: Dtype, to: Dtype) -> bool {
    use Dtype::*;
    from == to
        || matches!(
            (from, to),
            (Bf16, F32) | (U8, U16 | I16 | U32 | I32) | (I8, I16 | I32) | (U16, U32 | I32) | (I16, I32)
        )
}

/// The dtype rules of each family.
pub(super) fn check_dtypes(p: Primitive, dtypes: &[Dtype]) -> Result<(), String> {
    let all_float = || dtypes.iter().all(|d| d.is_float());
    let same = || dtypes.windows(2).all(|w| w[0] == w[1]);
    match p {
        Primitive::Matmul { .. } | Primitive::Conv { .. } => {
            let floats = dtypes.iter().filter(|d| d.is_float()).count();
            if floats == 0 || floats == dtypes.len() {
                Ok(())
            } else {
                Err(format!("{p} cannot mix integer and float dtypes ({})", join(dtypes)))
            }
        }
        Primitive::Move => {
            if is_upcast(dtypes[0], dtypes[1]) {
                Ok(())
            } else {
                Err(format!(
                    "a Move can keep its dtype or widen it without loss (bf16 → f32, or a wider integer type); \
                     {} → {} is not allowed",
                    dtypes[0], dtypes[1]
                ))
            }
        }
        Primitive::Fill(FillValue::NegInf) if !dtypes[0].is_float() => {
            Err(format!("FillNegInf needs a float dtype; {} has no infinity (use FillMin)", dtypes[0]))
        }
        Primitive::Fill(_) => Ok(()),
        Primitive::OnePrefix | Primitive::Broadcast { .. } | Primitive::Max { .. } => {
            if same() {
                Ok(())
            } else {
                Err(format!("{p} needs one dtype for all operands ({})", join(dtypes)))
            }
        }
        _ => {
            if all_float() {
                Ok(())
            } else {
                Err(format!("{p} is defined for float dtypes only ({})", join(dtypes)))
            }
        }
    }
}

fn join(dtypes: &[Dtype]) -> String {
    dtypes.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
}
