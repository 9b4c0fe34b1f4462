//! The seed corpus of valid inputs and the mutations the hostile-input properties apply to
//! them.

use morello_core::primitive::Primitive;
use morello_core::spec::Spec;
use proptest::prelude::*;

/// One valid Spec for every primitive the parser knows: the first of a few candidate shapes
/// and dtypes that parses. Primitives without a valid candidate are missing (a test checks
/// there are none).
pub fn primitive_specs() -> Vec<String> {
    Primitive::names().filter_map(valid_spec_of).collect()
}

/// A valid Spec of the primitive called `name`, if one of the candidates is valid.
pub fn valid_spec_of(name: &str) -> Option<String> {
    let probe = Primitive::from_name(name, 0)?;
    let rank = probe.def().rank.unwrap_or(2);
    let param = probe.def().param.map(|p| format!(", {p}={}", rank - 1)).unwrap_or_default();
    let primitive = Primitive::from_name(name, (rank - 1) as u8)?;
    let count = primitive.operand_count();
    for size in [4u32, 2, 1, 8] {
        let shape = vec![size.to_string(); rank].join("x");
        for dtypes in [["f32", "f32"], ["bf16", "f32"], ["u8", "u8"], ["i32", "i32"]] {
            let operands: Vec<String> =
                (0..count).map(|i| format!("({}, GL)", if i == 0 { dtypes[0] } else { dtypes[1] })).collect();
            let text = format!("{name}({shape}{param}, {})", operands.join(", "));
            if text.parse::<Spec>().is_ok() {
                return Some(text);
            }
        }
    }
    None
}

/// Hand-written Specs exercising the rest of the notation: limits, layouts, strips, vector
/// sizes, contiguity, `paged`, explicit operand shapes and Compose.
pub const EXTRA_SPECS: [&str; 8] = [
    "(MatmulAccum(1x4x128x16, (bf16, L1, row_major), (bf16, L1, col_major, c0), (f32, VRF, row_major, v8), \
     serial), [64, 1024, 32768, 1073741824])",
    "MatmulAccum(1×4×4×16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial)",
    "Move(1x64x64, (bf16, GL), (f32, GL, [0, 2, 1, 2 oe16]))",
    "Matmul(1x2x4x16, (f32, GL), (f32, GL, [0, 2, 1, 2p8]), (f32, GL))",
    "Matmul([1, 4, 4, 4], ([1, 4, 4], f32, GL), (f32, GL), (f32, GL))",
    "Compose([Softmax(1x64x128, scan=2), Matmul(1x64x32x128) -> f32], (f32, GL), (f32, GL), (f32, GL))",
    "Compose([Matmul(1x2x4x2), Matmul(1x2x2x4) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
    "Conv(1x8x4x30x30x3x3, (f32, GL), (f32, GL), (f32, GL))",
];

/// Valid schedules, each with a Spec it applies to.
pub const SCHEDULES: [(&str, &str); 13] = [
    (
        "Matmul(1x2x16x8, (f32, GL), (f32, GL), (f32, GL))",
        "peel(4); subschedule([1]) { split(4); } subschedule([0]) { peel(2); } synthesize_all;",
    ),
    ("Matmul(2x8x4x16, (f32, GL), (f32, GL), (f32, GL))", "tile([1, 4, 4, 8], parallel); synthesize_all;"),
    (
        "MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial)",
        "tile([1, 1, 1, 16]); move_param(2, VRF, row_major, v8); select(BroadcastVecMultAdd); synthesize_all;",
    ),
    (
        "Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL))",
        "to_accum; move_param(1, GL, [0, 2, 1, 2 p16]); tile([1, 512, 256, 512]); tile(1x512x256x16); \
         move_param(1, L1); split(128); synthesize_all;",
    ),
    (
        "Compose([Matmul(1x2x4x2), Matmul(1x2x2x4) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        "bufferize(0, L1, col_major); synthesize_all;",
    ),
    ("ConvAccum(1x4x2x3x3x3x3, (f32, GL), (f32, GL), (f32, GL))", "tile([1, 4, 2, 1, 1, 3, 3]); spatial_split;"),
    ("DivideVecScalar(4x16, scan=1, (f32, GL), (f32, GL))", "broadcast_first(VRF, row_major, v8); synthesize_all;"),
    ("Softmax(2x16, scan=1, (f32, GL), (f32, GL))", "to_softmax_parts_recompute(L1, (L1, row_major));"),
    ("Softmax(2x16, scan=1, (f32, GL), (f32, GL))", "to_softmax_parts(GL); synthesize_all;"),
    (
        "SoftmaxDenominatorAndMax(1x64, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        "parallel_split(16, GL); subschedule([0]) { tile([1, 1, 16], parallel); } synthesize_all;",
    ),
    ("SoftmaxDenominatorAndMax(2x16, scan=1, (f32, GL), (f32, GL), (f32, GL))", "to_max_and_denominator;"),
    ("SoftmaxDenominatorAndUnscaled(2x16, scan=1, (f32, GL), (f32, GL), (f32, GL))", "to_max_and_unscaled(L1);"),
    (
        "Matmul(1x2x4x8, (bf16, GL), (bf16, GL), (f32, GL))",
        "move_param(1, GL, row_major, f32); to_accum; spread(2); synthesize_all;",
    ),
];

