//! Random inputs: integers over their dtype's whole range with its extremes, floats in
//! `[-1, 1)` mixed with the edge values the dtype allows (±0, subnormals, the smallest
//! normal, ±∞, NaN and, for primitives that only copy or compare, the largest finite values).
//! Outputs a Spec writes without reading are poisoned, so an element a kernel forgets to write
//! is caught, even where the reference's result is NaN.

use super::rng::FuzzRng;
use crate::dtype::Dtype;
use crate::primitive::{Direction, Primitive};
use crate::reference::{HostTensor, Value};
use crate::shape::coordinates;
use crate::spec::{Spec, SpecKind};

/// The byte outputs are filled with before a kernel runs: in every dtype a value no kernel
/// computes from these inputs by chance (−2.9e−16 in f32 and bf16), and not a NaN, which a
/// kernel may rightly compute from NaN inputs.
pub const POISON: u8 = 0xa5;

/// Which float values a Spec's inputs may hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FloatRange {
    /// Copies, fills, broadcasts and maxima: every value, the largest finite ones included.
    Everything,
    /// Arithmetic: no finite value so large that a sum of products could overflow (the
    /// reference computes in f64, a kernel in the output dtype, so overflow is a rounding
    /// difference there, not an error), but ±∞, NaN, ±0 and subnormals.
    NoOverflow,
    /// Softmax parts given a maximum or denominators: values in `[-1, 1)`, so that the given
    /// maximum is within range of every element (the primitives' precondition).
    Ordinary,
}

/// The float range for `spec`'s inputs.
pub fn float_range(spec: &Spec) -> FloatRange {
    match spec.logical().kind() {
        SpecKind::Compose(_) => FloatRange::NoOverflow,
        SpecKind::Primitive(p) => match p {
            Primitive::Move
            | Primitive::Fill(_)
            | Primitive::OnePrefix
            | Primitive::Broadcast { .. }
            | Primitive::Max { .. } => FloatRange::Everything,
            Primitive::Matmul { .. }
            | Primitive::Conv { .. }
            | Primitive::DivideVec
            | Primitive::DivideVecScalar { .. }
            | Primitive::Softmax { .. }
            | Primitive::SoftmaxDenominatorAndMax { accum: false, .. }
            | Primitive::SoftmaxDenominatorAndUnscaled { .. } => FloatRange::NoOverflow,
            _ => FloatRange::Ordinary,
        },
    }
}

/// Random arguments for `spec`: inputs drawn as the module describes (edge values in about
/// one element of `edge_in`), outputs that are not read poisoned.
pub fn random_arguments(spec: &Spec, rng: &mut FuzzRng, edge_in: u64) -> Vec<HostTensor> {
    let range = float_range(spec);
    spec.operands()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut tensor = HostTensor::zeros(t);
            if spec.logical().direction(i) == Direction::Out {
                tensor.bytes_mut().fill(POISON);
                return tensor;
            }
            for c in coordinates(t.shape()) {
                let value = if t.dtype().is_float() {
                    Value::Float(float_value(rng, t.dtype(), range, edge_in))
                } else {
                    Value::Int(int_value(rng, t.dtype(), edge_in))
                };
                tensor.set(&c, value);
            }
            tensor
        })
        .collect()
}

/// A float of `dtype`: usually uniform in `[-1, 1)`, one in `edge_in` an edge value.
fn float_value(rng: &mut FuzzRng, dtype: Dtype, range: FloatRange, edge_in: u64) -> f64 {
    if range == FloatRange::Ordinary || edge_in == 0 || rng.below(edge_in) != 0 {
        return rng.unit();
    }
    // Subnormals and the smallest normal of f32, or of bf16 (which shares f32's exponent
    // range with 7 fraction bits instead of 23).
    let fraction_bits = if dtype == Dtype::Bf16 { 7 } else { 23 };
    let min_normal = f64::from(f32::MIN_POSITIVE);
    let min_subnormal = min_normal / f64::from(1u32 << fraction_bits);
    let largest_finite = if dtype == Dtype::Bf16 { 3.389_531_389_251_535_5e38 } else { f64::from(f32::MAX) };
    let mut edges = vec![
        0.0,
        -0.0,
        min_subnormal,
        -min_subnormal,
        min_normal - min_subnormal,
        min_normal,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
    ];
    if range == FloatRange::Everything {
        edges.extend([largest_finite, -largest_finite, 1.0e30, -1.0e30]);
    }
    *rng.pick(&edges)
}

/// An integer of `dtype`: uniform over its range, one in `edge_in` an extreme (0, ±1, the
/// minimum or the maximum).
fn int_value(rng: &mut FuzzRng, dtype: Dtype, edge_in: u64) -> i64 {
    let bits = dtype.size_bytes() * 8;
    let (min, max) =
        if dtype.is_signed_int() { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
    if edge_in != 0 && rng.below(edge_in) == 0 {
        return *rng.pick(&[0, 1, max, min, if dtype.is_signed_int() { -1 } else { max - 1 }]);
    }
    let span = (max - min) as u64 + 1;
    min + rng.below(span) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX2;

    fn spec(text: &str) -> Spec {
        Spec::parse_for(text, &X86_AVX2).unwrap()
    }

    #[test]
    fn outputs_are_poisoned_and_inputs_reach_the_edges() {
        let s = spec("Move(16x16, (f32, GL), (f32, GL))");
        let mut rng = FuzzRng::new(5);
        let args = random_arguments(&s, &mut rng, 4);
        let inputs = args[0].logical_values();
        assert!(inputs.iter().any(|v| v.as_f64().is_nan()));
        assert!(inputs.iter().any(|v| v.as_f64().is_infinite()));
        assert!(inputs.iter().any(|v| v.as_f64() != 0.0 && v.as_f64().abs() < f64::from(f32::MIN_POSITIVE)));
        assert!(inputs.iter().any(|v| v.as_f64().abs() > 1e38));
        assert!(args[1].bytes().iter().all(|&b| b == POISON));
    }

    #[test]
    fn arithmetic_inputs_have_no_huge_finite_values() {
        let s = spec("Matmul(1x16x16x16, (f32, GL), (f32, GL), (f32, GL))");
        let mut rng = FuzzRng::new(9);
        let args = random_arguments(&s, &mut rng, 3);
        let values: Vec<f64> = args[..2].iter().flat_map(|a| a.logical_values()).map(Value::as_f64).collect();
        assert!(values.iter().all(|v| !v.is_finite() || v.abs() <= 1.0));
        assert!(values.iter().any(|v| v.is_nan()));
    }

    #[test]
    fn integers_cover_their_extremes() {
        let s = spec("Move(16x16, (i8, GL), (i8, GL))");
        let mut rng = FuzzRng::new(2);
        let args = random_arguments(&s, &mut rng, 4);
        let values: Vec<i64> = args[0].logical_values().iter().map(|v| v.as_i64()).collect();
        assert!(values.contains(&-128) && values.contains(&127));
        assert!(values.iter().all(|v| (-128..=127).contains(v)));
    }
}
