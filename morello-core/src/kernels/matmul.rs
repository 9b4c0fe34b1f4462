//! Matrix-product microkernels (MatmulAccum): scalar multiply-add, the broadcast-vector
//! multiply-add register tile of paper Figure 1 (f32/integer and bf16·bf16→f32), dot-product
//! loops over L1 (f32, with bf16 conversion, and AVX512-BF16 `vdpbf16ps`), and a `vdpbf16ps`
//! register tile.

use super::check::Checker;
use super::emit::{KernelEmitter, lanes, read_float, row_stride, unrolled_loop, widen_bf16};
use super::helpers::Helper;
use super::{KernelDef, KernelMismatch, L1, SCALAR, VECTOR, any_register_tiles, no_registers, operand_moves};
use crate::dtype::Dtype;
use crate::fxhash::FxHashMap;
use crate::layout::{Layout, PhysDim, PhysKind};
use crate::level::Level;
use crate::primitive::Primitive;
use crate::shape::Shape;
use crate::spec::LogicalSpec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use std::cell::RefCell;

pub(super) fn matmul_accum(p: Primitive) -> bool {
    p == Primitive::Matmul { accum: true }
}

const SCALAR_OR_VECTOR: &[Level] = &[Level::RF, Level::L1, Level::VRF];

/// `out += lhs · rhs` on single elements, any dtypes a Matmul accepts (bf16 through f32).
pub static MULT_ADD: KernelDef = KernelDef {
    name: "MultAdd",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[SCALAR, SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| {
        let mut dtypes = spec.operands().iter().map(|t| t.dtype());
        let base = if dtypes.clone().any(|d| d == Dtype::Bf16) {
            6
        } else if dtypes.all(|d| d.is_float()) {
            1
        } else {
            2
        };
        base + operand_moves(spec, target)
    },
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let out_dtype = spec.operands()[2].dtype();
        if out_dtype.is_float() {
            let (a, b, c) = (read_float(spec, 0, out), read_float(spec, 1, out), read_float(spec, 2, out));
            super::emit::write_float(spec, 2, &format!("{c} + {a} * {b}"), out);
        } else {
            // Unsigned 32-bit arithmetic wraps as the Spec requires (narrower types would
            // promote to int and could overflow); converting signed inputs sign-extends.
            let (a, b, c) = (out.scalar(0), out.scalar(1), out.scalar(2));
            let t = out_dtype.c_type();
            out.line(format!("{c} = ({t})((uint32_t){c} + (uint32_t){a} * (uint32_t){b});"));
        }
    },
};

/// Which Matmul input is the broadcast scalar and which the vector: with the lhs in vector
/// registers, a `1×m×1×1` Spec broadcasts the rhs over a column of the lhs; otherwise a
/// `1×1×1×n` Spec broadcasts the lhs over a row of the rhs.
fn orientation(spec: &LogicalSpec) -> (usize, usize) {
    if spec.operands()[0].level() == Level::VRF { (1, 0) } else { (0, 1) }
}

fn broadcast_operands(c: &Checker) -> Result<(usize, usize), KernelMismatch> {
    let (scalar, vector) = orientation(c.spec());
    let ok = match c.spec().shape() {
        [1, 1, 1, _] => scalar == 0,
        [1, _, 1, 1] => scalar == 1,
        _ => false,
    };
    if ok {
        Ok((scalar, vector))
    } else {
        Err(KernelMismatch::Shape(format!(
            "it needs a 1×1×1×n Spec with the rhs in VRF, or a 1×m×1×1 Spec with the lhs in VRF; not {}",
            crate::shape::DisplayShape(c.spec().shape())
        )))
    }
}

