//! A bf16 · bf16 → f32 vector-matrix loop over L1 that reads a row-major rhs in place, a
//! 64-byte piece of a row at a time, and widens it without shuffles.
//!
//! A bf16 value is the upper half of an f32's bits, so a register of 32 bf16 holds 16 f32
//! pairs: shifting every 32-bit lane left by 16 leaves the even columns as f32, masking off
//! the low half leaves the odd ones. The loop accumulates even and odd columns apart (two
//! registers per 32 columns) and interleaves them only when it adds them to the output. The
//! broadcast kernel instead widens each half with `vpmovzxwd` (a shuffle) before every
//! multiply-add, which makes it shuffle-bound; the shuffle-free loop reads a row-major matrix
//! faster (`bench/experiments/bf16_conversion.c` times both).

use super::check::Checker;
use super::emit::{KernelEmitter, row_stride, stride_along};
use super::helpers::Helper;
use super::matmul::matmul_accum;
use super::{KernelDef, KernelMismatch, L1, any_register_tiles, operand_moves};
use crate::dtype::Dtype;
use crate::spec::LogicalSpec;
use crate::target::Target;

/// Columns one 64-byte load of bf16 covers.
const COLUMNS_PER_LOAD: u32 = 32;

/// Loads per row in one pass over the rows: wider Specs are done 128 columns at a time. Each
/// row of a pass is then read 4 lines at a time, the fastest step measured; 2 and 8 lines at
/// a time read slower (`bench/experiments/bf16_conversion.c` with its step changed).
const CHUNK_LOADS: u64 = 4;

/// `out[j] += Σ_r lhs[r] · rhs[r][j]` for a `1×1×k×n` MatmulAccum in L1: the output
/// contiguous, the rhs row-major with each row contiguous (rows, and the lhs's values, may lie
/// any distance apart: the tiles of a spread loop), `n` a multiple of 32. A pass over the rows
/// accumulates up to 128 columns in even/odd order in registers for the whole loop over `k`.
pub static MATMUL_LOOP_BF16_EVEN_ODD: KernelDef = KernelDef {
    name: "MatmulLoopBf16EvenOdd",
    implements: "MatmulAccum",
    matches: matmul_accum,
    levels: &[L1, L1, L1],
    applies,
    cost: |spec, target| {
        let (k, loads) = rows_and_loads(spec);
        // Per row a broadcast, and per load the load, two conversions and two multiply-adds;
        // after the loop two interleaving shuffles, two loads, two adds and two stores per
        // load's columns.
        k * (1 + 5 * loads) + 8 * loads + operand_moves(spec, target)
    },
    registers: |spec, _| {
        // Two accumulators per load of a pass; the mask, the two interleaving orders, the
        // broadcast lhs and the loaded row piece.
        2 * rows_and_loads(spec).1.min(CHUNK_LOADS) + 5
    },
    register_tiles: any_register_tiles,
    emit,
};

fn applies(c: &Checker, target: &Target) -> Result<(), KernelMismatch> {
    c.has_feature(target, "avx512f")?;
    c.dtypes_are(&[Dtype::Bf16, Dtype::Bf16, Dtype::F32], "bf16 · bf16 → f32")?;
    let &[b, m, k, n] = c.spec().shape() else { unreachable!("Matmul is rank 4") };
    c.require(b == 1 && m == 1 && n.is_multiple_of(COLUMNS_PER_LOAD), || {
        format!("it needs a 1×1×k×n Spec with n a multiple of {COLUMNS_PER_LOAD}, not {b}×{m}×{k}×{n}")
    })?;
    c.contiguous(2)?;
    let rhs = c.op(1);
    c.require(
        rhs.layout().is_row_major(rhs.shape()) && rhs.layout().contiguous_block(rhs.shape()) >= u64::from(n),
        || "the rhs must be row-major with each row contiguous".to_owned(),
    )
}

/// The Spec's `k` and its loads per row (`n / 32`).
fn rows_and_loads(spec: &LogicalSpec) -> (u64, u64) {
    let &[_, _, k, n] = spec.shape() else { unreachable!("Matmul is rank 4") };
    (u64::from(k), u64::from(n / COLUMNS_PER_LOAD))
}

/// What every chunk of columns shares: C expressions computed once per kernel.
struct Shared {
    /// The `morello_bf16_to_f32` helper.
    widen: String,
    /// Pointers to the lhs, the output and the rhs's first row.
    lhs: String,
    output: String,
    first_row: String,
    /// Elements from one rhs row to the next.
    stride: String,
    /// Elements from one lhs value to the next.
    lhs_stride: String,
    /// The mask keeping the upper half of each 32-bit lane.
    high: String,
    /// Lane orders interleaving even and odd columns into the first and second 16.
    halves: [String; 2],
    /// Rows.
    k: u64,
}

