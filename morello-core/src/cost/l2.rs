//! The L2 term of the cost model: data that fits in L2 comes from memory once.
//!
//! The paper's model charges global memory's weight for every line of every move out of it,
//! however often the same lines were read before. Below L1 the hardware keeps them anyway: a
//! block of a large Matmul whose operands fit in L2 reads them from memory on its first pass
//! and from L2 on every later one. Charging memory's weight for each pass made the search
//! prefer schedules with the fewest moves out of global memory over schedules whose moves hit
//! L2 (on the Zen 4 development VM, a 1024³ GEMM searched so ran at 70% of the FMA peak while
//! one split by hand into 256³ blocks, 768 KiB each, ran at 82%).
//!
//! So a Spec is *held in L2* when its operands in global memory and L1 fit in the target's L2
//! ([`held_in_l2`]). Inside such a Spec, a line of global memory costs L2's weight
//! ([`crate::target::Target::line_cost`]), or less when a hardware cache fill reads it
//! ([`crate::target::Target::fill_line_cost`]); where a Spec that is not held runs a child that
//! is, each run of that child also pays the rest of memory's weight for each of its lines in
//! global memory once ([`l2_fill`]): its first read, from memory.
//!
//! A serial loop in a Spec that is not held pays those first reads per operand only when it
//! moves to another tile of that operand ([`loop_l2_fill`]): what consecutive iterations keep
//! (a vector-matrix product's output, while a loop walks the rows of its matrix) stays in L2.
//!
//! Whether a Spec is held depends on the Spec alone, so its cost still composes from its
//! children's, and the terms only add to a node's cost (the search's optimal substructure and
//! its bounds rely on both). A held Spec's own cost leaves its first reads out, as its parent
//! pays them: at the top of a program they are the same for every implementation.

use crate::level::Level;
use crate::spec::LogicalSpec;
use crate::target::Target;
use smallvec::SmallVec;

/// Whether `spec` is held in L2: it has an operand in global memory, and the lines of its
/// operands in global memory and L1 fit in the target's L2 (which holds what L1 holds), each
/// operand taking [`TensorSpec::cache_footprint_lines`](crate::tensor::TensorSpec::cache_footprint_lines)
/// of its capacity: runs a whole page apart fill the same sets.
pub fn held_in_l2(spec: &LogicalSpec, target: &Target) -> bool {
    lines_held(spec, target, |_| 1).is_some()
}

/// What one run of `spec` pays, beyond the least a held Spec pays per line (a cache fill's
/// weight, [`Target::least_line_cost`]), for reading its lines in global memory from memory
/// once: what a parent that is not held in L2 adds for each run of a child that is. So every
/// line still pays at least memory's weight, which the search's bounds rely on. Zero when
/// `spec` is not held.
pub fn l2_fill(spec: &LogicalSpec, target: &Target) -> u64 {
    let Some(lines) = lines_held(spec, target, |_| 1) else { return 0 };
    lines * fill_weight(target)
}

/// What a serial loop over `tile` in `spec`, which is not held in L2, pays in all its
/// iterations for its `child` (held) reading data from memory: [`l2_fill`], but for each
/// operand only when the loop moves to another tile of it. Consecutive iterations that keep an
/// operand's tile, those of the innermost loop dimensions it does not depend on (loops nest in
/// Spec dimension order), find its lines still in L2, which holds the child's data: a
/// vector-matrix product looping over rows of the matrix reads the output from memory once, not
/// once a row. Each line still pays memory's weight on its first read.
pub fn loop_l2_fill(spec: &LogicalSpec, tile: &[u32], child: &LogicalSpec, target: &Target) -> u64 {
    let trips: SmallVec<[u64; 8]> = spec.shape().iter().zip(tile).map(|(&s, &t)| u64::from(s / t)).collect();
    let all: u64 = trips.iter().product();
    let prim = spec.primitive();
    let rank = trips.len();
    // How often the loop moves to another tile of operand `i` (of a composition: every time).
    let changes = |i: usize| {
        let Some(prim) = prim else { return all };
        let dims = prim.operand_dims(i, rank);
        let kept: u64 = (0..rank)
            .rev()
            .filter(|&d| trips[d] > 1)
            .take_while(|&d| !dims.iter().any(|e| e.uses(d as u8)))
            .map(|d| trips[d])
            .product();
        all / kept
    };
    lines_held(child, target, changes).map_or(0, |lines| lines.saturating_mul(fill_weight(target)))
}

