//! Reference semantics of each primitive family, on host tensors, with error bounds.
//!
//! Every function evaluates its primitive in place (outputs written, accumulating outputs
//! updated) and returns, per written operand, the absolute error a correct kernel may show in
//! each element (see the module documentation of [`crate::reference`]). When the first operand
//! itself carries an error (a Compose intermediate), `input_error` bounds it per element (in
//! row-major order) and the bound is propagated.

mod host;
mod softmax;

pub(crate) use host::splitmix64;
pub use host::{Element, HostTensor, Value};

use crate::dtype::Dtype;
use crate::primitive::{FillValue, Primitive};
use crate::shape::{Shape, coordinates, volume};

/// Per written operand, the allowed absolute error of each element (indexed like the operand's
/// buffer); `None` for operands that are not written.
#[derive(Clone, Debug, Default)]
pub struct Tolerances(pub Vec<Option<Vec<f64>>>);

/// Coordinate of operand `i` at Spec coordinate `spec_coord`.
fn operand_coord(p: Primitive, i: usize, spec_coord: &[u32]) -> Shape {
    p.operand_dims(i, spec_coord.len()).iter().map(|e| e.offset::<u64>(&as_u64(spec_coord)) as u32).collect()
}

fn as_u64(c: &[u32]) -> Vec<u64> {
    c.iter().map(|&x| u64::from(x)).collect()
}

/// Row-major position of `coord` in `shape`.
fn linear(shape: &[u32], coord: &[u32]) -> usize {
    coord.iter().zip(shape).fold(0usize, |acc, (&c, &d)| acc * d as usize + c as usize)
}

/// `γ(n) = n·u / (1 − n·u)`: the relative error bound of an `n`-term floating-point sum.
pub fn gamma(n: u64, unit_roundoff: f64) -> f64 {
    let nu = n as f64 * unit_roundoff;
    nu / (1.0 - nu)
}

/// A fresh tolerance vector (one entry per element of `t`).
fn zeros(t: &HostTensor) -> Vec<f64> {
    vec![0.0; t.element_count()]
}

/// Matmul and its accumulating variant.
pub fn matmul(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    dot_products(p, shape, args, input_error, &[2])
}

/// Conv and its accumulating variant.
pub fn conv(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    dot_products(p, shape, args, input_error, &[2, 5, 6])
}

/// `out (+)= Σ over the reduction dims of in0·in1`, for Matmul and Conv: each output element
/// is a dot product over the Spec coordinates that share its output coordinate.
fn dot_products(
    p: Primitive,
    shape: &[u32],
    args: &mut [HostTensor],
    input_error: Option<&[f64]>,
    reductions: &[usize],
) -> Tolerances {
    let out_dtype = args[2].dtype();
    let terms: u64 = reductions.iter().map(|&d| u64::from(shape[d])).product();
    let gamma = gamma(terms + 1, out_dtype.unit_roundoff());
    let (a, b) = (args[0].logical_values(), args[1].logical_values());
    let (shape_a, shape_b) = (args[0].shape().to_vec(), args[1].shape().to_vec());
    let out_shape = args[2].shape().to_vec();
    let n_out = volume(&out_shape) as usize;
    let init: Vec<Value> = if p.is_accumulating() { args[2].logical_values() } else { vec![Value::Int(0); n_out] };
    let mut sums: Vec<Value> =
        init.iter().map(|v| if out_dtype.is_float() { Value::Float(v.as_f64()) } else { *v }).collect();
    let mut magnitude: Vec<f64> = init.iter().map(|v| v.as_f64().abs()).collect();
    let mut propagated = vec![0.0; n_out];
    for c in coordinates(shape) {
        let (ia, ib) = (linear(&shape_a, &operand_coord(p, 0, &c)), linear(&shape_b, &operand_coord(p, 1, &c)));
        let o = linear(&out_shape, &operand_coord(p, 2, &c));
        sums[o] = match sums[o] {
            Value::Float(s) => {
                let term = a[ia].as_f64() * b[ib].as_f64();
                magnitude[o] += term.abs();
                Value::Float(s + term)
            }
            Value::Int(s) => Value::Int(s.wrapping_add(a[ia].as_i64().wrapping_mul(b[ib].as_i64()))),
        };
        if let Some(err) = input_error {
            propagated[o] += 2.0 * err[ia] * b[ib].as_f64().abs();
        }
    }
    let mut tol = zeros(&args[2]);
    for c in coordinates(&out_shape) {
        let o = linear(&out_shape, &c);
        args[2].set(&c, sums[o]);
        if out_dtype.is_float() {
            tol[args[2].buffer_offset(&c)] = gamma * magnitude[o] + propagated[o];
        }
    }
    written(args.len(), &[(2, tol)])
}

