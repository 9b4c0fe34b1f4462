//! Softmax-part microkernels, each as a single-element ("value") kernel for every float dtype
//! and target, and a vector kernel over f32 registers using the vector `exp`:
//!
//! * SoftmaxComplete: `out = exp(x − max) / denom`;
//! * SoftmaxDenominatorAccum: `denom += Σ exp(x − max)`;
//! * SoftmaxDenominatorAndMaxAccum (online softmax): `max' = max(max, x…)`,
//!   `denom' = denom·exp(max − max') + Σ exp(x − max')`;
//! * SoftmaxDenominatorAndMaxFromPartsAccum: the same merge, of per-chunk maxima and
//!   denominators;
//! * SoftmaxDenominatorAndUnscaledFromMaxAccum: `unscaled = exp(x − max)`, `denom += Σ unscaled`.
//!
//! A running denominator is rescaled only when the maximum changes (so `exp(0)` never adds
//! error, and an empty running sum at −∞ stays 0).

use super::check::Checker;
use super::elementwise::fold_max;
use super::emit::{KernelEmitter, lanes, read_float, write_float};
use super::helpers::Helper;
use super::{KernelDef, KernelMismatch, SCALAR, VECTOR, any_register_tiles, operand_moves};
use crate::dtype::Dtype;
use crate::primitive::Primitive;
use crate::spec::LogicalSpec;
use crate::target::Target;

/// The cost of one scalar `exp`.
const SCALAR_EXP: u64 = 17;
/// The cost of one vector `exp` per register.
const VECTOR_EXP: u64 = 16;
/// Vector registers the vector `exp` occupies.
const EXP_REGISTERS: u64 = 5;

fn all_f32_vectors(c: &Checker, target: &Target, vectors: &[usize]) -> Result<(), KernelMismatch> {
    c.has_vectors(target)?;
    c.same_dtype_in(&[Dtype::F32], "f32")?;
    for &i in vectors {
        c.contiguous(i)?;
    }
    for w in vectors.windows(2) {
        c.same_vectors(w[0], w[1])?;
    }
    Ok(())
}

fn scalar_args(c: &Checker, scalars: &[usize]) -> Result<(), KernelMismatch> {
    scalars.iter().try_for_each(|&i| c.scalar(i))
}

fn vector_count(spec: &LogicalSpec, i: usize) -> u64 {
    spec.operands()[i].vector_count()
}

/// Emits `d = rescale(d, from, to)`: `d · exp(from − to)` unless the maximum is unchanged.
fn rescale(d: &str, from: &str, to: &str, out: &mut dyn KernelEmitter) -> String {
    let exp = out.helper(Helper::ExpF32);
    format!("({from} == {to} ? {d} : {d} * {exp}({from} - {to}))")
}

/// The vector `exp` of `x − m` for each register of operand `i`.
fn exps(spec: &LogicalSpec, i: usize, m: &str, out: &mut dyn KernelEmitter) -> Vec<String> {
    let l = lanes(spec, i);
    let (exp, ty) = (out.helper(Helper::VectorExp(l)), out.vector_type(Dtype::F32, l));
    out.vectors(i)
        .iter()
        .map(|x| {
            let e = out.fresh("e");
            out.line(format!("const {ty} {e} = {exp}({x} - {m});"));
            e
        })
        .collect()
}

fn is_complete(p: Primitive) -> bool {
    matches!(p, Primitive::SoftmaxComplete { .. })
}

/// `out = exp(x − max) / denom` on single elements.
pub static VALUE_SOFTMAX_COMPLETE: KernelDef = KernelDef {
    name: "ValueSoftmaxComplete",
    implements: "SoftmaxComplete",
    matches: is_complete,
    levels: &[SCALAR, SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| SCALAR_EXP + 4 + operand_moves(spec, target),
    registers: super::no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let exp = out.helper(Helper::ExpF32);
        let (x, m, d) = (read_float(spec, 0, out), read_float(spec, 1, out), read_float(spec, 2, out));
        write_float(spec, 3, &format!("{exp}({x} - {m}) / {d}"), out);
    },
};

