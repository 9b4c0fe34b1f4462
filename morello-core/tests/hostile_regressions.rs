//! Hostile inputs that once crashed a parser or were misread, minimized by hand from the
//! hostile-input properties (`hostile_input.rs`).

use morello_core::schedule::ScheduleError;
use morello_core::spec::Spec;
use morello_core::syntax::{MAX_NESTING, Schedule, StepKind, parse_kernel_decls, run_schedule};
use morello_core::target::X86_AVX2;
use proc_macro2::TokenStream;
use std::str::FromStr;

fn matmul() -> Spec {
    "Matmul(1x4x4x16, (f32, GL), (f32, GL), (f32, GL))".parse().expect("a valid Spec")
}

/// Deeply nested brackets overflowed the stack (an abort, not even a panic) inside syn, which
/// descends into groups recursively. They are now an error at the first bracket too deep.
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let spec = format!("{}Move(4x4, (f32, GL), (f32, GL)){}", "(".repeat(depth), ")".repeat(depth));
    let e = spec.parse::<Spec>().unwrap_err();
    assert!(e.message.contains("nest more than"), "{e}");
    assert_eq!((e.line, e.column), (1, MAX_NESTING));

    let schedule = format!("{}{}", "subschedule([0]) { ".repeat(depth), "}".repeat(depth));
    let e = schedule.parse::<Schedule>().unwrap_err();
    assert!(e.message.contains("nest more than"), "{e}");
    match run_schedule(matmul(), &schedule, &X86_AVX2) {
        Err(ScheduleError::Syntax(e)) => assert!(e.message.contains("nest more than"), "{e}"),
        other => panic!("expected a syntax error, got {other:?}"),
    }

    let kernel = format!("fn k({}{})", "[".repeat(depth), "]".repeat(depth));
    let tokens = TokenStream::from_str(&kernel).expect("balanced brackets tokenize");
    let e = parse_kernel_decls(tokens).unwrap_err();
    assert!(e.to_string().contains("nest more than"), "{e}");
}

/// Nesting that valid input uses still parses: a schedule of subschedules a few levels deep.
#[test]
fn moderate_nesting_still_parses() {
    let schedule = format!("{}to_accum;{}", "subschedule([0]) { ".repeat(20), " }".repeat(20));
    let parsed: Schedule = schedule.parse().unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(parsed.steps[0].kind, StepKind::Subschedule { .. }));
}

/// `v4294967304` in a destination was cast to `u32` and silently became `v8`.
#[test]
fn an_oversized_vector_size_in_a_destination_is_an_error() {
    for text in
        ["move_param(2, VRF, row_major, v4294967304);", "move_param(2, VRF, row_major, v99999999999999999999999);"]
    {
        let e = text.parse::<Schedule>().unwrap_err();
        assert_eq!(e.message, "vector size too large", "{text}");
        assert!(text[e.column - 1..].starts_with('v'), "{text}: {e}");
    }
}

/// `v4294967296` on an operand was reported as "vector size must be at least 1".
#[test]
fn an_oversized_vector_size_on_an_operand_says_too_large() {
    let text = "Move(4x4, (f32, GL), (f32, VRF, row_major, v4294967296))";
    let e = text.parse::<Spec>().unwrap_err();
    assert_eq!(e.message, "vector size too large");
    assert!(text[e.column - 1..].starts_with("v4294967296"), "{e}");
    let e = "Move(4x4, (f32, GL), (f32, VRF, row_major, v0))".parse::<Spec>().unwrap_err();
    assert_eq!(e.message, "vector size must be at least 1");
}

/// Run-time schedule text reported syntax errors without a position.
#[test]
fn run_time_schedule_errors_name_line_and_column() {
    let text = "to_accum;\n  tiles([1, 1, 1, 16]);";
    match run_schedule(matmul(), text, &X86_AVX2) {
        Err(ScheduleError::Syntax(e)) => {
            assert_eq!((e.line, e.column), (2, 3), "{e}");
            assert!(e.message.contains("unknown schedule step `tiles`"), "{e}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

/// A stage index as large as a `usize` goes overflowed `index + 1` in `bufferize` (a panic in
/// debug builds); found by `mutated_schedules`. Now it is an error naming the stages.
#[test]
fn a_huge_bufferize_stage_is_an_error_not_an_overflow() {
    let text = "Compose([Matmul(1x2x4x2), Matmul(1x2x2x4) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))";
    let spec: Spec = text.parse().expect("a valid Spec");
    for index in [u64::MAX, u64::MAX - 1, 1] {
        let schedule = format!("bufferize({index}, L1); synthesize_all;");
        let e = run_schedule(spec.clone(), &schedule, &X86_AVX2).expect_err("stage out of range");
        assert!(e.to_string().contains("stage"), "{index}: {e}");
    }
}