fn broadcast_applies(c: &Checker, target: &Target, bf16: bool) -> Result<(), KernelMismatch> {
    c.has_vectors(target)?;
    let (scalar, vector) = broadcast_operands(c)?;
    c.scalar(scalar)?;
    c.level(scalar, SCALAR)?;
    c.level(vector, VECTOR)?;
    c.contiguous(vector)?;
    c.contiguous(2)?;
    if bf16 {
        c.dtypes_are(&[Dtype::Bf16, Dtype::Bf16, Dtype::F32], "bf16 · bf16 → f32")?;
        let (v, o) = (lanes(c.spec(), vector), lanes(c.spec(), 2));
        c.require(c.op(vector).shape()[1..] == c.op(2).shape()[1..] && v % o == 0, || {
            format!("each bf16 register ({v} lanes) must widen into whole f32 registers of the output ({o} lanes)")
        })
    } else {
        c.same_dtype_in(&[Dtype::F32, Dtype::U32, Dtype::U16, Dtype::U8], "one dtype of f32, u32, u16, u8")?;
        c.same_vectors(vector, 2)
    }
}

/// The broadcast kernels' demands on the operands a Matmul holds in registers, for some tile of
/// it: the lhs and the rhs are not both in vector registers (one of them is the broadcast
/// scalar, in RF or L1); an lhs there has a contiguous tile along m alone, and so must the
/// output then (a `1×m×1×1` tile); an rhs there, along n alone (a `1×1×1×n` tile); an output
/// there, along m with an lhs that can still be moved to vector registers (not in RF), or
/// along n with such an rhs.
fn broadcast_register_tiles(spec: &LogicalSpec, target: &Target) -> bool {
    const M: usize = 1;
    const N: usize = 2;
    let operands = spec.operands();
    let in_vectors = |i: usize| operands[i].level() == Level::VRF;
    let vector_along = |i: usize, dim: usize| !in_vectors(i) || has_vector_line(&operands[i], dim, target);
    let movable = |i: usize| operands[i].level() != Level::RF;
    match (in_vectors(0), in_vectors(1)) {
        (true, true) => false,
        (true, false) => vector_along(0, M) && vector_along(2, M),
        (false, true) => vector_along(1, N) && vector_along(2, N),
        (false, false) => movable(0) && vector_along(2, M) || movable(1) && vector_along(2, N),
    }
}

/// Whether some tile of the vector-register tensor `t` that extends along `dim` alone is
/// contiguous and made of whole vectors.
fn has_vector_line(t: &TensorSpec, dim: usize, target: &Target) -> bool {
    has_contiguous_line(t, dim, 1, target)
}