/// `out = exp(x − max) · (1 / denom)` over f32 registers.
pub static VECTOR_SOFTMAX_COMPLETE: KernelDef = KernelDef {
    name: "VectorSoftmaxComplete",
    implements: "SoftmaxComplete",
    matches: is_complete,
    levels: &[VECTOR, SCALAR, SCALAR, VECTOR],
    applies: |c, target| {
        all_f32_vectors(c, target, &[0, 3])?;
        scalar_args(c, &[1, 2])
    },
    cost: |spec, target| (VECTOR_EXP + 2) * vector_count(spec, 0) + 4 + operand_moves(spec, target),
    registers: |_, _| EXP_REGISTERS + 1,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let (m, d) = (out.scalar(1), out.scalar(2));
        let (mv, r) = (out.fresh("m"), out.fresh("r"));
        out.open("{".to_owned());
        out.line(format!("const float {mv} = {m}, {r} = 1.0f / {d};"));
        let es = exps(spec, 0, &mv, out);
        for (o, e) in out.vectors(3).iter().zip(&es) {
            out.line(format!("{o} = {e} * {r};"));
        }
        out.close();
    },
};

fn is_denominator(p: Primitive) -> bool {
    matches!(p, Primitive::SoftmaxDenominator { accum: true, .. })
}

/// `denom += exp(x − max)` on single elements.
pub static VALUE_SOFTMAX_DENOMINATOR: KernelDef = KernelDef {
    name: "ValueSoftmaxDenominator",
    implements: "SoftmaxDenominatorAccum",
    matches: is_denominator,
    levels: &[SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| SCALAR_EXP + 2 + operand_moves(spec, target),
    registers: super::no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let exp = out.helper(Helper::ExpF32);
        let (x, m, d) = (read_float(spec, 0, out), read_float(spec, 1, out), read_float(spec, 2, out));
        write_float(spec, 2, &format!("{d} + {exp}({x} - {m})"), out);
    },
};

/// `denom += Σ exp(x − max)` over f32 registers.
pub static VECTOR_SOFTMAX_DENOMINATOR: KernelDef = KernelDef {
    name: "VectorSoftmaxDenominator",
    implements: "SoftmaxDenominatorAccum",
    matches: is_denominator,
    levels: &[VECTOR, SCALAR, SCALAR],
    applies: |c, target| {
        all_f32_vectors(c, target, &[0])?;
        scalar_args(c, &[1, 2])
    },
    cost: |spec, target| (VECTOR_EXP + 1) * vector_count(spec, 0) + 6 + operand_moves(spec, target),
    registers: |_, _| EXP_REGISTERS + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = lanes(spec, 0);
        let m = out.scalar(1);
        let mv = out.fresh("m");
        out.open("{".to_owned());
        out.line(format!("const float {mv} = {m};"));
        let es = exps(spec, 0, &mv, out);
        let hsum = out.helper(Helper::HorizontalSum(l));
        let d = out.scalar(2);
        out.line(format!("{d} = {d} + {hsum}({});", es.join(" + ")));
        out.close();
    },
};

fn is_sdam(p: Primitive) -> bool {
    matches!(p, Primitive::SoftmaxDenominatorAndMax { accum: true, .. })
}

/// Online softmax on one element: `max' = max(max, x)`, `denom' = rescaled denom + exp(x − max')`.
pub static VALUE_SOFTMAX_DENOMINATOR_AND_MAX: KernelDef = KernelDef {
    name: "ValueSoftmaxDenominatorAndMax",
    implements: "SoftmaxDenominatorAndMaxAccum",
    matches: is_sdam,
    levels: &[SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 2 * SCALAR_EXP + 6 + operand_moves(spec, target),
    registers: super::no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let exp = out.helper(Helper::ExpF32);
        let max = out.helper(Helper::Max(Dtype::F32));
        let (x, m0, d0) = (read_float(spec, 0, out), read_float(spec, 1, out), read_float(spec, 2, out));
        let (xv, old, new) = (out.fresh("x"), out.fresh("m"), out.fresh("m"));
        out.open("{".to_owned());
        out.line(format!("const float {xv} = {x}, {old} = {m0}, {new} = {max}({xv}, {old});"));
        let scaled = rescale(&d0, &old, &new, out);
        write_float(spec, 2, &format!("{scaled} + {exp}({xv} - {new})"), out);
        write_float(spec, 1, &new, out);
        out.close();
    },
};

