//! The reference evaluator against values worked out by hand, for every primitive and for
//! Compose pipelines.

use morello_core::reference::{HostTensor, Tolerances, Value, compare, evaluate};
use morello_core::shape::coordinates;
use morello_core::spec::Spec;

/// Host tensors for `spec`'s operands, filled (in logical row-major order) with `values`;
/// operands given no values are zero.
fn operands(spec: &Spec, values: &[&[f64]]) -> Vec<HostTensor> {
    spec.operands()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut host = HostTensor::zeros(t);
            if let Some(vs) = values.get(i) {
                for (c, v) in coordinates(t.shape()).zip(vs.iter()) {
                    host.set(&c, if t.dtype().is_float() { Value::Float(*v) } else { Value::Int(*v as i64) });
                }
            }
            host
        })
        .collect()
}

/// Evaluates `text` on `inputs` and checks operand `out` against `expected` (logical order)
/// to within `tolerance` (relative), returning the tolerances for further checks.
fn check(text: &str, inputs: &[&[f64]], out: usize, expected: &[f64]) -> Tolerances {
    let spec: Spec = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut args = operands(&spec, inputs);
    let tolerances = evaluate(spec.logical(), &mut args);
    let got: Vec<f64> = args[out].logical_values().iter().map(|v| v.as_f64()).collect();
    assert_eq!(got.len(), expected.len(), "{text}");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let close = if e.is_infinite() { g == e } else { (g - e).abs() <= 1e-6 * e.abs().max(1.0) };
        assert!(close, "{text}: element {i} is {g}, expected {e}\ngot {got:?}");
    }
    tolerances
}

#[test]
fn matmul_batched_accumulating_and_integer() {
    let tol = check(
        "Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]],
        2,
        &[19.0, 22.0, 43.0, 50.0],
    );
    // γ(3)·Σ|terms| for the first element: 3u/(1−3u)·(5 + 14).
    let u = f64::powi(2.0, -24);
    let expected_tol = 3.0 * u / (1.0 - 3.0 * u) * 19.0;
    assert!((tol.0[2].as_ref().unwrap()[0] - expected_tol).abs() < 1e-18);
    check(
        "MatmulAccum(1x2x2x2, (f32, GL), (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &[1.0, 1.0, 1.0, 1.0]],
        2,
        &[20.0, 23.0, 44.0, 51.0],
    );
    // Batch 2: each batch multiplies its own matrices.
    check(
        "Matmul(2x1x2x1, (f32, GL), (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0], &[10.0, 100.0, 1000.0, 10000.0]],
        2,
        &[210.0, 43000.0],
    );
    // u8 × i8 → i16, and wrapping u32 arithmetic.
    check("Matmul(1x1x2x1, (u8, GL), (i8, GL), (i16, GL))", &[&[200.0, 3.0], &[-3.0, 5.0]], 2, &[-585.0]);
    check("Matmul(1x1x1x1, (u32, GL), (u32, GL), (u32, GL))", &[&[2147483648.0], &[2.0]], 2, &[0.0]);
}

#[test]
fn conv_sums_over_input_channels_through_sliding_windows() {
    // b=1, f=1, c=2, output 2×2, filters 2×2: the image is 2 channels of 3×3.
    let channel0 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let image: Vec<f64> =
        channel0.iter().chain(channel0.iter().map(|v| v * 10.0).collect::<Vec<_>>().iter()).copied().collect();
    // Channel 0 picks the window's top-left, channel 1 its bottom-right:
    // out[y][x] = c0[y][x] + 10·c0[y+1][x+1].
    let filters = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    check("Conv(1x1x2x2x2x2x2, (f32, GL), (f32, GL), (f32, GL))", &[&image, &filters], 2, &[51.0, 62.0, 84.0, 95.0]);
    // Two filters, accumulating into 1s.
    let two_filters = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
    check(
        "ConvAccum(1x2x2x1x1x2x2, (f32, GL), (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &two_filters, &[1.0, 1.0]],
        2,
        &[1.0 + 1.0 + 8.0, 1.0 + 5.0 + 6.0 + 7.0 + 8.0],
    );
}