/// Whether some tile of `t` that extends along `dim` alone, over at least `least` values, is
/// contiguous (in vector registers: and made of whole vectors). It depends on the tensor alone,
/// and the search asks about the same few tensors many times.
pub(crate) fn has_contiguous_line(t: &TensorSpec, dim: usize, least: u32, target: &Target) -> bool {
    /// A question: the tensor, the dimension, the least extent and the target's name.
    type Line = (TensorSpec, usize, u32, &'static str);
    thread_local! {
        static ANSWERS: RefCell<FxHashMap<Line, bool>> = RefCell::default();
    }
    let key = (t.clone(), dim, least, target.name);
    if let Some(known) = ANSWERS.with_borrow(|answers| answers.get(&key).copied()) {
        return known;
    }
    let mut shape: Shape = t.shape().iter().map(|_| 1).collect();
    let answer = (least.max(1)..=t.shape()[dim]).any(|extent| {
        shape[dim] = extent;
        t.tile(&shape, target).is_ok_and(|tile| tile.is_contiguous())
    });
    ANSWERS.with_borrow_mut(|answers| answers.insert(key, answer));
    answer
}

/// `out[j] += scalar · vector[j]` over vector registers: one broadcast and one multiply-add per
/// output register (paper Figure 1; `vbroadcastss` + `vfmadd`).
pub static BROADCAST_VEC_MULT_ADD: KernelDef = KernelDef {
    name: "BroadcastVecMultAdd",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[SCALAR_OR_VECTOR, SCALAR_OR_VECTOR, VECTOR],
    applies: |c, target| broadcast_applies(c, target, false),
    cost: |spec, _| 2 * spec.operands()[2].vector_count() + 1,
    registers: |_, _| 1,
    register_tiles: broadcast_register_tiles,
    emit: |spec, out| {
        let (scalar, vector) = orientation(spec);
        let a = out.scalar(scalar);
        let (vin, acc) = (out.vectors(vector), out.vectors(2));
        for (v, o) in vin.iter().zip(&acc) {
            out.line(format!("{o} = {o} + {v} * {a};"));
        }
    },
};

/// `out[j] += lhs · rhs[j]` with bf16 inputs and an f32 output: each bf16 register widens
/// into f32 registers (a shift of the bits), then multiply-adds as in BroadcastVecMultAdd.
pub static BROADCAST_VEC_MULT_ADD_BF16_F32: KernelDef = KernelDef {
    name: "BroadcastVecMultAddBf16F32",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[SCALAR_OR_VECTOR, SCALAR_OR_VECTOR, VECTOR],
    applies: |c, target| broadcast_applies(c, target, true),
    cost: |spec, _| 3 * spec.operands()[2].vector_count() + 1,
    registers: |_, _| 2,
    register_tiles: broadcast_register_tiles,
    emit: |spec, out| {
        let (scalar, vector) = orientation(spec);
        let a = read_float(spec, scalar, out);
        let (v_lanes, o_lanes) = (lanes(spec, vector), lanes(spec, 2));
        let (vin, acc) = (out.vectors(vector), out.vectors(2));
        let s = out.fresh("s");
        out.open("{".to_owned());
        out.line(format!("const float {s} = {a};"));
        for (j, o) in acc.iter().enumerate() {
            let first = j as u32 * o_lanes;
            let wide = widen_bf16(&vin[(first / v_lanes) as usize], v_lanes, first % v_lanes, o_lanes, out);
            out.line(format!("{o} = {o} + {wide} * {s};"));
        }
        out.close();
    },
};

/// A dot product's shape: MatmulAccum `[1, 1, k, 1]`, both inputs contiguous in L1.
fn dot_product_applies(c: &Checker, multiple: u32) -> Result<(), KernelMismatch> {
    let shape = c.spec().shape();
    let k = shape[2];
    c.require(shape[0] == 1 && shape[1] == 1 && shape[3] == 1, || {
        format!("it needs a 1×1×k×1 Spec (one dot product), not {}", crate::shape::DisplayShape(shape))
    })?;
    c.scalar(2)?;
    c.contiguous(0)?;
    c.contiguous(1)?;
    // The loop multiplies the i-th values of both buffers: both must hold k in the same order
    // (an odd-even strip interleaves it; packed strips keep it).
    c.require(odd_even_strip(c, 0, 2) == odd_even_strip(c, 1, 1), || {
        "lhs and rhs must hold k in the same order (an odd-even strip on one of them reorders it)".to_owned()
    })?;
    c.require(k.is_multiple_of(multiple), || format!("k ({k}) must be a multiple of {multiple}"))
}

/// The odd-even strip of operand `i`'s logical dimension `dim`, if it has one.
fn odd_even_strip(c: &Checker, i: usize, dim: u8) -> Option<u32> {
    c.op(i).layout().dims().iter().find_map(|d| match d.kind {
        PhysKind::OddEven(size) if d.logical == dim => Some(size),
        _ => None,
    })
}

/// How many accumulators a loop of `steps` vector steps uses.
fn accumulators(steps: u64) -> u64 {
    steps.clamp(1, 4)
}

/// Declares `count` zeroed accumulators of type `ty`; returns their names.
fn declare_accumulators(ty: &str, count: u64, out: &mut dyn KernelEmitter) -> Vec<String> {
    let names: Vec<String> = (0..count).map(|_| out.fresh("acc")).collect();
    let decls: Vec<String> = names.iter().map(|n| format!("{n} = {{0}}")).collect();
    out.line(format!("{ty} {};", decls.join(", ")));
    names
}

/// Adds the f32 vectors `accs` and the lanes of the sum to the output scalar.
fn finish_dot_product(spec: &LogicalSpec, accs: &[String], lanes: u32, out: &mut dyn KernelEmitter) {
    let sum = out.helper(Helper::HorizontalSum(lanes));
    let total = accs.join(" + ");
    let c = read_float(spec, 2, out);
    super::emit::write_float(spec, 2, &format!("{c} + {sum}({total})"), out);
}

/// The ISA feature of the kernels that multiply bf16 natively (`vdpbf16ps`).
const NATIVE_BF16_FEATURE: &str = "avx512bf16";

/// The most bf16 · bf16 products any Matmul kernel does per 2 units of cost on `target`, for
/// the search's lower bounds: with native bf16 products, the `vdpbf16ps` kernels do 32 per 2
/// (a register of bf16 pairs); without, every kernel widens bf16 to f32 first and does at most
/// a register of f32 products per 2 (`BroadcastVecMultAddBf16F32` 3 per register, the widening
/// dot product 3 per register of `k`, the even-odd row loop 5 per 32 products, `MultAdd` 6
/// per product), as the f32 kernels do after an upcast.
pub(crate) fn bf16_products_per_two_units(target: &Target) -> u64 {
    if target.has_feature(NATIVE_BF16_FEATURE) {
        u64::from(target.widest_vector_bytes() / 2)
    } else {
        u64::from(widest_f32_lanes(target))
    }
}

fn widest_f32_lanes(target: &Target) -> u32 {
    target.widest_vector_bytes() / 4
}

/// An f32 dot product over L1 with up to four vector accumulators.
pub static DOT_PRODUCT_LOOP: KernelDef = KernelDef {
    name: "DotProductLoop",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[L1, L1, SCALAR],
    applies: |c, target| {
        c.has_vectors(target)?;
        c.same_dtype_in(&[Dtype::F32], "f32")?;
        dot_product_applies(c, widest_f32_lanes(target))
    },
    cost: |spec, target| 2 * u64::from(spec.shape()[2] / widest_f32_lanes(target)) + 3 + operand_moves(spec, target),
    registers: |spec, target| accumulators(u64::from(spec.shape()[2] / widest_f32_lanes(target))) + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| emit_dot_product(spec, out),
};

/// A dot product of bf16 (or f32) with bf16 into f32 over L1: bf16 widens to f32 on load.
pub static DOT_PRODUCT_LOOP_BF16: KernelDef = KernelDef {
    name: "DotProductLoopBf16",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[L1, L1, SCALAR],
    applies: |c, target| {
        c.has_vectors(target)?;
        let dtypes = [c.op(0).dtype(), c.op(1).dtype(), c.op(2).dtype()];
        if !matches!(dtypes, [Dtype::Bf16 | Dtype::F32, Dtype::Bf16, Dtype::F32]) {
            return Err(c.dtypes("bf16 · bf16 → f32 or f32 · bf16 → f32"));
        }
        dot_product_applies(c, widest_f32_lanes(target))
    },
    cost: |spec, target| 3 * u64::from(spec.shape()[2] / widest_f32_lanes(target)) + 3 + operand_moves(spec, target),
    registers: |spec, target| accumulators(u64::from(spec.shape()[2] / widest_f32_lanes(target))) + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| emit_dot_product(spec, out),
};

fn emit_dot_product(spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
    let l = widest_f32_lanes(out.target());
    let steps = u64::from(spec.shape()[2] / l);
    let vf = out.vector_type(Dtype::F32, l);
    out.open("{".to_owned());
    let accs = declare_accumulators(&vf, accumulators(steps), out);
    let (a, b) = (out.address(0), out.address(1));
    let dtypes = [spec.operands()[0].dtype(), spec.operands()[1].dtype()];
    unrolled_loop(0, steps, accs.len() as u64, u64::from(l), out, &mut |out, acc, offset| {
        let mut vals = Vec::new();
        for (base, dtype) in [(&a, dtypes[0]), (&b, dtypes[1])] {
            let v = out.fresh("x");
            let ty = out.vector_type(dtype, l);
            out.line(format!("{ty} {v};"));
            out.line(format!("__builtin_memcpy(&{v}, {base} + {offset}, {});", l * dtype.size_bytes()));
            vals.push(if dtype == Dtype::Bf16 { widen_bf16(&v, l, 0, l, out) } else { v });
        }
        let acc = &accs[acc as usize];
        out.line(format!("{acc} = {acc} + {} * {};", vals[0], vals[1]));
    });
    finish_dot_product(spec, &accs, l, out);
    out.close();
}

/// A bf16 · bf16 → f32 dot product over L1 with AVX512-BF16's `vdpbf16ps` (32 products per
/// instruction).
pub static DOT_PRODUCT_LOOP_VDPBF16PS: KernelDef = KernelDef {
    name: "DotProductLoopVdpbf16ps",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[L1, L1, SCALAR],
    applies: |c, target| {
        c.has_feature(target, NATIVE_BF16_FEATURE)?;
        c.dtypes_are(&[Dtype::Bf16, Dtype::Bf16, Dtype::F32], "bf16 · bf16 → f32")?;
        dot_product_applies(c, 32)
    },
    cost: |spec, target| 2 * u64::from(spec.shape()[2] / 32) + 4 + operand_moves(spec, target),
    registers: |spec, _| accumulators(u64::from(spec.shape()[2] / 32)) + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        out.helper(Helper::Intrinsics);
        let steps = u64::from(spec.shape()[2] / 32);
        out.open("{".to_owned());
        let accs = declare_accumulators("__m512", accumulators(steps), out);
        let (a, b) = (out.address(0), out.address(1));
        unrolled_loop(0, steps, accs.len() as u64, 32, out, &mut |out, acc, offset| {
            let (x, y) = (out.fresh("x"), out.fresh("y"));
            out.line(format!("__m512bh {x}, {y};"));
            out.line(format!("__builtin_memcpy(&{x}, {a} + {offset}, 64);"));
            out.line(format!("__builtin_memcpy(&{y}, {b} + {offset}, 64);"));
            let acc = &accs[acc as usize];
            out.line(format!("{acc} = _mm512_dpbf16_ps({acc}, {x}, {y});"));
        });
        let c = read_float(spec, 2, out);
        super::emit::write_float(spec, 2, &format!("{c} + _mm512_reduce_add_ps({})", accs.join(" + ")), out);
        out.close();
    },
};