/// Online softmax over f32 registers: the registers' maximum, then one rescale and the sum of
/// their exponentials.
pub static VECTOR_SOFTMAX_DENOMINATOR_AND_MAX: KernelDef = KernelDef {
    name: "VectorSoftmaxDenominatorAndMax",
    implements: "SoftmaxDenominatorAndMaxAccum",
    matches: is_sdam,
    levels: &[VECTOR, SCALAR, SCALAR],
    applies: |c, target| {
        all_f32_vectors(c, target, &[0])?;
        scalar_args(c, &[1, 2])
    },
    cost: |spec, target| (VECTOR_EXP + 2) * vector_count(spec, 0) + 2 * SCALAR_EXP + 10 + operand_moves(spec, target),
    registers: |_, _| EXP_REGISTERS + 3,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = lanes(spec, 0);
        out.open("{".to_owned());
        let new = online_maximum(spec, l, 1, out);
        let es = exps(spec, 0, &new.1, out);
        finish_online(spec, &new, &es.join(" + "), l, (1, 2), out);
        out.close();
    },
};

/// Declares the old maximum (operand `max_operand`) and the new one, the larger of it and the
/// lanes of operand 0's registers; returns (old, new) local names.
fn online_maximum(spec: &LogicalSpec, l: u32, max_operand: usize, out: &mut dyn KernelEmitter) -> (String, String) {
    let (hmax, max) = (out.helper(Helper::HorizontalMax(Dtype::F32, l)), out.helper(Helper::Max(Dtype::F32)));
    let folded = fold_max(&out.vectors(0), Dtype::F32, l, out);
    let m0 = read_float(spec, max_operand, out);
    let (old, new) = (out.fresh("m"), out.fresh("m"));
    out.line(format!("const float {old} = {m0}, {new} = {max}({hmax}({folded}), {old});"));
    (old, new)
}

/// Stores the new maximum and `denom' = rescaled denom + lanes of sum`.
fn finish_online(
    spec: &LogicalSpec,
    (old, new): &(String, String),
    sum: &str,
    l: u32,
    (max_operand, denom_operand): (usize, usize),
    out: &mut dyn KernelEmitter,
) {
    let hsum = out.helper(Helper::HorizontalSum(l));
    let d0 = read_float(spec, denom_operand, out);
    let scaled = rescale(&d0, old, new, out);
    write_float(spec, denom_operand, &format!("{scaled} + {hsum}({sum})"), out);
    write_float(spec, max_operand, new, out);
}

fn is_from_parts(p: Primitive) -> bool {
    matches!(p, Primitive::SoftmaxDenominatorAndMaxFromParts { accum: true, .. })
}

/// Merges one partial maximum and denominator into the running ones.
pub static VALUE_SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS: KernelDef = KernelDef {
    name: "ValueSoftmaxDenominatorAndMaxFromParts",
    implements: "SoftmaxDenominatorAndMaxFromPartsAccum",
    matches: is_from_parts,
    levels: &[SCALAR, SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 2 * SCALAR_EXP + 7 + operand_moves(spec, target),
    registers: super::no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let max = out.helper(Helper::Max(Dtype::F32));
        let (pm, pd) = (read_float(spec, 0, out), read_float(spec, 1, out));
        let (m0, d0) = (read_float(spec, 2, out), read_float(spec, 3, out));
        let (pmv, old, new) = (out.fresh("p"), out.fresh("m"), out.fresh("m"));
        out.open("{".to_owned());
        out.line(format!("const float {pmv} = {pm}, {old} = {m0}, {new} = {max}({pmv}, {old});"));
        let (a, b) = (rescale(&d0, &old, &new, out), rescale(&pd, &pmv, &new, out));
        write_float(spec, 3, &format!("{a} + {b}"), out);
        write_float(spec, 2, &new, out);
        out.close();
    },
};

