//! The reference evaluator: naive semantics of every primitive on host arrays, the oracle every
//! generated kernel is checked against.
//!
//! # Numerics
//!
//! * Integers wrap modulo 2^bits of the output dtype (as the generated C does, which computes
//!   integer multiply-adds in unsigned arithmetic).
//! * Floats are accumulated in f64 and rounded once to the output dtype. Kernels accumulate in
//!   the output dtype, in any order and possibly with fused multiply-adds, so each float output
//!   element carries a tolerance: for a dot product of `n` terms added to `c`,
//!   `γ(n+1)·(|c| + Σ|aᵢ·bᵢ|)` with `γ(n) = n·u / (1 − n·u)` and `u` the unit roundoff of the
//!   output dtype (2⁻²⁴ for f32, 2⁻⁸ for bf16) — the classical worst-case bound for any
//!   summation order. Copies and fills are exact.

mod host;

pub use host::{Element, HostTensor, Value};

use crate::primitive::Primitive;
use crate::shape::coordinates;
use crate::spec::LogicalSpec;
use std::fmt;
use thiserror::Error;

/// Per written operand, the allowed absolute error of each element (indexed like the operand's
/// buffer); `None` for operands that are not written.
#[derive(Clone, Debug, Default)]
pub struct Tolerances(pub Vec<Option<Vec<f64>>>);

/// A generated result that disagrees with the reference.
#[derive(Clone, PartialEq, Debug, Error)]
#[error("operand `{operand}` at {coordinate:?}: expected {expected}, got {actual} (tolerance {tolerance:e})")]
pub struct Mismatch {
    /// Operand name.
    pub operand: &'static str,
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
    let mut tolerances = Tolerances(vec![None; args.len()]);
    match spec.primitive() {
        Primitive::Matmul { accum } => {
            let tol = matmul(spec.shape(), accum, args);
            tolerances.0[2] = Some(tol);
        }
        Primitive::Move => {
            let (src, dst) = args.split_at_mut(1);
            for c in coordinates(spec.shape()) {
                dst[0].set(&c, src[0].get(&c));
            }
            tolerances.0[1] = Some(vec![0.0; dst[0].element_count()]);
        }
        Primitive::Fill(_) => {
            for c in coordinates(spec.shape()) {
                args[0].set(&c, Value::Int(0));
            }
            tolerances.0[0] = Some(vec![0.0; args[0].element_count()]);
        }
    }
    tolerances
}

fn matmul(shape: &[u32], accum: bool, args: &mut [HostTensor]) -> Vec<f64> {
    let [b, m, k, n] = [shape[0], shape[1], shape[2], shape[3]];
    let float = args[2].dtype().is_float();
    let unit_roundoff = args[2].dtype().unit_roundoff();
    let gamma = {
        let nu = f64::from(k + 1) * unit_roundoff;
        nu / (1.0 - nu)
    };
    // Read inputs into dense logical arrays once.
    let lhs = args[0].logical_values();
    let rhs = args[1].logical_values();
    let mut tolerance = vec![0.0; args[2].element_count()];
    for bi in 0..b {
        for mi in 0..m {
            for ni in 0..n {
                let out = [bi, mi, ni];
                let init = if accum { args[2].get(&out) } else { Value::Int(0) };
                let l = |ki: u32| &lhs[((bi * m + mi) * k + ki) as usize];
                let r = |ki: u32| &rhs[((bi * k + ki) * n + ni) as usize];
                let value = if float {
                    let (mut sum, mut magnitude) = (init.as_f64(), init.as_f64().abs());
                    for ki in 0..k {
                        let term = l(ki).as_f64() * r(ki).as_f64();
                        sum += term;
                        magnitude += term.abs();
                    }
                    tolerance[args[2].buffer_offset(&out)] = gamma * magnitude;
                    Value::Float(sum)
                } else {
                    let mut sum = init.as_i64();
                    for ki in 0..k {
                        sum = sum.wrapping_add(l(ki).as_i64().wrapping_mul(r(ki).as_i64()));
                    }
                    Value::Int(sum)
                };
                args[2].set(&out, value);
            }
        }
    }
    tolerance
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
                    operand: spec.primitive().operands()[i].name,
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
