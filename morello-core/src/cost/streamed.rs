//! Streamed fills: the hardware cache fills of a Matmul's rhs that cost nothing, because L2
//! delivers them while the multiply-adds run.
//!
//! A register tile that runs over the whole of `k` (a 6×64 tile of the output summed in
//! registers and stored once) reads its rhs one row per step of `k`; with the rhs in 64-column
//! panels (`[2, 1, 2 p64]`), the rows follow each other in memory and L2 streams them into L1
//! while the core runs the step's multiply-adds. Such tiles run faster than tiles whose rhs
//! block stays in L1, which a model that charges each step's fill at L2's and L1's weights
//! cannot see.
//!
//! So a hardware fill ([`crate::imp::AllocNode::cache_miss`]) of the rhs into L1 is free
//! ([`streamed_fill`]) when the Spec is held in the innermost cache and the rhs tile is
//! contiguous: a run of rows of `k` that follow each other in memory, or a piece of one row.
//! The lhs keeps its fill costs: its register tile reads one value from each of several rows
//! per step.
//!
//! A piece of one row streams only when the loop that cut `k` down to it reads the next row's
//! piece from a nearby address. Rows a whole number of pages apart do not (each page starts
//! a stream anew); short pieces of rows less than a page apart do. A tile's layout does not
//! record how far apart the rows of its parent were, so the loop pays for what its
//! iterations' fills would have: a serial loop whose body reads one row of a Matmul's rhs in
//! global memory pays, on every iteration, for the piece's lines by [`row_pieces`]: nothing
//! when the rows follow each other, the whole fill when the rows lie a whole number of pages
//! apart or the piece is a page or longer, and in between, for short pieces of rows less than
//! a page apart that do not follow each other, the line's write into L1 alone. That middle
//! charge is what tells a copy of a block of `b` into a row-major buffer (rows apart) from one
//! into panels (adjacent rows), which run at different speeds.
//!
//! The first reads from further out still pay: a Spec held in L2 inside one held in L3 or in
//! memory pays [`crate::cost::cache_fill`] for its lines as before. What the rhs's lines then
//! cost at least, for the search's bounds, is [`streamed_line_weight`], for an rhs with a tile
//! that can stream ([`may_stream`]). An rhs whose contiguous runs are pieces of single rows
//! a whole number of pages apart (a tile of a row-major matrix 1024 or more `f32` wide) keeps
//! the full bound: the loops that cut it into rows pay. A line that streams still costs the
//! kernels something to read out of L1, which the bounds count for every input
//! (`search::l1_reads`).

use crate::level::Level;
use crate::primitive::Primitive;
use crate::spec::LogicalSpec;
use crate::target::{Residency, Target};
use crate::tensor::TensorSpec;
use smallvec::SmallVec;

/// Whether a Spec of primitive `primitive` whose operand `operand` is `tensor` may fill
/// that operand (or the tiles of it its sub-Specs read in place) into L1 for free, in some
/// sub-Spec: the operand is a Matmul's rhs, and some contiguous tile of it is read without a
/// loop paying for its rows' fills ([`row_pieces`]).
///
/// A streamed fill needs a contiguous tile ([`streamed_fill`]). The Matmul rewrites make no
/// views, so a sub-Spec reads the rhs in place only through tiles of it. When the rhs's
/// contiguous runs hold one row of `k` each, its rows lie a whole number of pages apart
/// ([`TensorSpec::paged`]) and it has more than one row, every contiguous tile of it is a
/// piece of one row, which some loop in between cut from several rows that far apart, and
/// that loop pays for its lines. Otherwise a tile of it may stream.
pub fn may_stream(primitive: Primitive, operand: usize, tensor: &TensorSpec) -> bool {
    let Some(k) = streamed_rows(primitive, operand) else { return false };
    tensor.level().has_layout()
        && (!tensor.paged()
            || tensor.shape()[usize::from(k)] <= 1
            || tensor.layout().values_per_run(tensor.shape(), k) > 1)
}

/// The dimension of the rows of operand `operand` of a Spec of primitive `primitive`, if its
/// rows may stream (a Matmul's rhs along `k`: the primitive table's
/// [`crate::primitive::OperandDef::streamed_rows`]).
fn streamed_rows(primitive: Primitive, operand: usize) -> Option<u8> {
    primitive.streamed_operand().filter(|&(i, _)| i == operand).map(|(_, dim)| dim)
}

