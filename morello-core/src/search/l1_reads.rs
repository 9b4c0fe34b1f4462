//! What reading a Matmul's inputs out of L1 costs at least, for the search's bounds.
//!
//! No kernel reads a Matmul's input in global memory, and moves out of global memory go only to
//! L1 (or global memory): every value of the lhs and the rhs is read by a kernel from L1, or
//! from registers it was moved into from L1 (after a cache fill or a copy, which
//! [`super::bounds`] counts separately). On its way out of L1 each byte pays for one of a few
//! ways, and the bound on the kernels ([`super::bounds`]'s `matmul_kernels_bound`) counts none
//! of them: [`least_l1_reads`] is the cheapest way's cost of all the bytes.

use super::lanes::widest_lanes;
use crate::dtype::Dtype;
use crate::kernels::has_contiguous_line;
use crate::level::Level;
use crate::spec::LogicalSpec;
use crate::target::Target;

/// The Matmul output's logical dimensions along `m` and `n` (its shape is `[b, m, n]`).
const OUT_M: usize = 1;
const OUT_N: usize = 2;

/// The logical dimension along `k` of a Matmul's lhs (`[b, m, k]`) and rhs (`[b, k, n]`).
const K_OF: [usize; 2] = [2, 1];

/// The least that reading input `operand` (0 the lhs, 1 the rhs) of the Matmul `spec` out of
/// L1 costs, beyond the bound on its kernels; 0 for an input already in registers.
///
/// The ways out of L1, each with a least cost per byte (a Matmul's rewrites make no views and
/// no temporaries of its inputs, so its moves are allocations):
/// - one value at a time: `MultAdd` charges the value's cache line at L1's weight, a scalar
///   move its line and 1 more: L1's weight per value;
/// - the dot products and the bf16 loops read vectors in L1 and charge their lines at L1's
///   weight: L1's weight per line. The dot products need a tile of the input contiguous along
///   `k` alone, so for another dtype than bf16 without one this way is closed;
/// - a move into vector registers pays its source's lines at L1's weight, and its kernels at
///   least 1 per register they fill (`VectorAssign`, `VectorPermute`; `VectorCast` 2 per
///   register it widens into, which holds at least the bytes it read): L1's weight per line and
///   1 per widest vector;
/// - a move into another tensor in L1 (no move leaves L1 for global memory) pays its source's
///   lines and its destination's at L1's weight, before the bytes leave the new tensor by
///   another way;
/// - the broadcast kernels read their scalar operand straight from L1 at no charge, one value
///   per call, and cost at least `2/L` more per call than the bound on the kernels counts for
///   them when the output is not in vector registers (`L` the lanes it counts with,
///   [`widest_lanes`]): `2/L` per value.
///
/// An output in vector registers stays there, so `MultAdd`, the dot products and the bf16
/// loops (whose outputs are in L1 or scalar registers) cannot run, and the bound on the kernels
/// counts the broadcasts at up to their full cost: an input that a broadcast can take as its
/// scalar may then leave L1 for nothing. That needs an output tile along the other input's
/// free dimension alone (`n` for a scalar of the lhs, `m` for one of the rhs), which an output
/// in registers laid out along the other dimension does not have.
///
/// The bytes may be split among the ways, so the bound is the cheapest way's cost of all of
/// them, each term rounded down.
pub(super) fn least_l1_reads(spec: &LogicalSpec, operand: usize, target: &Target) -> u64 {
    let operands = spec.operands();
    let input = &operands[operand];
    if !matches!(input.level(), Level::L1 | Level::GL) {
        return 0;
    }
    let out = operands.last().expect("a Matmul has an output");
    let output_in_registers = out.level() == Level::VRF;
    let scalar_along = if operand == 0 { OUT_N } else { OUT_M };
    if output_in_registers && has_contiguous_line(out, scalar_along, 1, target) {
        return 0;
    }
    let line = u64::from(target.line_bytes);
    let l1_weight = target.level(Level::L1).line_cost;
    let (bytes, values) = (input.data_bytes(), input.volume());
    let lines_weight = bytes * l1_weight / line;
    let vector = u64::from(target.widest_vector_bytes());
    let mut least = values * l1_weight;
    if let Some(vectors) = bytes.checked_div(vector) {
        least = least.min(lines_weight + vectors);
        if !output_in_registers {
            least = least.min(2 * values / widest_lanes(spec, target));
        }
    }
    // Checked last: it asks about the tensor's tiles, and most Specs do not need the answer.
    if lines_weight < least
        && !output_in_registers
        && (input.dtype() == Dtype::Bf16 || has_contiguous_line(input, K_OF[operand], 2, target))
    {
        least = lines_weight;
    }
    let into_memory = 2 * lines_weight + lines_weight.min(least);
    least.min(into_memory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use crate::target::{X86_AVX2, X86_AVX512};

    /// What reading the lhs and the rhs of the Spec `text` out of L1 costs at least.
    fn reads(text: &str, target: &'static Target) -> [u64; 2] {
        let spec = Spec::parse_for(text, target).unwrap();
        [0, 1].map(|operand| least_l1_reads(spec.logical(), operand, target))
    }

    #[test]
    fn a_register_tile_along_n_pays_for_loading_its_rhs_and_broadcasts_its_lhs_for_free() {
        // 256 lines of the rhs: L1's weight 2 and two 32-byte vectors each on AVX2, in L1 or in
        // global memory alike.
        let tile = "MatmulAccum(1x6x256x16, (f32, L1), (f32, L1), (f32, VRF, row_major, v8))";
        assert_eq!(reads(tile, &X86_AVX2), [0, 256 * 4]);
        let tile = "MatmulAccum(1x6x256x16, (f32, GL), (f32, GL), (f32, VRF, row_major, v8))";
        assert_eq!(reads(tile, &X86_AVX2), [0, 256 * 4]);
        // AVX-512: L1's weight 1 and one 64-byte vector per line.
        let tile = "MatmulAccum(1x6x256x16, (f32, L1), (f32, L1), (f32, VRF, row_major, v16))";
        assert_eq!(reads(tile, &X86_AVX512), [0, 256 * 2]);
    }

    #[test]
    fn a_register_tile_along_m_broadcasts_its_rhs_and_pays_for_loading_its_lhs() {
        // The lhs's 2 lines: 2 each and 4 vectors; the rhs's values are the broadcasts' scalars.
        let tile = "MatmulAccum(1x8x4x2, (f32, L1), (f32, L1), (f32, VRF, col_major, v8))";
        assert_eq!(reads(tile, &X86_AVX2), [2 * 2 + 4, 0]);
    }

    #[test]
    fn an_output_in_memory_lets_a_row_major_lhs_into_dot_products_but_not_its_rhs() {
        // The lhs's 32 lines are contiguous along k: 2 each in dot products. The rhs's 32 lines
        // are not: loaded (2 per line and 2 vectors) or broadcast (a quarter per value), 4 each.
        let spec = "Matmul(1x8x64x8, (f32, L1), (f32, L1), (f32, L1))";
        assert_eq!(reads(spec, &X86_AVX2), [32 * 2, 32 * 4]);
    }

    #[test]
    fn inputs_in_registers_have_left_l1() {
        let spec = "MatmulAccum(1x1x1x8, (f32, RF), (f32, VRF, row_major, v8), (f32, VRF, row_major, v8))";
        assert_eq!(reads(spec, &X86_AVX2), [0, 0]);
    }
}
