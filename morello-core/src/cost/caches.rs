//! The cache terms of the cost model: data that fits in L2 or L3 comes from memory once.
//!
//! The paper's model charges global memory's weight for every line of every move out of it,
//! however often the same lines were read before. Below L1 the hardware keeps them anyway: a
//! block of a large Matmul whose operands fit in L2 reads them from memory on its first pass
//! and from L2 on every later one. Charging memory's weight for each pass made the search
//! prefer schedules with the fewest moves out of global memory over schedules whose moves hit
//! L2, which run faster (a large GEMM split into blocks whose operands fit in L2). L3 does the
//! same one level out: a 1024³ GEMM's 12 MiB sit in L3, where a plan that re-reads `a` and `c`
//! once per block of `b` runs faster than one that avoids those re-reads.
//!
//! So a Spec has a [`Residency`]: the innermost cache that holds the lines of its operands in
//! global memory and L1 ([`residency`]). Inside a Spec held in a cache, a line of global memory
//! costs that cache's weight ([`Target::line_cost`]), or less when a hardware cache fill reads
//! it ([`Target::fill_line_cost`]); where a Spec runs a child held further in, each run of that
//! child also pays, for each of its lines in global memory, the difference between the two
//! residencies' fill weights once ([`cache_fill`]): its first read, from where the parent's
//! data lives. The differences telescope, so a line read first by a Spec held in L2 inside one
//! held in L3 inside one in memory pays memory's weight in all.
//!
//! A serial loop pays those first reads per operand only when it moves to another tile of that
//! operand ([`loop_cache_fill`]): what consecutive iterations keep (a vector-matrix product's
//! output, while a loop walks the rows of its matrix) stays in the cache.
//!
//! Whether a Spec is held depends on the Spec alone, so its cost still composes from its
//! children's, and the terms only add to a node's cost (the search's optimal substructure and
//! its bounds rely on both). A held Spec's own cost leaves its first reads out, as its parent
//! pays them: at the top of a program they are the same for every implementation.

use crate::residency::lines_held;
use crate::spec::LogicalSpec;
use crate::target::{Residency, Target};
use smallvec::SmallVec;

/// What one run of `spec` pays, beyond the least its own residency pays per line (a cache
/// fill's weight, [`Target::fill_line_cost`]), for reading its lines in global memory once
/// from where a parent of residency `parent` finds them: what such a parent adds for each run
/// of a child held further in. So every line still pays at least the parent's least weight,
/// which the search's bounds rely on. Zero when `spec` is held no further in than `parent`.
pub fn cache_fill(spec: &LogicalSpec, parent: Residency, target: &Target) -> u64 {
    match lines_held(spec, target, |_| 1) {
        Some((residency, lines)) if residency < parent => lines * fill_weight(residency, parent, target),
        _ => 0,
    }
}

/// What a serial loop over `tile` in `spec`, of residency `parent`, pays in all its
/// iterations for its `child` (held further in) reading data from where `spec`'s lives:
/// [`cache_fill`], but for each operand only when the loop moves to another tile of it.
/// Consecutive iterations that keep an operand's tile, those of the innermost loop dimensions
/// it does not depend on (loops nest in Spec dimension order), find its lines still in the
/// child's cache: a vector-matrix product looping over rows of the matrix reads the output
/// from memory once, not once a row. Each line still pays the parent's weight on its first
/// read.
pub fn loop_cache_fill(
    spec: &LogicalSpec,
    tile: &[u32],
    child: &LogicalSpec,
    parent: Residency,
    target: &Target,
) -> u64 {
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
    match lines_held(child, target, changes) {
        Some((residency, lines)) if residency < parent => lines.saturating_mul(fill_weight(residency, parent, target)),
        _ => 0,
    }
}