/// What a line of global memory read from memory pays beyond the least a held Spec pays for it.
fn fill_weight(target: &Target) -> u64 {
    target.level(Level::GL).line_cost.saturating_sub(target.least_line_cost(Level::GL, true))
}

/// The cache lines of `spec`'s operands in global memory, each operand's times `reads(i)` (its
/// index), if `spec` is held in L2, in one pass over its operands (the cost model asks for
/// every node and every child it costs).
fn lines_held(spec: &LogicalSpec, target: &Target, reads: impl Fn(usize) -> u64) -> Option<u64> {
    let l2 = target.l2?;
    let line = u64::from(target.line_bytes);
    let mut in_memory = 0u64;
    let mut bytes = 0u64;
    for (i, t) in spec.operands().iter().enumerate() {
        let lines = match t.level() {
            Level::GL | Level::L1 => t.cache_lines(target),
            Level::RF | Level::VRF => continue,
        };
        if t.level() == Level::GL {
            in_memory = in_memory.saturating_add(lines.saturating_mul(reads(i)));
        }
        let taken = if t.paged() { t.cache_footprint_lines(l2.capacity_bytes, target) } else { lines };
        bytes += taken * line;
        if bytes > l2.capacity_bytes {
            return None;
        }
    }
    (in_memory > 0).then_some(in_memory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use crate::target::{PORTABLE, Target, X86_AVX2, X86_AVX512};

    fn logical(text: &str) -> LogicalSpec {
        Spec::parse_for(text, &X86_AVX512).unwrap_or_else(|e| panic!("{text}: {e}")).logical().clone()
    }

    #[test]
    fn a_spec_is_held_when_its_memory_operands_fit_in_l2() {
        // 3 × 256 KiB fit in 1 MiB; 3 × 1 MiB do not.
        let block = logical("Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL))");
        assert!(held_in_l2(&block, &X86_AVX512));
        assert!(!held_in_l2(&block, &X86_AVX2), "AVX2's L2 is 512 KiB");
        assert!(held_in_l2(&logical("Matmul(1x128x128x128, (f32, GL), (f32, GL), (f32, GL))"), &PORTABLE));
        assert!(!held_in_l2(&logical("Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512));
        // Operands in L1 count (L2 holds them too), registers do not; nothing in global memory,
        // nothing to hold.
        assert!(held_in_l2(&logical("Matmul(1x8x8x16, (f32, L1), (f32, GL), (f32, VRF, v16))"), &X86_AVX512));
        assert!(!held_in_l2(&logical("Matmul(1x8x8x8, (f32, L1), (f32, L1), (f32, L1))"), &X86_AVX512));
    }

    #[test]
    fn the_fill_pays_the_rest_of_memorys_weight_for_each_line_in_global_memory() {
        // 32 × 32 f32 in global memory is 64 lines each; the L1 operand is not filled.
        let spec = logical("Matmul(1x32x32x32, (f32, GL), (f32, L1), (f32, GL))");
        let extra = X86_AVX512.level(Level::GL).line_cost - X86_AVX512.l2.unwrap().fill_line_cost;
        assert_eq!(extra, 96);
        assert_eq!(l2_fill(&spec, &X86_AVX512), 2 * 64 * extra);
        assert_eq!(l2_fill(&logical("Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512), 0);
        let without_l2 = Target { l2: None, ..X86_AVX512 };
        assert_eq!(l2_fill(&spec, &without_l2), 0);
        assert!(!held_in_l2(&spec, &without_l2));
    }

    #[test]
    fn a_cache_fill_of_held_data_pays_l2s_delivery_time() {
        let t = &X86_AVX512;
        assert_eq!(t.fill_line_cost(true), 4);
        assert_eq!(t.line_cost(Level::GL, true), 20, "a copy pays L2's full weight");
        assert_eq!(t.fill_line_cost(false), t.level(Level::GL).line_cost, "outside L2, memory's");
        assert_eq!(t.least_line_cost(Level::GL, true), 4);
        assert_eq!(t.least_line_cost(Level::L1, true), t.level(Level::L1).line_cost);
        // A 64×16 tile of a 64-wide row-major `b`: 64 lines, not contiguous (twice the weight).
        let tile = Spec::parse_for("Matmul(1x6x64x64, (f32, GL), (f32, GL), (f32, GL))", t).unwrap();
        let b = tile.operands()[1].tile(&[1, 64, 16], t).unwrap();
        assert_eq!(b.cache_lines(t), 64);
        assert!(!b.is_contiguous());
        assert_eq!(b.fill_cost(t, true), 64 * 4, "a fill fetches the same lines: not doubled");
        assert_eq!(b.move_cost(t, true), 64 * 20 * 2, "a copy is");
        // A line that a held child fills inside a Spec that is not held still pays memory's
        // weight in all: the fill's, and the rest in the child's run (one line of `a` here).
        let one_line = logical("Matmul(1x1x1x16, (f32, GL), (f32, L1), (f32, L1))");
        assert_eq!(t.fill_line_cost(true) + l2_fill(&one_line, t), t.level(Level::GL).line_cost);
    }

    #[test]
    fn a_loop_fills_an_operand_only_when_it_moves_to_another_tile_of_it() {
        let t = &X86_AVX512;
        let extra = fill_weight(t);
        // A vector-matrix product 8 rows of its 128 MiB matrix at a time: each iteration reads
        // 8 new rows (8 × 1024 lines) and 8 values of `a` (one line), and keeps the 64 KiB
        // output (1024 lines), which the loop fills once.
        let vecmat = logical("Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL))");
        let tile = [1, 1, 8, 16384];
        let body = logical("Matmul(1x1x8x16384, (f32, GL), (f32, GL), (f32, GL))");
        assert!(held_in_l2(&body, t) && !held_in_l2(&vecmat, t));
        assert_eq!(loop_l2_fill(&vecmat, &tile, &body, t), (256 * (8 * 1024 + 1) + 1024) * extra);
        assert!(loop_l2_fill(&vecmat, &tile, &body, t) < 256 * l2_fill(&body, t));
        // 256³ blocks of a 2048³ GEMM: the innermost loop walks `n`, which `a` does not depend
        // on, so `a`'s block (4096 lines) is filled once per 8 iterations; `b`'s and `c`'s on
        // every one of the 512.
        let gemm = logical("Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL))");
        let block = logical("Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL))");
        let blocks = loop_l2_fill(&gemm, &[1, 256, 256, 256], &block, t);
        assert_eq!(blocks, (64 * 4096 + 2 * 512 * 4096) * extra);
        // A body not held pays nothing here: its own loops pay for what it reads.
        let strips = logical("Matmul(1x1x2048x128, (f32, GL), (f32, GL), (f32, GL))");
        assert!(!held_in_l2(&strips, t));
        assert_eq!(loop_l2_fill(&vecmat, &[1, 1, 2048, 128], &strips, t), 0);
    }

    #[test]
    fn held_global_memory_costs_l2s_weight() {
        for target in [&X86_AVX2, &X86_AVX512, &PORTABLE] {
            let l2 = target.l2.unwrap();
            assert!(l2.line_cost < target.level(Level::GL).line_cost);
            assert!(target.unprefetched_line_cost(false) > target.unprefetched_line_cost(true));
            assert!(l2.capacity_bytes > target.level(Level::L1).capacity_bytes);
            assert_eq!(target.line_cost(Level::GL, true), l2.line_cost);
            assert_eq!(target.line_cost(Level::GL, false), target.level(Level::GL).line_cost);
            assert_eq!(target.line_cost(Level::L1, true), target.level(Level::L1).line_cost);
        }
    }
}