/// Merges registers of partial maxima and denominators into the running ones.
pub static VECTOR_SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS: KernelDef = KernelDef {
    name: "VectorSoftmaxDenominatorAndMaxFromParts",
    implements: "SoftmaxDenominatorAndMaxFromPartsAccum",
    matches: is_from_parts,
    levels: &[VECTOR, VECTOR, SCALAR, SCALAR],
    applies: |c, target| {
        all_f32_vectors(c, target, &[0, 1])?;
        scalar_args(c, &[2, 3])
    },
    cost: |spec, target| (VECTOR_EXP + 3) * vector_count(spec, 0) + 2 * SCALAR_EXP + 10 + operand_moves(spec, target),
    registers: |_, _| EXP_REGISTERS + 3,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = lanes(spec, 0);
        out.open("{".to_owned());
        let new = online_maximum(spec, l, 2, out);
        let es = exps(spec, 0, &new.1, out);
        // A part whose maximum is the new one keeps its denominator unscaled, as in the
        // scalar kernel (this also keeps all-−∞ parts, where `exp(−∞ − −∞)` is NaN, finite).
        let (fty, ity) = (out.vector_type(Dtype::F32, l), out.vector_type(Dtype::I32, l));
        let (maxima, denominators) = (out.vectors(0), out.vectors(1));
        let mut terms = Vec::new();
        for ((p, d), e) in maxima.iter().zip(&denominators).zip(&es) {
            let same = out.fresh("same");
            out.line(format!("const {ity} {same} = {p} == {};", new.1));
            terms.push(format!("({fty})((({ity})({d} * {e}) & ~{same}) | (({ity}){d} & {same}))"));
        }
        finish_online(spec, &new, &terms.join(" + "), l, (2, 3), out);
        out.close();
    },
};

fn is_unscaled_from_max(p: Primitive) -> bool {
    matches!(p, Primitive::SoftmaxDenominatorAndUnscaledFromMax { accum: true, .. })
}

/// `unscaled = exp(x − max)`, `denom += unscaled` on single elements.
pub static VALUE_SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX: KernelDef = KernelDef {
    name: "ValueSoftmaxDenominatorAndUnscaledFromMax",
    implements: "SoftmaxDenominatorAndUnscaledFromMaxAccum",
    matches: is_unscaled_from_max,
    levels: &[SCALAR, SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| SCALAR_EXP + 3 + operand_moves(spec, target),
    registers: super::no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let exp = out.helper(Helper::ExpF32);
        let (x, m, d) = (read_float(spec, 0, out), read_float(spec, 1, out), read_float(spec, 2, out));
        let u = out.fresh("u");
        out.open("{".to_owned());
        out.line(format!("const float {u} = {exp}({x} - {m});"));
        write_float(spec, 3, &u, out);
        write_float(spec, 2, &format!("{d} + {u}"), out);
        out.close();
    },
};

/// `unscaled = exp(x − max)`, `denom += Σ unscaled` over f32 registers.
pub static VECTOR_SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX: KernelDef = KernelDef {
    name: "VectorSoftmaxDenominatorAndUnscaledFromMax",
    implements: "SoftmaxDenominatorAndUnscaledFromMaxAccum",
    matches: is_unscaled_from_max,
    levels: &[VECTOR, SCALAR, SCALAR, VECTOR],
    applies: |c, target| {
        all_f32_vectors(c, target, &[0, 3])?;
        scalar_args(c, &[1, 2])
    },
    cost: |spec, target| (VECTOR_EXP + 2) * vector_count(spec, 0) + 6 + operand_moves(spec, target),
    registers: |_, _| EXP_REGISTERS + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = lanes(spec, 0);
        let m = out.scalar(1);
        let mv = out.fresh("m");
        out.open("{".to_owned());
        out.line(format!("const float {mv} = {m};"));
        let es = exps(spec, 0, &mv, out);
        for (u, e) in out.vectors(3).iter().zip(&es) {
            out.line(format!("{u} = {e};"));
        }
        let hsum = out.helper(Helper::HorizontalSum(l));
        let d = out.scalar(2);
        out.line(format!("{d} = {d} + {hsum}({});", es.join(" + ")));
        out.close();
    },
};
