//! Fill and broadcast microkernels: `memset`, single-element and whole-register constants (0,
//! −∞, the dtype's minimum), and a scalar splatted across registers or copied.

use super::check::Checker;
use super::{
    KernelDef, KernelEmitter, KernelMismatch, MEMORY, SCALAR, VECTOR, any_register_tiles, no_registers, operand_moves,
};
use crate::dtype::Dtype;
use crate::primitive::{FillValue, Primitive};
use crate::spec::LogicalSpec;

/// The C expression of `value` in `dtype`'s storage type (bf16 as its bits).
fn literal(value: FillValue, dtype: Dtype) -> &'static str {
    match (value, dtype) {
        (FillValue::Zero, _) => "0",
        (FillValue::NegInf, Dtype::Bf16) => "(uint16_t)0xff80u",
        (FillValue::NegInf, _) => "(-__builtin_inff())",
        (FillValue::Min, Dtype::Bf16) => "(uint16_t)0xff7fu",
        (FillValue::Min, Dtype::F32) => "(-3.40282347e+38f)",
        (FillValue::Min, Dtype::I8) => "INT8_MIN",
        (FillValue::Min, Dtype::I16) => "INT16_MIN",
        (FillValue::Min, Dtype::I32) => "INT32_MIN",
        (FillValue::Min, Dtype::U8 | Dtype::U16 | Dtype::U32) => "0",
    }
}

fn fill_value(spec: &LogicalSpec) -> FillValue {
    match spec.primitive() {
        Some(Primitive::Fill(v)) => v,
        other => unreachable!("a fill kernel applied to {other:?}"),
    }
}

fn emit_value_fill(spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
    let dst = out.scalar(0);
    out.line(format!("{dst} = {};", literal(fill_value(spec), spec.operands()[0].dtype())));
}

fn emit_vector_fill(spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
    let t = &spec.operands()[0];
    let ty = out.vector_type(t.dtype(), t.vector_size().expect("VRF operand"));
    let value = literal(fill_value(spec), t.dtype());
    for v in out.vectors(0) {
        if value == "0" {
            out.line(format!("{v} = ({ty}){{0}};"));
        } else {
            out.line(format!("{v} = ({ty}){{0}} + {value};"));
        }
    }
}

fn vector_fill_applies(c: &Checker, target: &crate::target::Target) -> Result<(), KernelMismatch> {
    c.has_vectors(target)?;
    c.contiguous(0)
}

/// `memset`s a contiguous tensor in memory to zero.
pub static MEMSET_ZERO: KernelDef = KernelDef {
    name: "MemsetZero",
    implements: "FillZero",
    matches: |p| p == Primitive::Fill(FillValue::Zero),
    levels: &[MEMORY],
    applies: |c, _| c.contiguous(0),
    cost: |spec, target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let base = out.address(0);
        let t = &spec.operands()[0];
        out.line(format!("memset({base}, 0, {});", t.data_bytes()));
    },
};

macro_rules! fill_kernels {
    ($($value_kernel:ident, $value_name:literal, $vector_kernel:ident, $vector_name:literal, $fill:expr, $prim:literal;)*) => {$(
        #[doc = concat!("Sets one element to the constant of ", $prim, ".")]
        pub static $value_kernel: KernelDef = KernelDef {
            name: $value_name,
            implements: $prim,
            matches: |p| p == Primitive::Fill($fill),
            levels: &[SCALAR],
            applies: |c, _| c.scalar(0),
            cost: |spec, target| 1 + operand_moves(spec, target),
            registers: no_registers,
            register_tiles: any_register_tiles,
            emit: emit_value_fill,
        };

        #[doc = concat!("Sets whole vector registers to the constant of ", $prim, ".")]
        pub static $vector_kernel: KernelDef = KernelDef {
            name: $vector_name,
            implements: $prim,
            matches: |p| p == Primitive::Fill($fill),
            levels: &[VECTOR],
            applies: vector_fill_applies,
            cost: |spec, _| spec.operands()[0].vector_count(),
            registers: no_registers,
            register_tiles: any_register_tiles,
            emit: emit_vector_fill,
        };
    )*};
}

fill_kernels! {
    VALUE_ZERO, "ValueZero", VECTOR_ZERO, "VectorZero", FillValue::Zero, "FillZero";
    VALUE_NEG_INF, "ValueNegInf", VECTOR_NEG_INF, "VectorNegInf", FillValue::NegInf, "FillNegInf";
    VALUE_MIN, "ValueMin", VECTOR_MIN, "VectorMin", FillValue::Min, "FillMin";
}

fn is_broadcast(p: Primitive) -> bool {
    matches!(p, Primitive::Broadcast { .. })
}

/// Copies a single element (a Broadcast of one element).
pub static VALUE_BROADCAST: KernelDef = KernelDef {
    name: "ValueBroadcast",
    implements: "Broadcast",
    matches: is_broadcast,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |_, out| {
        let (src, dst) = (out.scalar(0), out.scalar(1));
        out.line(format!("{dst} = {src};"));
    },
};

/// Splats one element across vector registers.
pub static VEC_SCALAR_ASSIGN: KernelDef = KernelDef {
    name: "VecScalarAssign",
    implements: "Broadcast",
    matches: is_broadcast,
    levels: &[SCALAR, VECTOR],
    applies: |c, target| {
        c.has_vectors(target)?;
        c.scalar(0)?;
        c.contiguous(1)
    },
    cost: |spec, target| spec.operands()[1].vector_count() + 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let t = &spec.operands()[1];
        let ty = out.vector_type(t.dtype(), t.vector_size().expect("VRF operand"));
        let src = out.scalar(0);
        for v in out.vectors(1) {
            out.line(format!("{v} = ({ty}){{0}} + {src};"));
        }
    },
};