fn emit(spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
    out.helper(Helper::Intrinsics);
    let widen = out.helper(Helper::Bf16ToF32);
    let (k, loads) = rows_and_loads(spec);
    let (lhs, output) = (out.address(0), out.address(2));
    let first_row = out.address(1);
    out.open("{".to_owned());
    let stride = row_stride(1, 1, k, out);
    let lhs_stride = stride_along(0, 2, 1, k, out);
    let high = out.fresh("high");
    out.line(format!("const __m512i {high} = _mm512_set1_epi32((int)0xffff0000u);"));
    // Lane l of the first half takes column l of the 32: even column l/2 (index l/2) or odd
    // column l/2 (index 16 + l/2); the second half continues from column 16.
    let halves = [0, 1].map(|half| {
        let name = out.fresh("interleave");
        let lanes: Vec<String> = (0..16).map(|l| (8 * half + l / 2 + 16 * (l % 2)).to_string()).collect();
        out.line(format!("const __m512i {name} = _mm512_setr_epi32({});", lanes.join(", ")));
        name
    });
    let shared = Shared { widen, lhs, output, first_row, stride, lhs_stride, high, halves, k };
    let (chunks, rest) = (loads / CHUNK_LOADS, loads % CHUNK_LOADS);
    let chunk_columns = CHUNK_LOADS * u64::from(COLUMNS_PER_LOAD);
    match chunks {
        0 => {}
        1 => emit_chunk(&shared, "0", CHUNK_LOADS, out),
        _ => {
            let q = out.fresh("q");
            out.open(format!("for (int64_t {q} = 0; {q} < {chunks}; {q}++) {{"));
            emit_chunk(&shared, &format!("{q} * {chunk_columns}"), CHUNK_LOADS, out);
            out.close();
        }
    }
    if rest > 0 {
        emit_chunk(&shared, &(chunks * chunk_columns).to_string(), rest, out);
    }
    out.close();
}

/// Columns `first..first + 32·loads` of the output (`first` a C expression): all `k` rows into
/// even and odd accumulators, then added to the output.
fn emit_chunk(shared: &Shared, first: &str, loads: u64, out: &mut dyn KernelEmitter) {
    let Shared { widen, lhs, output, first_row, stride, lhs_stride, high, halves, k } = shared;
    out.open("{".to_owned());
    let even: Vec<String> = (0..loads).map(|_| out.fresh("even")).collect();
    let odd: Vec<String> = (0..loads).map(|_| out.fresh("odd")).collect();
    let zeroed: Vec<String> = even.iter().chain(&odd).map(|v| format!("{v} = _mm512_setzero_ps()")).collect();
    out.line(format!("__m512 {};", zeroed.join(", ")));
    let (r, s, row) = (out.fresh("r"), out.fresh("s"), out.fresh("row"));
    out.open(format!("for (int64_t {r} = 0; {r} < {k}; {r}++) {{"));
    out.line(format!("const __m512 {s} = _mm512_set1_ps({widen}({lhs}[{r} * {lhs_stride}]));"));
    out.line(format!("const __auto_type {row} = {first_row} + {r} * {stride} + {first};"));
    for (j, (e, o)) in even.iter().zip(&odd).enumerate() {
        let x = out.fresh("x");
        out.line(format!("__m512i {x};"));
        out.line(format!("__builtin_memcpy(&{x}, {row} + {}, 64);", j as u32 * COLUMNS_PER_LOAD));
        out.line(format!("{e} = _mm512_fmadd_ps({s}, _mm512_castsi512_ps(_mm512_slli_epi32({x}, 16)), {e});"));
        out.line(format!("{o} = _mm512_fmadd_ps({s}, _mm512_castsi512_ps(_mm512_and_si512({x}, {high})), {o});"));
    }
    out.close();
    for (j, (e, o)) in even.iter().zip(&odd).enumerate() {
        for (half, order) in halves.iter().enumerate() {
            let (sum, offset) = (out.fresh("sum"), j as u32 * COLUMNS_PER_LOAD + 16 * half as u32);
            out.line(format!("__m512 {sum};"));
            out.line(format!("__builtin_memcpy(&{sum}, {output} + {first} + {offset}, 64);"));
            out.line(format!("{sum} = _mm512_add_ps({sum}, _mm512_permutex2var_ps({e}, {order}, {o}));"));
            out.line(format!("__builtin_memcpy({output} + {first} + {offset}, &{sum}, 64);"));
        }
    }
    out.close();
}
