//! Element-wise microkernels: divisions (DivideVec, DivideVecScalar) and maxima (MaxAccum).

use super::check::Checker;
use super::emit::{KernelEmitter, read_float, read_value, unrolled_loop, write_float, write_value};
use super::helpers::Helper;
use super::{KernelDef, KernelMismatch, L1, SCALAR, VECTOR, any_register_tiles, no_registers, operand_moves};
use crate::dtype::Dtype;
use crate::primitive::Primitive;
use crate::spec::LogicalSpec;
use crate::target::Target;

fn emit_value_divide(spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
    let (v, d) = (read_float(spec, 0, out), read_float(spec, 1, out));
    write_float(spec, 0, &format!("{v} / {d}"), out);
}

/// `values /= divisor` on single elements.
pub static VALUE_DIVIDE: KernelDef = KernelDef {
    name: "ValueDivide",
    implements: "DivideVec",
    matches: |p| p == Primitive::DivideVec,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 4 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: emit_value_divide,
};

/// `values /= divisor` over f32 vector registers.
pub static VECTOR_DIVIDE: KernelDef = KernelDef {
    name: "VectorDivide",
    implements: "DivideVec",
    matches: |p| p == Primitive::DivideVec,
    levels: &[VECTOR, VECTOR],
    applies: |c, target| {
        c.has_vectors(target)?;
        c.same_dtype_in(&[Dtype::F32], "f32")?;
        c.all_contiguous()?;
        c.same_vectors(0, 1)
    },
    cost: |spec, _| 6 * spec.operands()[0].vector_count(),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |_, out| {
        for (v, d) in out.vectors(0).iter().zip(&out.vectors(1)) {
            out.line(format!("{v} = {v} / {d};"));
        }
    },
};

fn is_divide_vec_scalar(p: Primitive) -> bool {
    matches!(p, Primitive::DivideVecScalar { .. })
}

/// `values /= scalar` on single elements.
pub static VALUE_DIVIDE_VEC_SCALAR: KernelDef = KernelDef {
    name: "ValueDivideVecScalar",
    implements: "DivideVecScalar",
    matches: is_divide_vec_scalar,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 4 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: emit_value_divide,
};

/// `values /= scalar` over f32 vector registers: one division for the reciprocal, then a
/// multiplication per register.
pub static DIVIDE_VEC_SCALAR_RECIPROCAL: KernelDef = KernelDef {
    name: "DivideVecScalarReciprocal",
    implements: "DivideVecScalar",
    matches: is_divide_vec_scalar,
    levels: &[VECTOR, SCALAR],
    applies: |c, target| {
        c.has_vectors(target)?;
        c.same_dtype_in(&[Dtype::F32], "f32")?;
        c.scalar(1)?;
        c.contiguous(0)
    },
    cost: |spec, target| 4 + spec.operands()[0].vector_count() + operand_moves(spec, target),
    registers: |_, _| 1,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let d = read_float(spec, 1, out);
        let r = out.fresh("r");
        out.open("{".to_owned());
        out.line(format!("const float {r} = 1.0f / {d};"));
        for v in out.vectors(0) {
            out.line(format!("{v} = {v} * {r};"));
        }
        out.close();
    },
};

fn is_max_accum(p: Primitive) -> bool {
    matches!(p, Primitive::Max { accum: true, .. })
}

/// `out = max(out, input)` on single elements, any dtype.
pub static VALUE_MAX: KernelDef = KernelDef {
    name: "ValueMax",
    implements: "MaxAccum",
    matches: is_max_accum,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let max = out.helper(Helper::Max(spec.operands()[1].dtype()));
        let (x, m) = (read_value(spec, 0, out), read_value(spec, 1, out));
        write_value(spec, 1, &format!("{max}({x}, {m})"), out);
    },
};

/// Vector maxima need compare-and-select on whole lanes: any dtype but bf16 (whose bits do not
/// compare as numbers).
fn vector_max_dtype(c: &Checker) -> Result<(), KernelMismatch> {
    let d = c.op(0).dtype();
    if d != Dtype::Bf16 && c.op(1).dtype() == d { Ok(()) } else { Err(c.dtypes("one dtype other than bf16")) }
}

