//! Reference semantics of Softmax and its parts, row by row along the scan dimension.
//!
//! Every exponential is taken of `x − max`, so no intermediate overflows even for large
//! inputs. Tolerances assume a kernel's `exp` is within 4 units of roundoff: an element
//! computed with a few exponentials, subtractions and one division may be off by `8u·|v|`; a
//! denominator of `n` terms by `(n + 8)·u·Σ|terms|`. When the input carries an error of at
//! most `δ` per element (a Compose intermediate), exponentials of `x − max` change by a factor
//! within `e^{±δ}` (`e^{±2δ}` when the maximum is computed from the same input), which is added.

use super::{HostTensor, Tolerances, Value, written};
use crate::primitive::Primitive;
use crate::shape::{Shape, coordinates};

/// One row: every Spec coordinate with the scan dimension varying.
fn rows(shape: &[u32], scan: usize) -> impl Iterator<Item = Vec<Shape>> + '_ {
    let mut reduced: Shape = shape.into();
    reduced[scan] = 1;
    coordinates(&reduced)
        .map(move |r| {
            (0..shape[scan])
                .map(|j| {
                    let mut c = r.clone();
                    c[scan] = j;
                    c
                })
                .collect::<Vec<Shape>>()
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The reduced coordinate of a row (scan dimension at 0).
fn reduced(row: &[Shape], scan: usize) -> Shape {
    let mut c = row[0].clone();
    c[scan] = 0;
    c
}

/// Largest input error along a row (doubled: the kernel's and the reference's inputs may each
/// be that far from exact).
fn row_error(input_error: Option<&[f64]>, shape_of_input: &[u32], row: &[Shape]) -> f64 {
    input_error.map_or(0.0, |err| {
        row.iter()
            .map(|c| err[c.iter().zip(shape_of_input).fold(0usize, |a, (&x, &d)| a * d as usize + x as usize)])
            .fold(0.0, f64::max)
            * 2.0
    })
}

/// Evaluates any softmax-family primitive.
pub fn evaluate(p: Primitive, shape: &[u32], args: &mut [HostTensor], input_error: Option<&[f64]>) -> Tolerances {
    let scan = usize::from(p.param().expect("softmax primitives have a scan dimension"));
    let n = f64::from(shape[scan]);
    let mut tols: Vec<Vec<f64>> = args.iter().map(|t| vec![0.0; t.element_count()]).collect();
    let input_shape = args[0].shape().to_vec();
    for row in rows(shape, scan) {
        let red = reduced(&row, scan);
        let x: Vec<f64> = row.iter().map(|c| args[0].get(c).as_f64()).collect();
        let delta = row_error(input_error, &input_shape, &row);
        let row_max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let roundoff: Vec<f64> = args.iter().map(|t| t.dtype().unit_roundoff()).collect();
        let u = |i: usize| roundoff[i];
        match p {
            Primitive::Softmax { .. } => {
                let e: Vec<f64> = x.iter().map(|v| (v - row_max).exp()).collect();
                let s: f64 = e.iter().sum();
                for (c, ej) in row.iter().zip(&e) {
                    let v = ej / s;
                    args[1].set(c, Value::Float(v));
                    tols[1][args[1].buffer_offset(c)] = (n + 16.0) * u(1) * v + v * ((2.0 * delta).exp() - 1.0);
                }
            }
            Primitive::SoftmaxComplete { .. } => {
                let (m, d) = (args[1].get(&red).as_f64(), args[2].get(&red).as_f64());
                for (c, xj) in row.iter().zip(&x) {
                    let v = (xj - m).exp() / d;
                    args[3].set(c, Value::Float(v));
                    tols[3][args[3].buffer_offset(c)] = 8.0 * u(3) * v.abs() + v.abs() * (delta.exp() - 1.0);
                }
            }
            Primitive::SoftmaxDenominator { accum, .. } => {
                let m = args[1].get(&red).as_f64();
                let d0 = if accum { args[2].get(&red).as_f64() } else { 0.0 };
                let sum: f64 = x.iter().map(|v| (v - m).exp()).sum();
                args[2].set(&red, Value::Float(d0 + sum));
                tols[2][args[2].buffer_offset(&red)] = (n + 8.0) * u(2) * (d0.abs() + sum) + sum * (delta.exp() - 1.0);
            }
            Primitive::SoftmaxDenominatorAndMax { accum, .. } => {
                let (m0, d0) = if accum {
                    (args[1].get(&red).as_f64(), args[2].get(&red).as_f64())
                } else {
                    (f64::NEG_INFINITY, 0.0)
                };
                let m = m0.max(row_max);
                let (carried, sum) = (rescale(d0, m0, m), x.iter().map(|v| (v - m).exp()).sum::<f64>());
                args[1].set(&red, Value::Float(m));
                args[2].set(&red, Value::Float(carried + sum));
                // Error bounds grow with the magnitudes summed (a running denominator given as
                // input may be any value).
                let magnitude = carried.abs() + sum;
                tols[1][args[1].buffer_offset(&red)] = u(1) * m.abs() + delta;
                tols[2][args[2].buffer_offset(&red)] =
                    (n + 8.0) * u(2) * magnitude + magnitude * ((2.0 * delta).exp() - 1.0);
            }
            Primitive::SoftmaxDenominatorAndMaxFromParts { accum, .. } => {
                let part_denoms: Vec<f64> = row.iter().map(|c| args[1].get(c).as_f64()).collect();
                let (m0, d0) = if accum {
                    (args[2].get(&red).as_f64(), args[3].get(&red).as_f64())
                } else {
                    (f64::NEG_INFINITY, 0.0)
                };
                let m = m0.max(row_max);
                let terms: Vec<f64> = std::iter::once(rescale(d0, m0, m))
                    .chain(x.iter().zip(&part_denoms).map(|(pm, pd)| rescale(*pd, *pm, m)))
                    .collect();
                args[2].set(&red, Value::Float(m));
                args[3].set(&red, Value::Float(terms.iter().sum()));
                let magnitude: f64 = terms.iter().map(|t| t.abs()).sum();
                tols[2][args[2].buffer_offset(&red)] = u(2) * m.abs() + delta;
                tols[3][args[3].buffer_offset(&red)] =
                    (n + 8.0) * u(3) * magnitude + magnitude * ((2.0 * delta).exp() - 1.0);
            }
            Primitive::SoftmaxDenominatorAndUnscaled { .. } => {
                let e: Vec<f64> = x.iter().map(|v| (v - row_max).exp()).collect();
                let d: f64 = e.iter().sum();
                args[1].set(&red, Value::Float(d));
                tols[1][args[1].buffer_offset(&red)] = (n + 8.0) * u(1) * d + d * ((2.0 * delta).exp() - 1.0);
                for (c, ej) in row.iter().zip(&e) {
                    args[2].set(c, Value::Float(*ej));
                    tols[2][args[2].buffer_offset(c)] = 8.0 * u(2) * ej + ej * ((2.0 * delta).exp() - 1.0);
                }
            }
            Primitive::SoftmaxDenominatorAndUnscaledFromMax { accum, .. } => {
                let m = args[1].get(&red).as_f64();
                let d0 = if accum { args[2].get(&red).as_f64() } else { 0.0 };
                let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
                let sum: f64 = e.iter().sum();
                args[2].set(&red, Value::Float(d0 + sum));
                tols[2][args[2].buffer_offset(&red)] = (n + 8.0) * u(2) * (d0.abs() + sum) + sum * (delta.exp() - 1.0);
                for (c, ej) in row.iter().zip(&e) {
                    args[3].set(c, Value::Float(*ej));
                    tols[3][args[3].buffer_offset(c)] = 8.0 * u(3) * ej + ej * (delta.exp() - 1.0);
                }
            }
            other => unreachable!("{other} is not a softmax primitive"),
        }
    }
    let entries: Vec<(usize, Vec<f64>)> = p.outputs().map(|i| (i, std::mem::take(&mut tols[i]))).collect();
    written(args.len(), &entries)
}

/// `d · exp(from − to)`, with an empty running sum (`d = 0` or `from = −∞`) staying 0.
fn rescale(d: f64, from: f64, to: f64) -> f64 {
    if d == 0.0 || from == f64::NEG_INFINITY { 0.0 } else { d * (from - to).exp() }
}
