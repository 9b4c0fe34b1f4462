//! The reference evaluator: runs a Spec, primitive or Compose pipeline, on host arrays with the
//! naive semantics the primitive table declares ([`crate::primitive::semantics`]), the oracle
//! every generated kernel is checked against.
//!
//! # Numerics
//!
//! * Integers wrap modulo 2^bits of the output dtype (as the generated C does, which computes
//!   integer multiply-adds in unsigned arithmetic). Max of integers and all copies are exact.
//! * Maxima skip NaNs and start from the lowest value (−∞ for floats), as the rewrite of Max
//!   into an initialization and MaxAccum does: a row of NaNs has the maximum −∞.
//! * Floats are computed in f64 and rounded once to the output dtype; bf16 rounds to nearest
//!   even. Kernels compute in the output dtype, in any order, possibly with fused multiply-adds
//!   and approximate `exp`, so every float output element carries an absolute tolerance:
//!   - a dot product of `n` terms added to `c` (Matmul, Conv): `γ(n+1)·(|c| + Σ|aᵢ·bᵢ|)`, with
//!     `γ(n) = n·u / (1 − n·u)` and `u` the output dtype's unit roundoff (2⁻²⁴ for f32, 2⁻⁸
//!     for bf16) — the classical worst-case bound for any summation order;
//!   - a division (which a kernel may do by multiplying with a reciprocal): `4u·|q|`;
//!   - softmax and its parts: see [`semantics`] (`8u·|v|` per element, `(n + 8)·u·Σ` per
//!     denominator, assuming kernels' `exp` is within `4u`);
//!   - copies, fills and maxima: exact.
//! * A Compose evaluates its stages innermost first, storing each intermediate in its declared
//!   dtype; each stage's tolerance also carries the error its first input may have (bounded by
//!   how that stage propagates it: linearly for Matmul, Conv, copies and divisions, 1-Lipschitz
//!   for Max, multiplicatively for exponentials).
//! * Softmax takes every exponential of `x − max`, so large inputs do not overflow.

pub use crate::primitive::semantics;
pub(crate) use crate::primitive::semantics::splitmix64;
pub use crate::primitive::semantics::{Element, HostTensor, Tolerances, Value};

use crate::shape::coordinates;
use crate::spec::{LogicalSpec, SpecKind, parameter_bindings};
use std::fmt;
use thiserror::Error;

/// A generated result that disagrees with the reference.
#[derive(Clone, PartialEq, Debug, Error)]
#[error("operand `{operand}` at {coordinate:?}: expected {expected}, got {actual} (tolerance {tolerance:e})")]
pub struct Mismatch {
    /// Operand name.
    pub operand: String,
    /// Logical coordinate of the first differing element.
    pub coordinate: Vec<u32>,
    /// Reference value.
    pub expected: Value,
    /// Value produced.
    pub actual: Value,
    /// Allowed absolute difference.
    pub tolerance: f64,
}

/// Runs `spec` on `args` (one host tensor per operand, in parameter order), overwriting the
/// operands it writes, and returns the tolerance of every written element.
pub fn evaluate(spec: &LogicalSpec, args: &mut [HostTensor]) -> Tolerances {
    assert_eq!(args.len(), spec.operands().len(), "one host tensor per operand");
    match spec.kind() {
        SpecKind::Primitive(p) => {
            let mut tolerances = (p.def().semantics)(*p, spec.shape(), args, None);
            for (tensor, tolerance) in args.iter().zip(&mut tolerances.0) {
                if let Some(tolerance) = tolerance {
                    exact_where_not_finite(tensor, tolerance);
                }
            }
            tolerances
        }
        SpecKind::Compose(components) => {
            let bindings = parameter_bindings(components);
            let mut carried: Option<(HostTensor, Vec<f64>)> = None;
            let mut result = Tolerances(vec![None; args.len()]);
            for (c, component) in components.iter().enumerate().rev() {
                let p = component.primitive;
                let output = p.operand_count() - 1;
                let mut stage: Vec<HostTensor> = (0..p.operand_count())
                    .map(|o| match (o, &carried) {
                        (0, Some((intermediate, _))) => intermediate.clone(),
                        _ if o == output && c == 0 => args[args.len() - 1].clone(),
                        _ if o == output => {
                            HostTensor::dense(component.output_dtype, &p.operand_shape(o, &component.shape))
                        }
                        _ => args[bindings.iter().position(|&b| b == (c, o)).expect("bound input")].clone(),
                    })
                    .collect();
                let input_error = carried.as_ref().map(|(_, e)| e.as_slice());
                let tolerances = (p.def().semantics)(p, &component.shape, &mut stage, input_error);
                let mut error = tolerances.0[output].clone().expect("a stage writes its output");
                exact_where_not_finite(&stage[output], &mut error);
                if c == 0 {
                    let last = args.len() - 1;
                    args[last] = stage.swap_remove(output);
                    result.0[last] = Some(error);
                } else {
                    carried = Some((stage.swap_remove(output), error));
                }
            }
            result
        }
    }
}

/// Sets the tolerance of every non-finite element of `tensor` to 0. An infinity or NaN is
/// compared exactly anyway ([`Value::agrees_with`]), and a later Compose stage must not carry
/// its infinite error bound into finite results: an exponential of −∞ is exactly 0, yet
/// 0 × ∞ would make that element's tolerance NaN, which nothing agrees with.
fn exact_where_not_finite(tensor: &HostTensor, tolerance: &mut [f64]) {
    if !tensor.dtype().is_float() {
        return;
    }
    for c in coordinates(tensor.shape()) {
        if !tensor.get(&c).as_f64().is_finite() {
            tolerance[tensor.buffer_offset(&c)] = 0.0;
        }
    }
}

/// Compares every written operand of `actual` with `expected` within `tolerances`.
pub fn compare(
    spec: &LogicalSpec,
    expected: &[HostTensor],
    actual: &[HostTensor],
    tolerances: &Tolerances,
) -> Result<(), Mismatch> {
    for (i, tol) in tolerances.0.iter().enumerate() {
        let Some(tol) = tol else { continue };
        for c in coordinates(spec.operands()[i].shape()) {
            let offset = expected[i].buffer_offset(&c);
            let (e, a) = (expected[i].get(&c), actual[i].get(&c));
            if !e.agrees_with(&a, tol[offset]) {
                return Err(Mismatch {
                    operand: spec.operand_name(i).into_owned(),
                    coordinate: c.to_vec(),
                    expected: e,
                    actual: a,
                    tolerance: tol[offset],
                });
            }
        }
    }
    Ok(())
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
        }
    }
}
