//! Spec notation: printing then parsing gives back the same Spec, for arbitrary valid Specs;
//! and parse errors say what is wrong and where.

use morello_core::spec::Spec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

fn dims() -> impl Strategy<Value = u32> {
    prop::sample::select(vec![1u32, 2, 3, 4, 8, 16])
}

fn operand(rank: usize) -> impl Strategy<Value = String> {
    let dtype = prop::sample::select(vec!["u8", "i8", "u16", "i16", "u32", "i32", "f32", "bf16"]);
    let level = prop::sample::select(vec!["RF", "L1", "GL", "VRF"]);
    let layout = prop::sample::select(vec!["row_major", "col_major", "[P]"]);
    let contig = prop::option::of(0u8..4);
    let strip = prop::sample::select(vec![2u32, 4, 8]);
    let order_seed = any::<u64>();
    (dtype, level, layout, contig, strip, order_seed, prop::sample::select(vec![4u32, 8, 16, 32])).prop_map(
        move |(dtype, level, layout, contig, strip, seed, lanes)| {
            let mut parts = vec![dtype.to_owned(), level.to_owned()];
            if level != "RF" {
                if layout == "[P]" {
                    // A permutation of the dimensions, with a strip on the first one.
                    let mut order: Vec<usize> = (0..rank).collect();
                    order.rotate_left((seed as usize) % rank.max(1));
                    let mut s: Vec<String> = order.iter().map(|d| d.to_string()).collect();
                    s.push(format!("{} p{strip}", order[0]));
                    parts.push(format!("[{}]", s.join(", ")));
                } else {
                    parts.push(layout.to_owned());
                }
                if level == "VRF" {
                    parts.push(format!("v{lanes}"));
                }
                if let Some(c) = contig {
                    parts.push(format!("c{c}"));
                }
            }
            format!("({})", parts.join(", "))
        },
    )
}

/// Spec text that may or may not be valid; the property is checked on the valid ones.
fn spec_text() -> impl Strategy<Value = String> {
    let limits = (
        prop::sample::select(vec![0u64, 4, 32, 64]),
        prop::sample::select(vec![0u64, 32, 256, 512]),
        prop::sample::select(vec![0u64, 64, 1024, 32768]),
        prop::sample::select(vec![0u64, 4096, 1 << 30]),
    );
    prop_oneof![
        (
            prop::collection::vec(dims(), 4),
            prop::collection::vec(operand(3), 3),
            any::<bool>(),
            any::<bool>(),
            limits.clone()
        )
            .prop_map(|(d, ops, accum, serial, l)| {
                let name = if accum { "MatmulAccum" } else { "Matmul" };
                let serial = if serial { ", serial" } else { "" };
                format!(
                    "({name}({}x{}x{}x{}, {}{serial}), [{}, {}, {}, {}])",
                    d[0],
                    d[1],
                    d[2],
                    d[3],
                    ops.join(", "),
                    l.0,
                    l.1,
                    l.2,
                    l.3
                )
            }),
        (prop::collection::vec(dims(), 2), prop::collection::vec(operand(2), 2), limits.clone()).prop_map(
            |(d, ops, l)| {
                format!("(Move({}x{}, {}), [{}, {}, {}, {}])", d[0], d[1], ops.join(", "), l.0, l.1, l.2, l.3)
            }
        ),
        (prop::collection::vec(dims(), 3), operand(3))
            .prop_map(|(d, op)| format!("FillZero({}x{}x{}, {op})", d[0], d[1], d[2])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_is_the_identity(text in spec_text()) {
        if let Ok(spec) = text.parse::<Spec>() {
            let printed = spec.to_string();
            let reparsed: Spec = printed.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
            prop_assert_eq!(&reparsed, &spec);
            prop_assert_eq!(reparsed.to_string(), printed);
        }
    }
}

#[test]
fn generated_specs_are_often_valid() {
    // Guards the property above against testing nothing: a fixed sample must contain many
    // valid Specs.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let valid =
        (0..500).filter(|_| spec_text().new_tree(&mut runner).unwrap().current().parse::<Spec>().is_ok()).count();
    assert!(valid > 50, "only {valid} of 500 generated Specs were valid");
}

#[test]
fn both_multiplication_signs_parse() {
    let a: Spec = "Matmul(1×4×4×4, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let b: Spec = "Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let c: Spec =
        "(Matmul([1, 4, 4, 4], (f32, GL), (f32, GL), (f32, GL)), [64, 512, 32768, 1073741824])".parse().unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn errors_name_the_problem_and_point_at_the_token() {
    // (text, the token the error must point at, message)
    let cases = [
        (
            "Matmull(1x2x2x2, (f32, GL), (f32, GL), (f32, GL))",
            "Matmull",
            "unknown primitive `Matmull`; did you mean `Matmul`?",
        ),
        ("Matmul(1x2x2x2, (f32, GL), (f33, GL), (f32, GL))", "f33", "unknown dtype `f33`; did you mean `f32`?"),
        ("Matmul(1x2x2x2, (f32, GL), (f32, GL))", "Matmul", "Matmul takes 3 operands (lhs, rhs, out); found 2"),
        (
            "Matmul(2x2x2, (f32, GL), (f32, GL), (f32, GL))",
            "2x2x2",
            "Matmul takes a 4-dimensional shape (b×m×k×n); found 3 dimensions",
        ),
        (
            "Move(4x4, (f32, GL), (f32, VRF, row_major))",
            "VRF",
            "operand `dst`: a VRF tensor needs a vector size such as `v8`",
        ),
        (
            "Move(4x20, (f32, GL), (f32, GL, [1, 0 p16]))",
            "[1, 0 p16]",
            "strips of total size 16 do not evenly divide dimension 0 of size 4",
        ),
        (
            "(Move(4x4, (f32, GL), (f32, GL)), [64, 512, 30000, 1073741824])",
            "30000",
            "the L1 limit 30000 must be a power of two (or 0); try 16384",
        ),
        ("Move(4x4, (f32, RF, col_major), (f32, GL))", "col_major", "RF tensors have no layout; remove it"),
        (
            "Move(4x4, (f32, GL), (f32, VRF, row_major, v6))",
            "v6",
            "`v6` of f32 is not a vector register width of x86-avx2 (allowed: v4, v8)",
        ),
    ];
    for (text, token, message) in cases {
        let err = text.parse::<Spec>().unwrap_err();
        assert!(err.message.contains(message), "{text}: got `{}`", err.message);
        assert_eq!(err.line, 1);
        let at = &text[err.column - 1..];
        assert!(at.starts_with(token), "{text}: the error points at `{at}`, not `{token}`");
    }
}
