//! The prefetch-stream term of the cost model: lines a loop makes the hardware prefetchers miss.
//!
//! The paper's model counts the cache lines a move touches, so every order of reading an
//! operand costs the same. The hardware does not agree when a loop sweeps a large operand in
//! pieces: a strip of a row-major matrix is one short piece per row (a block of a matrix packed
//! in panels, one piece per panel), and the loop continues all of those pieces at once, as
//! interleaved streams. The stream prefetcher follows a few dozen such streams and needs
//! several pages of each; past that, with the runs a page or more apart (so the stride
//! prefetcher, which stays inside a page, cannot help either), most lines of the pieces arrive
//! unprefetched. Below that, each piece still makes the prefetcher pick its stream up again
//! after the other streams' pieces, which costs at least its first line: fewer streams read
//! faster (a vector-matrix product over a matrix in panels reads one panel after another
//! faster than several panels at once).
//! [`scattered_lines`] counts those lines for one iteration of a loop, and the loop pays
//! [`Target::unprefetched_line_cost`] for each on every iteration.
//!
//! A loop pays when it cuts runs that stream well into pieces that do not. Runs (the rows of a
//! row-major operand, the panels of a packed one) stream well when they are long
//! ([`StreamCost::stream_bytes`]), or when they are a page or more and adjacent to each other
//! (a dense operand). Inside such a loop an operand's runs are shorter and no longer adjacent,
//! so the same lines are not charged twice; the runs of a dense operand shorter than a page
//! are within the stride prefetcher's reach.

use crate::level::Level;
use crate::spec::Spec;
use crate::target::{StreamCost, Target};
use crate::tensor::TensorSpec;

/// The cache lines of `spec`'s global-memory operands that one iteration of a loop over `tile`
/// reads in interleaved short pieces: every line of them when the loop continues more streams
/// than the prefetchers follow, the first line of each when it continues several.
///
/// The streams a loop continues are the pieces of one iteration, times the iterations of the
/// loop dimensions inside the one that advances along them (loops nest in Spec dimension
/// order), which move to other runs before the next piece of the same ones.
pub fn scattered_lines(spec: &Spec, tile: &[u32], target: &Target) -> u64 {
    let Some(prim) = spec.primitive() else { return 0 };
    let StreamCost { page_bytes, stream_bytes, prefetch_streams, .. } = target.streams;
    let line = u64::from(target.line_bytes);
    // An operand smaller than a page and a stream has no run that streams. The search costs
    // every loop it builds, so this is checked before any shape is.
    let smallest_streaming = u64::from(page_bytes.min(stream_bytes));
    let rank = tile.len();
    let mut lines = 0;
    for (i, operand) in spec.operands().iter().enumerate() {
        if operand.level() != Level::GL || operand.data_bytes() < smallest_streaming {
            continue;
        }
        let tile_shape = prim.operand_shape(i, tile);
        if *tile_shape == *operand.shape() {
            continue; // the loop does not cut this operand
        }
        let Some(pieces) = short_pieces(operand, &tile_shape, &target.streams) else {
            continue;
        };
        let dims = prim.operand_dims(i, rank);
        let Some(along) = (0..rank as u8).rev().find(|&d| dims[usize::from(pieces.along)].uses(d)) else {
            continue;
        };
        let across: u64 = (usize::from(along) + 1..rank)
            .filter(|&d| dims.iter().any(|e| e.uses(d as u8)))
            .map(|d| u64::from(spec.shape()[d] / tile[d]))
            .product();
        lines += match pieces.count * across {
            0 | 1 => 0,
            streams if streams > u64::from(prefetch_streams) => pieces.count * pieces.bytes.div_ceil(line),
            _ => pieces.count,
        };
    }
    lines
}

