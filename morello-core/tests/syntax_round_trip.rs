//! Spec notation: printing then parsing gives back the same Spec, for arbitrary valid Specs;
//! and parse errors say what is wrong and where.

use morello_core::primitive::Primitive;
use morello_core::spec::Spec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

fn dims() -> impl Strategy<Value = u32> {
    prop::sample::select(vec![1u32, 2, 3, 4, 8, 16])
}

/// A layout for a rank-`rank` operand: row/column-major, or a permutation with a packed or
/// odd-even strip on one dimension.
fn layout(rank: usize) -> impl Strategy<Value = String> {
    (0u8..4, any::<u64>(), prop::sample::select(vec![2u32, 4, 8])).prop_map(move |(kind, seed, strip)| {
        let mut order: Vec<usize> = (0..rank).collect();
        order.rotate_left((seed as usize) % rank.max(1));
        let mut dims: Vec<String> = order.iter().map(|d| d.to_string()).collect();
        match kind {
            0 => "row_major".to_owned(),
            1 => "col_major".to_owned(),
            2 => {
                dims.push(format!("{} p{strip}", order[0]));
                format!("[{}]", dims.join(", "))
            }
            _ => {
                dims.push(format!("{} oe{strip}", order[0]));
                format!("[{}]", dims.join(", "))
            }
        }
    })
}

fn operand(rank: usize, dtype: &'static str) -> impl Strategy<Value = String> {
    let level = prop::sample::select(vec!["RF", "L1", "GL", "VRF"]);
    let contig = prop::option::of(0u8..4);
    (level, layout(rank), contig, prop::sample::select(vec![4u32, 8, 16, 32])).prop_map(
        move |(level, layout, contig, lanes)| {
            let mut parts = vec![dtype.to_owned(), level.to_owned()];
            if level != "RF" {
                parts.push(layout);
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

fn limits() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![0u64, 4, 32, 64]),
        prop::sample::select(vec![0u64, 32, 256, 512, 1024]),
        prop::sample::select(vec![0u64, 64, 1024, 32768]),
        prop::sample::select(vec![0u64, 4096, 1 << 30]),
    )
        .prop_map(|l| format!("[{}, {}, {}, {}]", l.0, l.1, l.2, l.3))
}

fn dtype() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["f32", "f32", "f32", "bf16", "u8", "i8", "u16", "i16", "u32", "i32"])
}

/// Any primitive from the table, with a shape of its rank, its parameter and its operands.
fn primitive_text() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = Primitive::names().collect();
    (prop::sample::select(names), 1usize..=4, any::<u8>(), dtype(), any::<bool>(), limits()).prop_flat_map(
        |(name, free_rank, param_seed, dtype, serial, limits)| {
            let probe = Primitive::from_name(name, 0).unwrap();
            let rank = probe.def().rank.unwrap_or(free_rank);
            let param = param_seed % rank as u8;
            let primitive = Primitive::from_name(name, param).unwrap();
            let ranks: Vec<usize> =
                (0..primitive.operand_count()).map(|i| primitive.operand_dims(i, rank).len()).collect();
            let operands: Vec<_> = ranks.iter().map(|&r| operand(r, dtype)).collect();
            (prop::collection::vec(dims(), rank), operands).prop_map(move |(shape, ops)| {
                let shape = shape.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
                let param = primitive.def().param.map(|p| format!(", {p}={param}")).unwrap_or_default();
                let serial = if serial { ", serial" } else { "" };
                format!("({name}({shape}{param}, {}{serial}), {limits})", ops.join(", "))
            })
        },
    )
}

/// Compose pipelines whose stages chain.
fn compose_text() -> impl Strategy<Value = String> {
    (dims(), dims(), dims(), dims(), prop::collection::vec(operand(3, "f32"), 4)).prop_map(|(m, k, n, p, ops)| {
        if p % 2 == 0 {
            format!("Compose([Matmul(1x{m}x{n}x{p}), Matmul(1x{m}x{k}x{n}) -> f32], {})", ops.join(", "))
        } else {
            format!("Compose([Softmax(1x{m}x{n}, scan=2), Matmul(1x{m}x{k}x{n}) -> f32], {})", ops[..3].join(", "))
        }
    })
}

/// Spec text that may or may not be valid; the property is checked on the valid ones.
fn spec_text() -> impl Strategy<Value = String> {
    prop_oneof![4 => primitive_text(), 1 => compose_text()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

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
            "the L1 limit 30000 must be a power of two, 0 or the level's capacity (32768); try 16384",
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