/// Valid `kernel!` bodies (several declarations each).
pub const KERNELS: [&str; 3] = [
    "/// Paper Figure 1.
    pub fn fig1(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial))
    schedule {
        tile([1, 1, 1, 16]);
        move_param(2, VRF, row_major, v8);
        select(BroadcastVecMultAdd);
        synthesize_all;
    }
    #[target(avx512)]
    pub(crate) fn soft(Softmax(2x16, scan=1, (f32, GL), (f32, GL)))",
    "pub fn vecmat_row_major(Matmul(1x1x1024x4096, (f32, GL), (f32, GL), (f32, GL), serial));
    /// Panels.
    pub fn vecmat_panels(Matmul(1x1x1024x4096, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL), serial));",
    "#[target(portable)] fn r#move((Move(8x8, (f32, GL), (f32, GL)), [0, 0, 32768, 1073741824]))
    schedule { move_param(0, L1, col_major); synthesize_all; }
    fn compose(Compose([Matmul(1x2x4x2), Matmul(1x2x2x4) -> f32], (f32, GL), (f32, GL), (f32, GL), (f32, GL)))
    schedule { bufferize(0, L1); subschedule([1]) { to_accum; } synthesize_all; }",
];

/// Text spliced into inputs: tokens of the notation, numbers at and beyond every integer
/// width, stray punctuation, unbalanced brackets and non-ASCII.
pub const TOKENS: [&str; 50] = [
    "Matmul",
    "Compose",
    "schedule",
    "fn",
    "pub",
    "serial",
    "paged",
    "f32",
    "bf16",
    "GL",
    "VRF",
    "row_major",
    "col_major",
    "v8",
    "v0",
    "c255",
    "c256",
    "p0",
    "oe0",
    "dim=",
    "scan=",
    "->",
    "x",
    "×",
    "0",
    "-1",
    "4294967296",
    "99999999999999999999",
    "4294967295",
    "x4294967295",
    "65536",
    "2147483648",
    "x0",
    "1x1x1x1x1x1x1x1x1",
    "18446744073709551615",
    "255",
    "256",
    "0x10",
    "1e9",
    ",",
    ";",
    "=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "é",
    "\"",
];

/// One edit of a seed, in characters (so the result stays valid UTF-8).
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Removes `len` characters at `at`.
    Delete { at: usize, len: usize },
    /// Repeats `len` characters at `at`.
    Duplicate { at: usize, len: usize },
    /// Exchanges the `len` characters at `at` with the `len` after them.
    Swap { at: usize, len: usize },
    /// Inserts `TOKENS[token]`, with a space on each side if `spaced`.
    Insert { at: usize, token: usize, spaced: bool },
    /// Keeps the first `at` characters only.
    Truncate { at: usize },
    /// Wraps the text in `depth` pairs of parentheses or brackets.
    Nest { depth: usize, square: bool },
}

/// A mutation; positions are taken modulo the text's length when applied.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    let len = 1usize..12;
    prop_oneof![
        1 => (at, len.clone()).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (at, len.clone()).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (at, len).prop_map(|(at, len)| Mutation::Swap { at, len }),
        3 => (at, 0..TOKENS.len(), any::<bool>())
            .prop_map(|(at, token, spaced)| Mutation::Insert { at, token, spaced }),
        1 => at.prop_map(|at| Mutation::Truncate { at }),
        1 => (1usize..300, any::<bool>()).prop_map(|(depth, square)| Mutation::Nest { depth, square }),
    ]
}

/// `text` with `mutations` applied in order.
pub fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for m in mutations {
        let n = chars.len();
        let pos = |at: usize| if n == 0 { 0 } else { at % (n + 1) };
        match *m {
            Mutation::Delete { at, len } => {
                let start = pos(at);
                chars.drain(start..(start + len).min(n));
            }
            Mutation::Duplicate { at, len } => {
                let start = pos(at);
                let copy: Vec<char> = chars[start..(start + len).min(n)].to_vec();
                chars.splice(start..start, copy);
            }
            Mutation::Swap { at, len } => {
                let start = pos(at);
                if start + 2 * len <= n {
                    chars[start..start + 2 * len].rotate_left(len);
                }
            }
            Mutation::Insert { at, token, spaced } => {
                let token = if spaced { format!(" {} ", TOKENS[token]) } else { TOKENS[token].to_owned() };
                let start = pos(at);
                chars.splice(start..start, token.chars());
            }
            Mutation::Truncate { at } => chars.truncate(pos(at)),
            Mutation::Nest { depth, square } => {
                let (open, close) = if square { ('[', ']') } else { ('(', ')') };
                chars.splice(0..0, std::iter::repeat_n(open, depth));
                chars.extend(std::iter::repeat_n(close, depth));
            }
        }
    }
    chars.into_iter().collect()
}

/// Fully random text drawn from the notation's characters and tokens.
pub fn random_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(TOKENS.to_vec()).prop_map(str::to_owned),
        "[a-zA-Z0-9_ ,;:()\\[\\]{}<>=#!/*+.'\"\n-]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// Whether the 1-based `line` and `column` (in characters; one past the end of a line counts)
/// lie within `text`. proc-macro2 counts lines at `\n` only.
pub fn within(text: &str, line: usize, column: usize) -> bool {
    line >= 1 && text.split('\n').nth(line - 1).is_some_and(|l| column >= 1 && column <= l.chars().count() + 1)
}