/// What a line of global memory read first from where a Spec of residency `outer` finds it
/// pays beyond the least a Spec held in `inner` pays for it.
fn fill_weight(inner: Residency, outer: Residency, target: &Target) -> u64 {
    target.fill_line_cost(outer).saturating_sub(target.fill_line_cost(inner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::Level;
    use crate::residency::residency;
    use crate::spec::Spec;
    use crate::target::{PORTABLE, X86_AVX2, X86_AVX512};

    fn logical(text: &str) -> LogicalSpec {
        Spec::parse_for(text, &X86_AVX512).unwrap_or_else(|e| panic!("{text}: {e}")).logical().clone()
    }

    fn memory_fill(spec: &LogicalSpec) -> u64 {
        cache_fill(spec, Residency::Memory, &X86_AVX512)
    }

    #[test]
    fn a_spec_is_held_in_the_innermost_cache_its_data_fits_in() {
        // 3 × 256 KiB fit in 1 MiB; 3 × 1 MiB do not, but fit in 16 MiB; 3 × 16 MiB do not.
        let block = logical("Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(residency(&block, &X86_AVX512), Residency::L2);
        assert_eq!(residency(&block, &X86_AVX2), Residency::L3, "AVX2's L2 is 512 KiB");
        let small = logical("Matmul(1x128x128x128, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(residency(&small, &PORTABLE), Residency::L2);
        let gemm = |n: u32| logical(&format!("Matmul(1x{n}x{n}x{n}, (f32, GL), (f32, GL), (f32, GL))"));
        assert_eq!(residency(&gemm(512), &X86_AVX512), Residency::L3);
        assert_eq!(residency(&gemm(1024), &X86_AVX512), Residency::L3, "12 MiB");
        assert_eq!(residency(&gemm(2048), &X86_AVX512), Residency::Memory, "48 MiB");
        // Operands in L1 count (the caches hold them too), registers do not; nothing in global
        // memory, nothing to hold.
        let with_l1 = logical("Matmul(1x8x8x16, (f32, L1), (f32, GL), (f32, VRF, v16))");
        assert_eq!(residency(&with_l1, &X86_AVX512), Residency::L2);
        let in_l1 = logical("Matmul(1x8x8x8, (f32, L1), (f32, L1), (f32, L1))");
        assert_eq!(residency(&in_l1, &X86_AVX512), Residency::Memory);
        let without_caches = Target { l2: None, l3: None, ..X86_AVX512 };
        assert_eq!(residency(&block, &without_caches), Residency::Memory);
        assert_eq!(residency(&block, &Target { l2: None, ..X86_AVX512 }), Residency::L3);
    }

    #[test]
    fn a_child_pays_the_difference_of_the_fill_weights_for_each_line_in_global_memory() {
        let t = &X86_AVX512;
        // 32 × 32 f32 in global memory is 64 lines each; the L1 operand is not filled.
        let spec = logical("Matmul(1x32x32x32, (f32, GL), (f32, L1), (f32, GL))");
        assert_eq!(fill_weight(Residency::L2, Residency::Memory, t), 96);
        assert_eq!(memory_fill(&spec), 2 * 64 * 96);
        assert_eq!(cache_fill(&spec, Residency::L3, t), 2 * 64 * (9 - 4));
        assert_eq!(cache_fill(&spec, Residency::L2, t), 0, "not held further in than its parent");
        // Held in L3 (1 MiB each): it pays memory's 100 less L3's fill of 9, and nothing inside L3.
        let blocks = logical("Matmul(1x512x512x512, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(memory_fill(&blocks), 3 * 16384 * 91);
        assert_eq!(cache_fill(&blocks, Residency::L3, t), 0);
        let without_caches = Target { l2: None, l3: None, ..X86_AVX512 };
        assert_eq!(cache_fill(&spec, Residency::Memory, &without_caches), 0);
    }

    #[test]
    fn first_reads_telescope_to_memorys_weight() {
        let t = &X86_AVX512;
        let memory = t.level(Level::GL).line_cost;
        // A line that a child held in L2 fills, inside one held in L3, inside one in memory:
        // the fill's weight, the child's first read from L3, and L3's first read from memory.
        let one_line = logical("Matmul(1x1x1x16, (f32, GL), (f32, L1), (f32, L1))");
        assert_eq!(residency(&one_line, t), Residency::L2);
        let from_l3 = cache_fill(&one_line, Residency::L3, t);
        let l3_from_memory = fill_weight(Residency::L3, Residency::Memory, t);
        assert_eq!(t.fill_line_cost(Residency::L2) + from_l3 + l3_from_memory, memory);
        assert_eq!(t.fill_line_cost(Residency::L2) + memory_fill(&one_line), memory);
    }

    #[test]
    fn a_loop_fills_an_operand_only_when_it_moves_to_another_tile_of_it() {
        let t = &X86_AVX512;
        let extra = fill_weight(Residency::L2, Residency::Memory, t);
        // A vector-matrix product 8 rows of its 128 MiB matrix at a time: each iteration reads
        // 8 new rows (8 × 1024 lines) and 8 values of `a` (one line), and keeps the 64 KiB
        // output (1024 lines), which the loop fills once.
        let vecmat = logical("Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL))");
        let tile = [1, 1, 8, 16384];
        let body = logical("Matmul(1x1x8x16384, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(residency(&body, t), Residency::L2);
        assert_eq!(residency(&vecmat, t), Residency::Memory);
        let rows = loop_cache_fill(&vecmat, &tile, &body, Residency::Memory, t);
        assert_eq!(rows, (256 * (8 * 1024 + 1) + 1024) * extra);
        assert!(rows < 256 * memory_fill(&body));
        // 256³ blocks of a 2048³ GEMM: the innermost loop walks `n`, which `a` does not depend
        // on, so `a`'s block (4096 lines) is filled once per 8 iterations; `b`'s and `c`'s on
        // every one of the 512.
        let gemm = logical("Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL))");
        let block = logical("Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL))");
        let blocks = loop_cache_fill(&gemm, &[1, 256, 256, 256], &block, Residency::Memory, t);
        assert_eq!(blocks, (64 * 4096 + 2 * 512 * 4096) * extra);
        // The same blocks of a 1024³ GEMM held in L3 pay L3's first reads only.
        let held = logical("Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL))");
        let in_l3 = loop_cache_fill(&held, &[1, 256, 256, 256], &block, Residency::L3, t);
        assert_eq!(in_l3, (16 * 4096 + 2 * 64 * 4096) * fill_weight(Residency::L2, Residency::L3, t));
        // A body held no further in pays nothing here: its own loops pay for what it reads.
        let strips = logical("Matmul(1x1x2048x128, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(residency(&strips, t), Residency::L3);
        assert_eq!(loop_cache_fill(&vecmat, &[1, 1, 2048, 128], &strips, Residency::L3, t), 0);
    }

    #[test]
    fn a_cache_fill_of_a_tile_is_not_doubled_where_a_copy_is() {
        let t = &X86_AVX512;
        // A 64×16 tile of a 64-wide row-major `b`: 64 lines, not contiguous (twice the weight).
        let tile = Spec::parse_for("Matmul(1x6x64x64, (f32, GL), (f32, GL), (f32, GL))", t).unwrap();
        let b = tile.operands()[1].tile(&[1, 64, 16], t).unwrap();
        assert_eq!(b.cache_lines(t), 64);
        assert!(!b.is_contiguous());
        assert_eq!(b.fill_cost(t, Residency::L2), 64 * 4, "a fill fetches the same lines: not doubled");
        assert_eq!(b.move_cost(t, Residency::L2), 64 * 20 * 2, "a copy is");
    }
}
