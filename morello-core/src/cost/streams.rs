//! The prefetch-stream term of the cost model: lines a loop makes the hardware prefetchers miss.
//!
//! The paper's model counts the cache lines a move touches, so every order of reading an
//! operand costs the same. The hardware does not agree when a loop sweeps a large operand in
//! strips: a strip of a row-major matrix is one short piece per row, and the loop over strips
//! continues all of those pieces at once. The stream prefetcher follows a few dozen such
//! streams and needs several pages of each; past that, with rows a page or more apart (so the
//! stride prefetcher, which stays inside a page, cannot help either), most lines of the strip
//! arrive unprefetched. [`scattered_lines`] counts those lines for one iteration of a loop, and
//! the loop pays [`StreamCost::line_cost`] for each on every iteration.
//!
//! A loop pays when it cuts rows that stream well into pieces that do not, over more rows than
//! the prefetcher follows. Rows stream well when they are long ([`StreamCost::stream_bytes`]),
//! or when they are whole rows of a dense operand a page or more apart. Inside such a loop an
//! operand's rows are shorter and no longer adjacent, so the same lines are not charged twice;
//! the rows of a dense operand shorter than a page are within the stride prefetcher's reach.

use crate::layout::PhysKind;
use crate::level::Level;
use crate::shape::volume;
use crate::spec::Spec;
use crate::target::{StreamCost, Target};

/// The cache lines of `spec`'s global-memory operands that one iteration of a loop over `tile`
/// reads in more interleaved short pieces than the prefetchers follow.
pub fn scattered_lines(spec: &Spec, tile: &[u32], target: &Target) -> u64 {
    let StreamCost { page_bytes, stream_bytes, prefetch_streams, .. } = target.streams;
    let Some(prim) = spec.primitive() else { return 0 };
    let (page, stream, line) = (u64::from(page_bytes), u64::from(stream_bytes), u64::from(target.line_bytes));
    let mut lines = 0;
    for (i, operand) in spec.operands().iter().enumerate() {
        if operand.level() != Level::GL {
            continue;
        }
        let layout = operand.layout();
        let Some(innermost) = layout.dims().last() else { continue };
        if innermost.kind != PhysKind::Dynamic || layout.contig() == 0 {
            continue;
        }
        let dim = usize::from(innermost.logical);
        let dtype_bytes = u64::from(operand.dtype().size_bytes());
        let tile_shape = prim.operand_shape(i, tile);
        let row_bytes = u64::from(operand.shape()[dim]) * dtype_bytes;
        let piece_bytes = u64::from(tile_shape[dim]) * dtype_bytes;
        let rows = volume(&tile_shape) / u64::from(tile_shape[dim]);
        let dense_rows = layout.contig() >= 2;
        let streaming_rows = row_bytes >= stream || dense_rows && row_bytes >= page;
        let cut = piece_bytes < row_bytes.min(stream);
        if streaming_rows && cut && rows > u64::from(prefetch_streams) {
            lines += rows * piece_bytes.div_ceil(line);
        }
    }
    lines
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
        // 2048 runs of 512 bytes (8 lines) side by side, far more than 32 streams.
        assert_eq!(lines("1x1x2048x16384", "", [1, 1, 2048, 128]), 2048 * 8);
    }

    #[test]
    fn a_few_rows_side_by_side_are_prefetched() {
        assert_eq!(lines("1x1x32x16384", "", [1, 1, 32, 128]), 0);
        assert_eq!(lines("1x1x33x16384", "", [1, 1, 33, 128]), 33 * 8);
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

    #[test]
    fn the_contiguous_dimension_follows_the_layout() {
        // Column-major: runs go along k, so strips of columns keep them whole.
        assert_eq!(lines("1x1x2048x16384", ", col_major", [1, 1, 2048, 128]), 0);
        assert_eq!(lines("1x1x2048x16384", ", col_major", [1, 1, 64, 16384]), 16384 * 4);
    }
}
