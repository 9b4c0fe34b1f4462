//! The canonical text of a schedule is part of every kernel's symbol hash and is parsed back
//! at run time by `schedule!`: every step prints exactly as pinned here and parses back to
//! the same text.

use morello_core::syntax::Schedule;

/// One written step of every kind, and its canonical text.
const STEPS: [(&str, &str); 18] = [
    ("tile([1, 2, 4, 4])", "tile([1, 2, 4, 4]);"),
    ("tile(1x2x4x4, parallel)", "tile([1, 2, 4, 4], parallel);"),
    ("split(4)", "split(4);"),
    ("spread(4)", "spread(4);"),
    ("move_param(2, VRF, row_major, v8)", "move_param(2, VRF, row_major, v8);"),
    ("move_param(0, L1, f32, c1, col_major)", "move_param(0, L1, col_major, f32, c1);"),
    ("move_param(1, L1)", "move_param(1, L1);"),
    ("to_accum", "to_accum;"),
    ("peel(128)", "peel(128);"),
    ("select(BroadcastVecMultAdd)", "select(BroadcastVecMultAdd);"),
    ("bufferize(0, L1, [0, 1 p8])", "bufferize(0, L1, [0, 1 p8]);"),
    ("spatial_split", "spatial_split;"),
    ("broadcast_first(VRF, row_major, v8)", "broadcast_first(VRF, row_major, v8);"),
    ("to_softmax_parts(RF)", "to_softmax_parts(RF);"),
    ("to_softmax_parts_recompute(RF, (L1, row_major))", "to_softmax_parts_recompute((RF), (L1, row_major));"),
    ("to_max_and_unscaled(RF)", "to_max_and_unscaled(RF);"),
    ("parallel_split(256, L1)", "parallel_split(256, L1);"),
    (
        "subschedule([1]) { to_max_and_denominator; select(VectorAssign) }",
        "subschedule([1]) { to_max_and_denominator; select(VectorAssign); }",
    ),
];

#[test]
fn every_step_prints_its_canonical_text_and_parses_back() {
    for (written, canonical) in STEPS {
        let parsed: Schedule = written.parse().unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(parsed.to_string(), canonical, "{written}");
        let again: Schedule = canonical.parse().unwrap_or_else(|e| panic!("{canonical}: {e}"));
        assert_eq!(again.to_string(), canonical);
    }
    let whole: Schedule = "to_accum; tile([1, 1, 1, 16]); synthesize_all".parse().unwrap();
    assert_eq!(whole.to_string(), "to_accum; tile([1, 1, 1, 16]); synthesize_all;");
}
