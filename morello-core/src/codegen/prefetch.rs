//! Software prefetch of streamed inputs.
//!
//! An input in global memory whose tiles no enclosing loop revisits is read once, in order of
//! its loops: it streams from DRAM. The hardware's stream prefetcher keeps up with such a
//! stream as long as the loops continue no more rows at once than it follows
//! ([`crate::target::StreamCost::prefetch_streams`]); past that, most lines arrive unprefetched.
//! `bench/experiments/stream_prefetch.c` measures it: loops that continue 32 rows at a time
//! read a streamed matrix faster with software prefetches a few hundred bytes ahead, while
//! loops that continue 8 rows or fewer, which the prefetcher follows, read it slower with them.
//!
//! So when a vector-register tile of a streamed input is loaded by loops that continue more
//! rows than the stream prefetcher follows, each cache line of the source is preceded by a
//! prefetch of the line the loops will load when they next return to this row (see
//! [`Emitter::prefetch_distance`]), provided the lines in flight for the rows in between fit in
//! half of L1. Prefetches never fault, so prefetching past the end of a buffer is harmless.
//!
//! Inputs that a loop revisits (a GEMM's operands) are not streams and get none: their lines
//! come from the caches the second time. Nor do inputs smaller than [`STREAM_MIN_BYTES`]: they
//! fit in the outer caches, where a kernel called repeatedly finds them.

use super::emitter::{Emitter, View};
use crate::layout::PhysKind;
use crate::level::Level;
use crate::primitive::Direction;
use crate::shape::coordinates;
use crate::tensor::TensorSpec;

/// Inputs smaller than this are not treated as streams: larger than the L2 cache of current
/// x86 cores (1–2 MiB per core).
pub const STREAM_MIN_BYTES: u64 = 4 << 20;

/// Whether a kernel parameter may stream from memory: an input in global memory of at least
/// [`STREAM_MIN_BYTES`].
pub(super) fn may_stream(parameter: &TensorSpec, direction: Direction) -> bool {
    parameter.level() == Level::GL && direction == Direction::In && parameter.data_bytes() >= STREAM_MIN_BYTES
}

impl Emitter {
    /// Whether the buffer behind `view` is a streamed input: a parameter that [`may_stream`]
    /// and that no enclosing loop revisits.
    pub(super) fn is_stream(&self, view: &View) -> bool {
        let buffer = &self.buffers[view.buffer];
        buffer.streamed_input && buffer.revisiting_loops == 0
    }

    /// Prefetches, for a load of `source` into the vector registers of `registers`, the lines
    /// [`Emitter::prefetch_distance`] beyond each line the load reads.
    pub(super) fn prefetch_stream(&mut self, source: &View, fresh: &View, registers: &TensorSpec) {
        let Some(lanes) = registers.vector_size() else { return };
        let zero = vec![0; source.shape.len()];
        let Some(distance) = self.prefetch_distance(&self.buffer_index(source, &zero), source) else { return };
        let line = u64::from(self.target.line_bytes);
        let element_bytes = u64::from(self.buffers[source.buffer].element_bytes);
        // Registers whose first element starts a new line of the source, assuming the register's
        // elements are contiguous there (as in row-major loads); others share a line.
        let per_line = (line / (u64::from(lanes) * element_bytes)).max(1);
        let mut firsts: Vec<(u64, Vec<u64>)> = coordinates(registers.shape())
            .map(|c| c.iter().map(|&x| u64::from(x)).collect::<Vec<u64>>())
            .filter_map(|c| {
                let index = self.constant_index(fresh, &c);
                index.is_multiple_of(u64::from(lanes)).then(|| (index / u64::from(lanes), c))
            })
            .filter(|(register, _)| register.is_multiple_of(per_line))
            .collect();
        firsts.sort_unstable();
        let name = self.buffers[source.buffer].name.clone();
        for (_, coord) in firsts {
            let index = self.buffer_index(source, &coord);
            self.line(&format!("__builtin_prefetch((const char *)({name} + {index}) + {distance}, 0, 3);"));
        }
    }

    /// How many bytes along its row the loops next load a streamed tile at `index` (its buffer
    /// index), or `None` when a prefetch would not pay.
    ///
    /// The loops enclosing the load step through the buffer by their coefficients in `index`.
    /// Those stepping by at least a row *jump* rows; the innermost loop outside the innermost
    /// jump that steps along the row is the one that returns to this row, that many bytes
    /// further on, after the jumping loops inside it have visited their rows. A prefetch pays
    /// when those rows are more than the stream prefetcher follows and the lines in flight for
    /// all of them fit in half of L1. Loops that never jump read rows in order, one stream.
    pub(super) fn prefetch_distance(&self, index: &super::expr::Expr, source: &View) -> Option<u64> {
        let buffer = &self.buffers[source.buffer];
        let innermost = buffer.layout.dims().last()?;
        if innermost.kind != PhysKind::Dynamic {
            return None;
        }
        let element_bytes = u64::from(buffer.element_bytes);
        let row_bytes = u64::from(buffer.shape[usize::from(innermost.logical)]) * element_bytes;
        let mut loops = index.affine_terms()?;
        // Innermost loops first: loop variables are numbered as loops open.
        loops.sort_unstable_by_key(|&(id, _, _)| std::cmp::Reverse(id));
        let jump = loops.iter().position(|&(_, coef, _)| coef * element_bytes >= row_bytes)?;
        let (returning, step) = loops
            .iter()
            .enumerate()
            .skip(jump)
            .find(|(_, (_, coef, _))| coef * element_bytes < row_bytes)
            .map(|(at, &(_, coef, _))| (at, coef * element_bytes))?;
        let rows_between: u64 = loops[..returning]
            .iter()
            .filter(|&&(_, coef, _)| coef * element_bytes >= row_bytes)
            .map(|&(_, _, trips)| trips)
            .product();
        let followed = u64::from(self.target.streams.prefetch_streams);
        let l1 = self.target.level(Level::L1).capacity_bytes;
        (rows_between > followed && step * rows_between <= l1 / 2).then_some(step)
    }
}