/// Whether a hardware cache fill of operand `operand` of `spec`, held in `held`, into L1 is
/// streamed: free. See the module documentation.
pub fn streamed_fill(spec: &LogicalSpec, operand: usize, held: Residency, target: &Target) -> bool {
    let Some(primitive) = spec.primitive() else { return false };
    if held != target.innermost_residency() || held == Residency::Memory {
        return false;
    }
    let rhs = &spec.operands()[operand];
    streamed_rows(primitive, operand).is_some() && rhs.level() == Level::GL && rhs.is_contiguous()
}

/// How the pieces of one row of `k` of a Matmul's rhs, which each iteration of a serial loop
/// reads, get into L1, by how far apart the rows lie ([`row_pieces`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RowPieces {
    /// Short pieces of rows that follow each other in memory: L2 streams them for free.
    Adjacent,
    /// Short pieces of rows less than a page apart that do not follow each other: they stream,
    /// but each line costs what it costs to write into L1.
    Near,
    /// Pieces a page or longer, or of rows a whole number of pages apart: each line costs what
    /// its fill would have had it not streamed.
    Unstreamed,
}

impl RowPieces {
    /// What the loop pays, per iteration, for each line of its body's piece: the weights a fill
    /// of it into L1, in a Spec held in the innermost cache, uses ([`TensorSpec::fill_cost`] of
    /// its source, [`TensorSpec::move_cost`] of the contiguous L1 tile it writes), or the
    /// second alone for [`RowPieces::Near`].
    pub fn line_cost(self, target: &Target) -> u64 {
        let held = target.innermost_residency();
        let write = target.line_cost(Level::L1, held);
        match self {
            RowPieces::Adjacent => 0,
            RowPieces::Near => write,
            RowPieces::Unstreamed => target.least_line_cost(Level::GL, held) + write,
        }
    }
}

/// The piece of one row of `k` of a Matmul's rhs in global memory that each iteration of a
/// serial loop implementing `spec`, whose body is `body`, reads, when the loop cuts `k` down to
/// one row: how its fills get into L1, which [`streamed_fill`] cannot tell, and its cache
/// lines. `None` for every other loop.
///
/// Whether consecutive rows are far apart is what a tile of two rows of the piece's width
/// says: contiguous ([`RowPieces::Adjacent`]), [`TensorSpec::paged`] (whole pages apart), or
/// neither (less than a page apart, or an odd distance, which the prefetchers follow:
/// [`RowPieces::Near`]). A tile that cannot be taken counts as paged.
pub fn row_pieces(spec: &LogicalSpec, body: &LogicalSpec, target: &Target) -> Option<(RowPieces, u64)> {
    let (operand, k) = spec.primitive()?.streamed_operand()?;
    let (rhs, piece) = (&spec.operands()[operand], &body.operands()[operand]);
    let k = usize::from(k);
    if rhs.level() != Level::GL || piece.shape()[k] != 1 || rhs.shape()[k] < 2 {
        return None;
    }
    let lines = piece.cache_lines(target);
    if piece.data_bytes() >= u64::from(target.streams.page_bytes) {
        return Some((RowPieces::Unstreamed, lines));
    }
    let mut two_rows: SmallVec<[u32; 4]> = piece.shape().into();
    two_rows[k] = 2;
    let kind = match rhs.tile(&two_rows, target) {
        Ok(rows) if rows.is_contiguous() => RowPieces::Adjacent,
        Ok(rows) if !rows.paged() => RowPieces::Near,
        _ => RowPieces::Unstreamed,
    };
    Some((kind, lines))
}

/// What each iteration of a serial loop implementing `spec`, whose body is `body`, pays for
/// the piece of one row of a Matmul's rhs it reads ([`row_pieces`]); zero for other loops.
pub fn row_piece_cost(spec: &LogicalSpec, body: &LogicalSpec, target: &Target) -> u64 {
    row_pieces(spec, body, target).map_or(0, |(kind, lines)| lines.saturating_mul(kind.line_cost(target)))
}