/// The rhs layout `vdpbf16ps` tiles read: pairs of consecutive k for one n adjacent
/// (`[1, 2, 1 p2]` for a `1×k×n` tensor).
fn pair_layout(shape: &[u32]) -> Option<Layout> {
    Layout::new(&[PhysDim::dynamic(1), PhysDim::dynamic(2), PhysDim::packed(1, 2)], None, shape).ok()
}

/// A bf16 · bf16 → f32 register tile with `vdpbf16ps`: the output's `m × n/16` vectors stay
/// in registers while k advances two at a time; each step broadcasts a pair of lhs values and
/// multiplies it with `n/16` vectors of rhs pairs. The lhs and the output are contiguous; each
/// pair of rhs rows is, but the pairs may lie any distance apart (a tile of a wider matrix).
pub static MATMUL_LOOP_VDPBF16PS: KernelDef = KernelDef {
    name: "MatmulLoopVdpbf16ps",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[L1, L1, L1],
    applies: |c, target| {
        c.has_feature(target, NATIVE_BF16_FEATURE)?;
        c.dtypes_are(&[Dtype::Bf16, Dtype::Bf16, Dtype::F32], "bf16 · bf16 → f32")?;
        c.contiguous(0)?;
        c.contiguous(2)?;
        let &[b, m, k, n] = c.spec().shape() else { unreachable!("Matmul is rank 4") };
        c.require(b == 1 && k % 2 == 0 && n % 16 == 0, || {
            format!("it needs b = 1, even k and n a multiple of 16, not {b}×{m}×{k}×{n}")
        })?;
        c.require(c.op(0).layout().is_row_major(c.op(0).shape()), || "the lhs must be row-major".to_owned())?;
        c.require(c.op(2).layout().is_row_major(c.op(2).shape()), || "the output must be row-major".to_owned())?;
        let rhs = c.op(1);
        c.require(pair_layout(rhs.shape()).is_some_and(|l| l.dims() == rhs.layout().dims()), || {
            "the rhs must hold pairs of consecutive k together: layout [1, 2, 1 p2]".to_owned()
        })?;
        c.require(rhs.layout().contiguous_block(rhs.shape()) >= 2 * u64::from(n), || {
            "each pair of rhs rows must be contiguous".to_owned()
        })
    },
    cost: |spec, target| {
        let &[_, m, k, n] = spec.shape() else { unreachable!("Matmul is rank 4") };
        let tiles = u64::from(m) * u64::from(n / 16);
        2 * u64::from(k / 2) * tiles + 2 * tiles + operand_moves(spec, target)
    },
    registers: |spec, _| u64::from(spec.shape()[1]) * u64::from(spec.shape()[3] / 16) + 2,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        out.helper(Helper::Intrinsics);
        let &[_, m, k, n] = spec.shape() else { unreachable!("Matmul is rank 4") };
        let (a, b, c) = (out.address(0), out.address(1), out.address(2));
        out.open("{".to_owned());
        // Pairs of rhs rows may lie any distance apart (a tile of a wider matrix).
        let stride = row_stride(1, 2, u64::from(k), out);
        let tile: Vec<Vec<String>> = (0..m).map(|_| (0..n / 16).map(|_| out.fresh("c")).collect()).collect();
        for (r, row) in tile.iter().enumerate() {
            for (j, acc) in row.iter().enumerate() {
                out.line(format!("__m512 {acc};"));
                out.line(format!("__builtin_memcpy(&{acc}, {c} + {}, 64);", r as u32 * n + 16 * j as u32));
            }
        }
        let p = out.fresh("p");
        out.open(format!("for (int64_t {p} = 0; {p} < {}; {p}++) {{", k / 2));
        let bs: Vec<String> = (0..n / 16).map(|_| out.fresh("b")).collect();
        for (j, bj) in bs.iter().enumerate() {
            out.line(format!("__m512bh {bj};"));
            out.line(format!("__builtin_memcpy(&{bj}, {b} + {p} * {stride} + {}, 64);", 32 * j));
        }
        for (r, row) in tile.iter().enumerate() {
            let (pair, x) = (out.fresh("pair"), out.fresh("a"));
            out.line(format!("uint32_t {pair};"));
            out.line(format!("__builtin_memcpy(&{pair}, {a} + {} + 2 * {p}, 4);", r as u32 * k));
            out.line(format!("__m512bh {x} = (__m512bh)_mm512_set1_epi32((int){pair});"));
            for (acc, bj) in row.iter().zip(&bs) {
                out.line(format!("{acc} = _mm512_dpbf16_ps({acc}, {x}, {bj});"));
            }
        }
        out.close();
        for (r, row) in tile.iter().enumerate() {
            for (j, acc) in row.iter().enumerate() {
                out.line(format!("__builtin_memcpy({c} + {}, &{acc}, 64);", r as u32 * n + 16 * j as u32));
            }
        }
        out.close();
    },
};