#[test]
fn moves_copy_transpose_and_upcast() {
    let spec: Spec = "Move(2x3, (f32, GL, row_major), (f32, GL, col_major))".parse().unwrap();
    let mut args = operands(&spec, &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]);
    evaluate(spec.logical(), &mut args);
    // The destination buffer is column-major.
    assert_eq!(args[1].to_elements::<f32>(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    check("Move(2, (bf16, GL), (f32, GL))", &[&[1.5, -0.25]], 1, &[1.5, -0.25]);
    check("Move(2, (u8, GL), (i32, GL))", &[&[255.0, 7.0]], 1, &[255.0, 7.0]);
    check("Move(2, (i8, GL), (i16, GL))", &[&[-5.0, 127.0]], 1, &[-5.0, 127.0]);
    assert!("Move(2, (f32, GL), (bf16, GL))".parse::<Spec>().is_err(), "narrowing moves are rejected");
}

#[test]
fn fills() {
    check("FillZero(3, (f32, GL))", &[&[7.0, 7.0, 7.0]], 0, &[0.0, 0.0, 0.0]);
    check("FillNegInf(2, (f32, GL))", &[], 0, &[f64::NEG_INFINITY, f64::NEG_INFINITY]);
    check("FillMin(2, (i8, GL))", &[], 0, &[-128.0, -128.0]);
    check("FillMin(1, (u16, GL))", &[&[5.0]], 0, &[0.0]);
    check("FillMin(1, (f32, GL))", &[], 0, &[f64::from(f32::MIN)]);
    assert!("FillNegInf(2, (u32, GL))".parse::<Spec>().is_err(), "integers have no infinity");
}

#[test]
fn one_prefix_and_broadcast() {
    let spec: Spec = "OnePrefix(2x3, (f32, GL), (f32, GL))".parse().unwrap();
    assert_eq!(spec.operand(1).shape(), &[1, 2, 3]);
    check(
        "OnePrefix(2x3, (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]],
        1,
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    check("Broadcast(2x3, dim=1, (u32, GL), (u32, GL))", &[&[7.0, 9.0]], 1, &[7.0, 7.0, 7.0, 9.0, 9.0, 9.0]);
    check("Broadcast(2x3, dim=0, (u32, GL), (u32, GL))", &[&[1.0, 2.0, 3.0]], 1, &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
}

#[test]
fn divisions() {
    check("DivideVec(2, (f32, GL), (f32, GL))", &[&[6.0, 9.0], &[2.0, 3.0]], 0, &[3.0, 3.0]);
    check(
        "DivideVecScalar(2x2, scan=1, (f32, GL), (f32, GL))",
        &[&[2.0, 4.0, 9.0, 12.0], &[2.0, 3.0]],
        0,
        &[1.0, 2.0, 3.0, 4.0],
    );
}

#[test]
fn maxima() {
    check("Max(2x3, dim=1, (f32, GL), (f32, GL))", &[&[1.0, 5.0, 3.0, -2.0, -7.0, -1.0]], 1, &[5.0, -1.0]);
    check(
        "MaxAccum(2x3, dim=1, (f32, GL), (f32, GL))",
        &[&[1.0, 5.0, 3.0, -2.0, -7.0, -1.0], &[6.0, -3.0]],
        1,
        &[6.0, -1.0],
    );
    check("Max(3x2, dim=0, (u8, GL), (u8, GL))", &[&[1.0, 200.0, 255.0, 4.0, 9.0, 9.0]], 1, &[255.0, 200.0]);
}

#[test]
fn softmax_and_its_parts() {
    let (l1, l2, l3, l4, l6) = (0.0f64, 2f64.ln(), 3f64.ln(), 4f64.ln(), 6f64.ln());
    check("Softmax(1x3, scan=1, (f32, GL), (f32, GL))", &[&[l1, l2, l3]], 1, &[1.0 / 6.0, 1.0 / 3.0, 0.5]);
    // Large inputs: exponentials are taken of x − max, so nothing overflows.
    let e = std::f64::consts::E;
    let s = 1.0 + e + e * e;
    check("Softmax(1x3, scan=1, (f32, GL), (f32, GL))", &[&[1000.0, 1001.0, 1002.0]], 1, &[1.0 / s, e / s, e * e / s]);
    check(
        "SoftmaxComplete(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        &[&[l1, l2, l3], &[l3], &[2.0]],
        3,
        &[1.0 / 6.0, 1.0 / 3.0, 0.5],
    );
    check("SoftmaxDenominator(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))", &[&[l1, l2, l3], &[0.0]], 2, &[6.0]);
    check(
        "SoftmaxDenominatorAccum(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        &[&[l1, l2, l3], &[0.0], &[4.0]],
        2,
        &[10.0],
    );
    check("SoftmaxDenominatorAndMax(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))", &[&[l1, l2, l3]], 1, &[l3]);
    check("SoftmaxDenominatorAndMax(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))", &[&[l1, l2, l3]], 2, &[2.0]);
    // Online update: running (ln 6, 1), new chunk [ln 2, ln 3]: denominator 1 + (2 + 3)/6.
    check(
        "SoftmaxDenominatorAndMaxAccum(1x2, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        &[&[l2, l3], &[l6], &[1.0]],
        2,
        &[11.0 / 6.0],
    );
    // Merging parts (ln 2, 1) and (ln 4, 1): maximum ln 4, denominator 1·2/4 + 1.
    check(
        "SoftmaxDenominatorAndMaxFromParts(1x2, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        &[&[l2, l4], &[1.0, 1.0]],
        3,
        &[1.5],
    );
    check(
        "SoftmaxDenominatorAndUnscaled(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        &[&[l1, l2, l3]],
        2,
        &[1.0 / 3.0, 2.0 / 3.0, 1.0],
    );
    check("SoftmaxDenominatorAndUnscaled(1x3, scan=1, (f32, GL), (f32, GL), (f32, GL))", &[&[l1, l2, l3]], 1, &[2.0]);
    check(
        "SoftmaxDenominatorAndUnscaledFromMax(1x2, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        &[&[l2, l4], &[l4]],
        3,
        &[0.5, 1.0],
    );
    check(
        "SoftmaxDenominatorAndUnscaledFromMaxAccum(1x2, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        &[&[l2, l4], &[l4], &[1.0]],
        2,
        &[2.5],
    );
    assert!("Softmax(2x2, scan=1, (u32, GL), (u32, GL))".parse::<Spec>().is_err(), "softmax needs floats");
}

#[test]
fn compose_pipelines() {
    // Softmax over the rows of lhs·rhs, with rhs the identity.
    let e = std::f64::consts::E;
    check(
        "Compose([Softmax(1x2x2, scan=2), Matmul(1x2x2x2) -> f32], (f32, GL), (f32, GL), (f32, GL))",
        &[&[1.0, 2.0, 3.0, 4.0], &[1.0, 0.0, 0.0, 1.0]],
        2,
        &[1.0 / (1.0 + e), e / (1.0 + e), 1.0 / (1.0 + e), e / (1.0 + e)],
    );
    // (a·b)·c with the paper's parameter order: c, a, b, out.
    let tol = check(
        "Compose([Matmul(1x1x2x1), Matmul(1x1x2x2) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        &[&[10.0, 100.0], &[1.0, 2.0], &[1.0, 2.0, 3.0, 4.0]],
        3,
        &[7.0 * 10.0 + 10.0 * 100.0],
    );
    // The intermediate's possible error is carried into the output's tolerance.
    let single_stage = 2.0 * f64::powi(2.0, -24) * 1070.0;
    assert!(tol.0[3].as_ref().unwrap()[0] > single_stage);
}

#[test]
fn compare_rejects_wrong_results() {
    let spec: Spec = "Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let mut expected = operands(&spec, &[&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]]);
    let tolerances = evaluate(spec.logical(), &mut expected);
    let mut wrong = expected.clone();
    wrong[2].set(&[0, 1, 1], Value::Float(50.001));
    let mismatch = compare(spec.logical(), &expected, &wrong, &tolerances).unwrap_err();
    assert_eq!(mismatch.coordinate, vec![0, 1, 1]);
    assert_eq!(mismatch.operand, "out");
}