/// The least a line of a Matmul's rhs in global memory costs on its way into L1, for a Spec in
/// which `weight` is the least weight of a line ([`Target::least_line_cost`]), when some tile
/// of the rhs may stream ([`may_stream`]).
///
/// A line may be filled into L1 for free in a sub-Spec held in the innermost cache, after
/// paying the difference between the Spec's fill weight and that cache's on its way in
/// ([`crate::cost::cache_fill`]). Reading it out of L1 costs more, whichever way it came in
/// (the search's bounds count that separately).
pub fn streamed_line_weight(weight: u64, target: &Target) -> u64 {
    match target.innermost_residency() {
        Residency::Memory => weight,
        innermost => weight.saturating_sub(target.fill_line_cost(innermost)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use crate::target::X86_AVX512;

    /// [`row_pieces`] for a loop over `tile` of the Matmul of `shape` (`b×m×k×n`) whose rhs is
    /// declared as `(f32, GL<rhs>)`.
    fn pieces(shape: &str, rhs: &str, tile: [u32; 4]) -> Option<(RowPieces, u64)> {
        let t = &X86_AVX512;
        let text = format!("Matmul({shape}, (f32, GL), (f32, GL{rhs}), (f32, GL), serial)");
        let spec = Spec::parse_for(&text, t).unwrap();
        let operands = spec.operands().iter().enumerate();
        let prim = spec.primitive().unwrap();
        let body: Vec<TensorSpec> = operands.map(|(i, o)| o.tile(&prim.operand_shape(i, &tile), t).unwrap()).collect();
        let body = LogicalSpec::from_tensors(prim, &tile, body.into(), true);
        row_pieces(spec.logical(), &body, t)
    }

    #[test]
    fn short_pieces_of_adjacent_rows_stream_for_free() {
        // Whole rows of a 64-wide matrix, and 256-byte pieces of a panel's rows.
        assert_eq!(pieces("1x8x64x64", "", [1, 8, 1, 64]), Some((RowPieces::Adjacent, 4)));
        assert_eq!(pieces("1x8x512x128", ", [2, 1, 2 p64]", [1, 8, 1, 64]), Some((RowPieces::Adjacent, 4)));
        assert_eq!(RowPieces::Adjacent.line_cost(&X86_AVX512), 0);
    }

    #[test]
    fn short_pieces_of_rows_less_than_a_page_apart_pay_for_l1() {
        // 128-byte pieces of a 512-wide matrix's rows, 2 KiB apart, and of a 64-wide one's.
        assert_eq!(pieces("1x8x512x32", ", row_major, c1", [1, 8, 1, 32]), Some((RowPieces::Near, 2)));
        assert_eq!(pieces("1x8x64x64", "", [1, 8, 1, 32]), Some((RowPieces::Near, 2)));
        let t = &X86_AVX512;
        assert!(RowPieces::Near.line_cost(t) > 0);
        assert!(RowPieces::Near.line_cost(t) < RowPieces::Unstreamed.line_cost(t));
    }

    #[test]
    fn loops_that_keep_several_rows_read_no_row_pieces() {
        assert_eq!(pieces("1x8x512x32", ", row_major, c1, paged", [1, 8, 2, 32]), None);
        assert_eq!(pieces("1x8x512x32", ", row_major, c1, paged", [1, 1, 512, 32]), None);
    }

    #[test]
    fn pieces_of_rows_pages_apart_or_a_page_long_do_not_stream() {
        // Rows whole pages apart: the piece's 2 lines.
        assert_eq!(pieces("1x8x512x32", ", row_major, c1, paged", [1, 8, 1, 32]), Some((RowPieces::Unstreamed, 2)));
        assert_eq!(pieces("1x8x1024x1024", "", [1, 8, 1, 32]), Some((RowPieces::Unstreamed, 2)));
        // One whole row of 16 KiB at a time: adjacent rows, but a long piece (256 lines).
        assert_eq!(pieces("1x1x32x4096", "", [1, 1, 1, 4096]), Some((RowPieces::Unstreamed, 256)));
    }

    #[test]
    fn a_loop_pays_for_a_piece_what_its_fill_or_the_fills_write_into_l1_would_have() {
        // A 128-byte piece of a row, filled into L1 in a Spec held in L2: an unstreamed piece
        // pays the whole fill, a near one its write into L1 alone.
        let t = &X86_AVX512;
        let spec = Spec::parse_for("Matmul(1x8x1x32, (f32, GL), (f32, GL), (f32, GL), serial)", t).unwrap();
        let piece = &spec.operands()[1];
        let held = t.innermost_residency();
        let write = piece.cache_filled(Level::L1).move_cost(t, held);
        let fill = piece.fill_cost(t, held) + write;
        assert_eq!(piece.cache_lines(t) * RowPieces::Unstreamed.line_cost(t), fill);
        assert_eq!(piece.cache_lines(t) * RowPieces::Near.line_cost(t), write);
    }
}