/// The cache lines of `spec`'s global-memory operands that one iteration of a loop over `tile`
/// reads while the prefetcher starts streams afresh: a page's worth of lines of each long row
/// of a tile of whole rows, unless the tile is a single row that follows on from the last.
///
/// A loop whose tiles hold several whole rows that each stream well (a block of rows of a
/// row-major matrix, as a vector-matrix product reads its matrix) has its body read them side
/// by side, as every kernel over several rows does, so every iteration starts as many streams,
/// at rows the previous iteration did not continue into; the prefetcher needs a page or so of
/// each before it runs ahead. A tile of one row starts one, unless the rows are adjacent (the
/// stream then runs on from the previous row). A spread loop (`crate::imp::LoopNode::spread`)
/// continues each of its streams into the next row of its band instead, and pays nothing
/// here, and reads faster (`bench/experiments/bf16_conversion.c` times both orders).
pub fn restarted_lines(spec: &Spec, tile: &[u32], target: &Target) -> u64 {
    let Some(prim) = spec.primitive() else { return 0 };
    let StreamCost { page_bytes, stream_bytes, .. } = target.streams;
    let line = u64::from(target.line_bytes);
    let mut lines = 0;
    for (i, operand) in spec.operands().iter().enumerate() {
        if operand.level() != Level::GL || operand.data_bytes() < u64::from(stream_bytes) {
            continue;
        }
        let tile_shape = prim.operand_shape(i, tile);
        if *tile_shape == *operand.shape() {
            continue;
        }
        let layout = operand.layout();
        let (Some(whole), Ok(cut)) =
            (layout.extents(operand.shape()).last().copied(), layout.tile_extents(&tile_shape))
        else {
            continue;
        };
        let Some(&row) = cut.last() else { continue };
        let rows: u64 = cut[..cut.len() - 1].iter().map(|&e| u64::from(e)).product();
        let row_bytes = u64::from(row) * u64::from(operand.dtype().size_bytes());
        let adjacent_rows = layout.contig() >= 2;
        let started = if rows == 1 && adjacent_rows { 0 } else { rows };
        if row == whole && row_bytes >= u64::from(stream_bytes) {
            lines += started * row_bytes.min(u64::from(page_bytes)).div_ceil(line);
        }
    }
    lines
}

/// The pieces one iteration of a loop reads of an operand.
struct Pieces {
    /// How many, each from another run of the operand.
    count: u64,
    /// The bytes of each.
    bytes: u64,
    /// The operand dimension the runs advance along.
    along: u8,
}