/// Move (with upcasts), OnePrefix and Broadcast: each output element copies one input element.
pub fn copy(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    let mut tol = zeros(&args[1]);
    let in_shape = args[0].shape().to_vec();
    for c in coordinates(shape) {
        let (from, to) = (operand_coord(p, 0, &c), operand_coord(p, 1, &c));
        let value = args[0].get(&from);
        args[1].set(&to, value);
        if let Some(err) = input_error {
            tol[args[1].buffer_offset(&to)] = 2.0 * err[linear(&in_shape, &from)];
        }
    }
    written(args.len(), &[(1, tol)])
}

/// FillZero, FillNegInf, FillMin.
pub fn fill(p: Primitive, shape: &[u32], args: &mut [HostTensor], _: Option<&[f64]>) -> Tolerances {
    let Primitive::Fill(value) = p else { unreachable!("fill semantics for {p}") };
    let dtype = args[0].dtype();
    let v = match value {
        FillValue::Zero => Value::Int(0),
        FillValue::NegInf => Value::Float(f64::NEG_INFINITY),
        FillValue::Min => lowest(dtype),
    };
    for c in coordinates(shape) {
        args[0].set(&c, v);
    }
    written(args.len(), &[(0, zeros(&args[0]))])
}

/// DivideVec and DivideVecScalar: `values /= divisor` (the divisor broadcast along the scan
/// dimension for DivideVecScalar). Kernels may multiply by a reciprocal: 4 units of roundoff.
pub fn divide(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    let u = args[0].dtype().unit_roundoff();
    let mut tol = zeros(&args[0]);
    let value_shape = args[0].shape().to_vec();
    for c in coordinates(shape) {
        let (v, d) = (operand_coord(p, 0, &c), operand_coord(p, 1, &c));
        let (x, y) = (args[0].get(&v).as_f64(), args[1].get(&d).as_f64());
        let q = x / y;
        args[0].set(&v, Value::Float(q));
        let incoming = input_error.map_or(0.0, |e| 2.0 * e[linear(&value_shape, &v)] / y.abs());
        tol[args[0].buffer_offset(&v)] = 4.0 * u * q.abs() + incoming;
    }
    written(args.len(), &[(0, tol)])
}

/// Max and MaxAccum: exact (the result is one of the inputs, or the previous value). A value
/// replaces the current maximum if it is larger or the current one is NaN, so NaNs are
/// skipped. Max starts from the dtype's lowest value, as its rewrite into an initialization
/// and MaxAccum (`to_accum`) does: a row of NaNs has the maximum −∞.
pub fn max(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    let in_shape = args[0].shape().to_vec();
    if !p.is_accumulating() {
        let dtype = args[1].dtype();
        args[1].fill(if dtype.is_float() { Value::Float(f64::NEG_INFINITY) } else { lowest(dtype) });
    }
    let mut tol = zeros(&args[1]);
    for c in coordinates(shape) {
        let (i, o) = (operand_coord(p, 0, &c), operand_coord(p, 1, &c));
        let at = args[1].buffer_offset(&o);
        let x = args[0].get(&i);
        let current = args[1].get(&o);
        let bigger = match (x, current) {
            (Value::Float(a), Value::Float(b)) => a > b || b.is_nan(),
            (a, b) => a.as_i64() > b.as_i64(),
        };
        if bigger {
            args[1].set(&o, x);
        }
        if let Some(err) = input_error {
            tol[at] = tol[at].max(2.0 * err[linear(&in_shape, &i)]);
        }
    }
    written(args.len(), &[(1, tol)])
}

/// Every softmax-family primitive (their semantics live in the `softmax` module beside this one).
pub fn softmax(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    softmax::evaluate(p, shape, args, input_error)
}

/// Tolerances with `entries` (operand, per-element tolerance) set and every other operand
/// unwritten.
pub(super) fn written(operands: usize, entries: &[(usize, Vec<f64>)]) -> Tolerances {
    let mut t = Tolerances(vec![None; operands]);
    for (i, tol) in entries {
        t.0[*i] = Some(tol.clone());
    }
    t
}

/// The lowest value of `dtype`: the minimum integer, or the most negative finite float.
fn lowest(dtype: Dtype) -> Value {
    match dtype {
        Dtype::U8 | Dtype::U16 | Dtype::U32 => Value::Int(0),
        Dtype::I8 => Value::Int(i64::from(i8::MIN)),
        Dtype::I16 => Value::Int(i64::from(i16::MIN)),
        Dtype::I32 => Value::Int(i64::from(i32::MIN)),
        Dtype::F32 => Value::Float(f64::from(f32::MIN)),
        // The largest finite bfloat16 is 0x7f7f: (2 − 2⁻⁷)·2¹²⁷.
        Dtype::Bf16 => Value::Float(-(2.0 - f64::powi(2.0, -7)) * f64::powi(2.0, 127)),
    }
}