/// `out = max(out, input)` where the input is a row of vector registers: element-wise maxima,
/// then the lanes.
pub static VECTOR_MAX: KernelDef = KernelDef {
    name: "VectorMax",
    implements: "MaxAccum",
    matches: is_max_accum,
    levels: &[VECTOR, SCALAR],
    applies: |c, target| {
        c.has_vectors(target)?;
        vector_max_dtype(c)?;
        c.scalar(1)?;
        c.contiguous(0)
    },
    cost: |spec, target| spec.operands()[0].vector_count() + 4 + operand_moves(spec, target),
    registers: |_, _| 1,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let t = &spec.operands()[0];
        let l = t.vector_size().expect("VRF operand");
        let regs = out.vectors(0);
        let folded = fold_max(&regs, t.dtype(), l, out);
        finish_max(spec, &folded, l, out);
    },
};

/// Element-wise maximum of `regs` (one vector, in a fresh local if there are several).
pub(super) fn fold_max(regs: &[String], dtype: Dtype, l: u32, out: &mut dyn KernelEmitter) -> String {
    if regs.len() == 1 {
        return regs[0].clone();
    }
    let vmax = out.helper(Helper::VectorMax(dtype, l));
    let ty = out.vector_type(dtype, l);
    let m = out.fresh("m");
    out.line(format!("{ty} {m} = {};", regs[0]));
    for r in &regs[1..] {
        out.line(format!("{m} = {vmax}({r}, {m});"));
    }
    m
}

/// `out = max(out, lanes of v)`.
fn finish_max(spec: &LogicalSpec, v: &str, l: u32, out: &mut dyn KernelEmitter) {
    let dtype = spec.operands()[1].dtype();
    let (hmax, max) = (out.helper(Helper::HorizontalMax(dtype, l)), out.helper(Helper::Max(dtype)));
    let m = read_value(spec, 1, out);
    write_value(spec, 1, &format!("{max}({hmax}({v}), {m})"), out);
}

fn widest_lanes(dtype: Dtype, target: &Target) -> u32 {
    target.widest_vector_bytes() / dtype.size_bytes()
}

/// `out = max(out, input)` over a contiguous row in L1, with up to four vector accumulators.
pub static VECTOR_MAX_LOOP: KernelDef = KernelDef {
    name: "VectorMaxLoop",
    implements: "MaxAccum",
    matches: is_max_accum,
    levels: &[L1, SCALAR],
    applies: |c, target| {
        c.has_vectors(target)?;
        vector_max_dtype(c)?;
        c.scalar(1)?;
        c.contiguous(0)?;
        let l = widest_lanes(c.op(0).dtype(), target);
        c.require(c.op(0).volume().is_multiple_of(u64::from(l)), || {
            format!("the input must fill whole {l}-lane vectors")
        })
    },
    cost: |spec, target| {
        let l = widest_lanes(spec.operands()[0].dtype(), target);
        (spec.operands()[0].volume() / u64::from(l)).div_ceil(2) + 6 + operand_moves(spec, target)
    },
    registers: |_, _| 5,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let t = &spec.operands()[0];
        let l = widest_lanes(t.dtype(), out.target());
        let steps = t.volume() / u64::from(l);
        let accs = steps.clamp(1, 4);
        let (ty, vmax) = (out.vector_type(t.dtype(), l), out.helper(Helper::VectorMax(t.dtype(), l)));
        let base = out.address(0);
        let bytes = l * t.dtype().size_bytes();
        out.open("{".to_owned());
        let names: Vec<String> = (0..accs).map(|_| out.fresh("m")).collect();
        for (a, m) in names.iter().enumerate() {
            out.line(format!("{ty} {m};"));
            out.line(format!("__builtin_memcpy(&{m}, {base} + {}, {bytes});", a as u64 * u64::from(l)));
        }
        unrolled_loop(accs, steps, accs, u64::from(l), out, &mut |out, a, offset| {
            let x = out.fresh("x");
            let m = &names[a as usize];
            out.line(format!("{ty} {x};"));
            out.line(format!("__builtin_memcpy(&{x}, {base} + {offset}, {bytes});"));
            out.line(format!("{m} = {vmax}({x}, {m});"));
        });
        let folded = fold_max(&names, t.dtype(), l, out);
        finish_max(spec, &folded, l, out);
        out.close();
    },
};