/// The pieces of `operand` a `tile_shape` tile of it reads, when they are cut short from runs
/// that stream well; `None` when the tile keeps runs whole, or they do not stream well anyway.
fn short_pieces(operand: &TensorSpec, tile_shape: &[u32], streams: &StreamCost) -> Option<Pieces> {
    let (page, stream) = (u64::from(streams.page_bytes), u64::from(streams.stream_bytes));
    let layout = operand.layout();
    let whole = layout.extents(operand.shape());
    let tile = layout.tile_extents(tile_shape).ok()?;
    let n = whole.len();
    // Physical dimensions from `adjacent` inwards are adjacent in memory: the operand's runs.
    let adjacent = n - usize::from(layout.contig());
    // The innermost dimension the tile cuts; the tile covers every dimension inside it.
    let cut = (0..n).rev().find(|&d| tile[d] < whole[d])?;
    if cut < adjacent {
        return None; // the loop steps across runs, not along them
    }
    let dtype_bytes = u64::from(operand.dtype().size_bytes());
    let inner: u64 = whole[cut + 1..].iter().map(|&e| u64::from(e)).product::<u64>() * dtype_bytes;
    let run_bytes = u64::from(whole[cut]) * inner;
    let piece_bytes = u64::from(tile[cut]) * inner;
    let dense = cut > adjacent;
    let streaming = run_bytes >= stream || dense && run_bytes >= page;
    let short = piece_bytes < run_bytes.min(stream);
    (streaming && short).then(|| Pieces {
        count: tile[..cut].iter().map(|&e| u64::from(e)).product(),
        bytes: piece_bytes,
        along: layout.dims()[cut].logical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::X86_AVX512;

    /// `scattered_lines` for a Matmul of `shape` (`b×m×k×n`) whose `b` operand is declared as
    /// `b_decl`, looped over `tile`.
    fn lines(shape: &str, b_decl: &str, tile: [u32; 4]) -> u64 {
        let text = format!("Matmul({shape}, (f32, GL), (f32, GL{b_decl}), (f32, GL), serial)");
        let spec = Spec::parse_for(&text, &X86_AVX512).unwrap();
        scattered_lines(&spec, &tile, &X86_AVX512)
    }

    #[test]
    fn column_strips_of_a_large_matrix_pay_for_every_line() {
        // 2048 runs of 512 bytes (8 lines) side by side, far more than 8 streams.
        assert_eq!(lines("1x1x2048x16384", "", [1, 1, 2048, 128]), 2048 * 8);
    }

    #[test]
    fn a_few_rows_side_by_side_pay_for_their_first_lines() {
        // As many rows as the prefetcher follows, and one more.
        let n = X86_AVX512.streams.prefetch_streams;
        assert_eq!(lines(&format!("1x1x{n}x16384"), "", [1, 1, n, 128]), u64::from(n));
        let more = n + 1;
        assert_eq!(lines(&format!("1x1x{more}x16384"), "", [1, 1, more, 128]), u64::from(more) * 8);
        // One row: a single stream, continued by the next iteration.
        assert_eq!(lines("1x1x1x16384", "", [1, 1, 1, 128]), 0);
    }

    #[test]
    fn panels_read_side_by_side_are_streams_too() {
        // 8 panels of 256 columns (1 MiB each), 16 rows of each per iteration: 8 pieces of 8 KiB.
        let panels = ", [2, 1, 2 p256, 1 p2]";
        let bf16 = |tile: [u32; 4]| {
            let text = format!("Matmul(1x1x2048x2048, (bf16, GL), (bf16, GL{panels}), (f32, GL), serial)");
            scattered_lines(&Spec::parse_for(&text, &X86_AVX512).unwrap(), &tile, &X86_AVX512)
        };
        assert_eq!(bf16([1, 1, 16, 2048]), 8);
        // One panel at a time, or its rows in order: one stream.
        assert_eq!(bf16([1, 1, 2048, 256]), 0);
        // One loop over both: the panels change inside each row block, 8 streams again.
        assert_eq!(bf16([1, 1, 16, 256]), 1);
    }

    #[test]
    fn loops_that_do_not_cut_rows_short_pay_nothing() {
        // Blocks of whole rows: the loop steps across rows, not along them.
        assert_eq!(lines("1x1x2048x16384", "", [1, 1, 64, 16384]), 0);
        // Pieces of 16 KiB stream as well as whole rows; pieces of 8 KiB do not.
        assert_eq!(lines("1x1x2048x16384", "", [1, 1, 2048, 4096]), 0);
        assert_eq!(lines("1x1x2048x16384", "", [1, 1, 2048, 2048]), 2048 * 128);
    }

    #[test]
    fn rows_cut_short_already_pay_nothing() {
        // Rows of 8 KiB, not adjacent: cut from longer ones by an enclosing loop, which paid.
        assert_eq!(lines("1x1x2048x2048", ", row_major, c1", [1, 1, 2048, 128]), 0);
        // Rows of 16 KiB, not adjacent: they streamed well until this loop.
        assert_eq!(lines("1x1x2048x4096", ", row_major, c1", [1, 1, 2048, 128]), 2048 * 8);
    }

    #[test]
    fn dense_rows_less_than_a_page_apart_pay_nothing() {
        // A dense 256² matrix: rows 1 KiB apart, within reach of the stride prefetcher.
        assert_eq!(lines("1x256x256x256", "", [1, 256, 256, 32]), 0);
        assert_eq!(lines("1x1x2048x512", "", [1, 1, 2048, 128]), 0);
        // Dense rows a page apart, in `b` and in the output: 256 pieces of 2 lines each.
        assert_eq!(lines("1x256x256x1024", "", [1, 256, 256, 32]), 2 * 256 * 2);
    }

    /// `restarted_lines` for a Matmul of `shape` looped over `tile`.
    fn restarts(shape: &str, tile: [u32; 4]) -> u64 {
        let text = format!("Matmul({shape}, (f32, GL), (f32, GL), (f32, GL), serial)");
        restarted_lines(&Spec::parse_for(&text, &X86_AVX512).unwrap(), &tile, &X86_AVX512)
    }

    #[test]
    fn blocks_of_long_rows_restart_a_stream_per_row() {
        // 8 rows of 64 KiB a block: a page (64 lines) of each.
        assert_eq!(restarts("1x1x2048x16384", [1, 1, 8, 16384]), 8 * 64);
        // One row a block continues the stream of the row before it, when the rows are adjacent;
        // rows of a strip lie apart, and each starts a stream.
        assert_eq!(restarts("1x1x2048x16384", [1, 1, 1, 16384]), 0);
        let strip = "Matmul(1x1x2048x4096, (f32, GL), (f32, GL, row_major, c1), (f32, GL), serial)";
        let strip = Spec::parse_for(strip, &X86_AVX512).unwrap();
        assert_eq!(restarted_lines(&strip, &[1, 1, 1, 4096], &X86_AVX512), 64);
        // Rows of 8 KiB are within the prefetchers' reach; pieces of rows are `scattered_lines`'.
        assert_eq!(restarts("1x1x2048x2048", [1, 1, 8, 2048]), 0);
        assert_eq!(restarts("1x1x2048x16384", [1, 1, 2048, 4096]), 0);
    }

    #[test]
    fn the_contiguous_dimension_follows_the_layout() {
        // Column-major: runs go along k, so strips of columns keep them whole.
        assert_eq!(lines("1x1x2048x16384", ", col_major", [1, 1, 2048, 128]), 0);
        assert_eq!(lines("1x1x2048x16384", ", col_major", [1, 1, 64, 16384]), 16384 * 4);
    }
}
