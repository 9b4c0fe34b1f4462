//! Cost lower bounds, for branch-and-bound and for tightening memo horizons.
//!
//! Bounds are sound: no implementation, at any memory limits, costs less. They come from the
//! kernel table's cheapest rates: every kernel but a permute between vector registers costs at
//! least 1, no arithmetic kernel does more than one vector register's worth of elements per
//! unit of cost, and no move kernel more than that or than `Memcpy`, which pays for the cache
//! lines of both its operands (see [`memcpy_rate`]). A Matmul also pays for moving operands
//! out of levels no kernel reads and for reading its inputs out of L1 (see
//! [`compulsory_moves`]) and, unless it accumulates, for zeroing its output (see
//! [`fill_bound`]); a Move pays for reaching its operands in memory (see [`move_traffic`]).

use super::l1_reads::least_l1_reads;
use super::lanes::{lanes_of_widest_vector, widest_lanes};
use crate::cost::{NodeCharges, may_stream, residency, streamed_line_weight};
use crate::dtype::Dtype;
use crate::imp::ImplNode;
use crate::kernels::KernelKind;
use crate::level::Level;
use crate::primitive::{Direction, Primitive};
use crate::spec::{LogicalSpec, Spec};
use crate::target::Target;
use crate::tensor::TensorSpec;

/// A lower bound on the main cost of any implementation of `spec`.
pub fn spec_lower_bound(spec: &LogicalSpec, target: &Target) -> u64 {
    // Every kernel costs at least 1; Matmul, Conv and Move kernels handle at most a vector of
    // values (or multiply-adds) per unit of cost.
    let serial = match spec.primitive() {
        Some(prim @ Primitive::Matmul { accum }) => {
            let init = match spec.operands().last() {
                Some(out) if !accum => fill_bound(out.volume(), out.dtype(), target),
                _ => 0,
            };
            matmul_kernels_bound(spec, product_lanes(spec, target)) + init + compulsory_moves(spec, prim, target)
        }
        Some(Primitive::Fill(_)) => {
            let out = spec.operands().last().expect("a Fill has an output");
            fill_bound(out.volume(), out.dtype(), target)
        }
        Some(Primitive::Conv { accum }) => {
            let init = match spec.operands().last() {
                Some(out) if !accum => fill_bound(out.volume(), out.dtype(), target),
                _ => 0,
            };
            conv_kernels_bound(spec, product_lanes(spec, target)) + init
        }
        // `VectorPermute` between vector registers pays only for its shuffles, and a destination
        // register that equals a source register needs none: such a move may cost nothing.
        Some(Primitive::Move) if spec.operands().iter().all(|t| t.level() == Level::VRF) => 0,
        Some(Primitive::Move) => spec
            .volume()
            .div_ceil(widest_lanes(spec, target).max(memcpy_rate(spec, target)))
            .max(move_traffic(spec, target)),
        _ => 1,
    };
    if spec.serial() {
        return serial;
    }
    // With threads, either no loop is parallel (the serial bound holds) or one is: then the
    // work is split among at most `processors` threads, and that loop's setup is paid.
    let p = &target.parallel;
    serial.min(serial.div_ceil(u64::from(p.processors)).max(p.setup))
}

/// What setting `volume` elements of `dtype` to a constant costs at least, however they are
/// split among fill kernels: the scalar fills set one element per unit of cost, the vector fills
/// a register, and `MemsetZero` pays the lines of its tensor times its level's weight (at least
/// the cheapest addressed level's). Every fill kernel costs at least 1.
///
/// A Matmul that does not accumulate pays this for its output on top of its products: no Matmul
/// kernel initializes its output, so every output element is zeroed by a fill kernel (after
/// `to_accum`, in whatever tiles and levels) before the accumulating kernels add to it.
fn fill_bound(volume: u64, dtype: Dtype, target: &Target) -> u64 {
    let bytes = dtype.size_bytes();
    let lanes = lanes_of_widest_vector(bytes, target);
    let memset_rate = match cheapest_memory_weight(target) {
        0 => u64::MAX,
        // Rounded up: a rate too high only weakens the bound.
        w => u64::from(target.line_bytes).div_ceil(w * u64::from(bytes)),
    };
    volume.div_ceil(lanes.max(memset_rate)).max(1)
}

/// What reaching the operands of a Matmul costs at least: moving them out of levels no kernel
/// reads, and reading its inputs out of L1.
///
/// No rewrite of a Matmul changes an operand's level except a move, and kernels read an operand
/// only from the levels they accept (directly or after `to_accum`). So every byte of an operand
/// held where no kernel reads it leaves that level through moves, and each move pays at least
/// the source's cache lines times the level's least weight (`m(t)`, paper §3; a cache fill's
/// weight in global memory, where that is less: [`Target::least_line_cost`]). Tiles split the
/// operand, but the lines of the pieces add up to at least the lines of the whole. Global
/// memory weighs the weight (or a cache fill's) of the cache the Spec is held in, or memory's;
/// a move inside a child held further in pays at least that cache's fill weight and the
/// child's run the rest of the Spec's ([`crate::cost::cache_fill`]), so each line still pays
/// the Spec's least weight.
///
/// A Matmul's rhs is the exception: a sub-Spec held in the innermost cache may fill its lines
/// into L1 for free ([`crate::cost::streamed_fill`]), so they pay at least
/// [`streamed_line_weight`] instead, unless no tile of it can stream ([`may_stream`]: its
/// contiguous runs hold one row of `k` each, a whole number of pages apart, as the tiles of a
/// wider row-major matrix 1024 or more `f32` wide do; the loops that cut such rows into
/// pieces pay for them, [`crate::cost::row_pieces`]).
///
/// The output is paid for at any addressed level: the Matmul kernels that accept it in memory
/// (`MultAdd`, the dot products, the `vdpbf16ps` register tile, the bf16 even-odd row loop)
/// all charge `m(t)` of their
/// operands, so it is either moved or paid for by the kernels, tile by tile.
///
/// The inputs in L1 or global memory then pay for leaving L1 ([`least_l1_reads`]), which
/// neither the moves above nor the bound on the kernels count.
fn compulsory_moves(spec: &LogicalSpec, prim: Primitive, target: &Target) -> u64 {
    let line = u64::from(target.line_bytes);
    let held = residency(spec, target);
    let reaching = |(i, t): (usize, &TensorSpec)| {
        // The cheap test first: `any_accepts` scans the kernel table.
        let moved = spec.direction(i) != Direction::In && target.level(t.level()).line_cost > 0
            || !KernelKind::any_accepts(prim, i, t.level());
        if !moved {
            return 0;
        }
        let weight = target.least_line_cost(t.level(), held);
        let weight = if t.level() == Level::GL && may_stream(prim, i, t) {
            streamed_line_weight(weight, target)
        } else {
            weight
        };
        t.data_bytes().div_ceil(line) * weight
    };
    let reading = |(i, _): (usize, &TensorSpec)| {
        if spec.direction(i) == Direction::In { least_l1_reads(spec, i, target) } else { 0 }
    };
    spec.operands().iter().enumerate().map(|operand| reaching(operand) + reading(operand)).sum()
}

/// The most products per 2 units of cost that the bounds on a Matmul's or a Conv's kernels
/// count with: the lanes of the widest vector register for the narrowest operand dtype, and
/// with bf16 operands no more than the target's kernels do
/// ([`crate::kernels::bf16_products_per_two_units`]: without native bf16 products, a register
/// of f32).
fn product_lanes(spec: &LogicalSpec, target: &Target) -> u64 {
    let lanes = widest_lanes(spec, target);
    if spec.operands().iter().any(|t| t.dtype() == Dtype::Bf16) {
        lanes.min(crate::kernels::bf16_products_per_two_units(target))
    } else {
        lanes
    }
}

/// What the kernels of a Matmul cost at least, given `lanes` ([`product_lanes`]).
///
/// Every vector Matmul kernel pays at least 2 per register of products (of `lanes` products):
/// `BroadcastVecMultAdd` costs `2v + 1` for `v` output registers, the bf16 variant `3v + 1`,
/// the dot products `2` (or `3`) per register of `k` plus a constant, `vdpbf16ps` `2` per 32
/// bf16 pairs, the `vdpbf16ps` register tile `2` per pair of `k` per output register of 16 f32
/// lanes (32 bf16 products), and the bf16 even-odd row loop 5 per 32 products. `MultAdd` costs
/// at least 1 per product.
///
/// Without bf16 operands the kernels are `MultAdd`, `BroadcastVecMultAdd` and the f32 dot
/// product, and each call also pays a constant: a call of volume `c` (at most the largest
/// dimension `D` of the Spec, since these kernels are one-dimensional) costs at least
/// `2c/L + (1 - 2/L)·c/D`, which summed over calls is the bound below. `MultAdd`, the
/// tightest case, costs 1 for `c = 1`.
///
/// An output already in vector registers stays there (nothing moves out of a register file)
/// in registers of its vector size `l`, and only the broadcast kernels write such an output:
/// each call costs at least `2c/l + 1`, at least `2c/l + c/D`.
///
/// `tests/kernels_on_every_target.rs` checks every kernel's cost against [`spec_lower_bound`]
/// on every Spec the search visits.
fn matmul_kernels_bound(spec: &LogicalSpec, lanes: u64) -> u64 {
    let &[b, m, k, n] = spec.shape() else { unreachable!("Matmul is rank 4") };
    multiply_add_bound(spec, u64::from(b) * u64::from(m.max(k).max(n)), lanes)
}

/// What the kernels of a Conv cost at least. No kernel implements a Conv: its multiply-adds
/// are done by the Matmul kernels after `spatial_split`, each on a `1×b×c×f` view of a tile
/// (the image's pixel `[b, c]`, the filters' `[c, f]`, the output's `[b, f]`), so the bound
/// on Matmul kernels applies to its volume with the largest dimension `D = max(b, c, f)`
/// (the views' dimensions are no longer, and the bound only grows as `D` shrinks).
fn conv_kernels_bound(spec: &LogicalSpec, lanes: u64) -> u64 {
    let &[b, f, c, ..] = spec.shape() else { unreachable!("Conv is rank 7") };
    multiply_add_bound(spec, u64::from(b.max(c).max(f)), lanes)
}

/// The bound of [`matmul_kernels_bound`] on the multiply-adds of `spec`, all done by Matmul
/// kernels in calls no longer than `largest`.
fn multiply_add_bound(spec: &LogicalSpec, largest: u64, lanes: u64) -> u64 {
    let volume = u128::from(spec.volume());
    let largest = u128::from(largest);
    let out = spec.operands().last().expect("a Matmul or Conv has an output");
    if out.level() == Level::VRF
        && let Some(out_lanes) = out.vector_size()
    {
        let l = u128::from(out_lanes);
        let bound = (2 * volume * largest + l * volume).div_ceil(l * largest);
        return u64::try_from(bound).unwrap_or(u64::MAX);
    }
    let lanes = u128::from(lanes);
    if lanes < 2 {
        return spec.volume();
    }
    let bf16 = spec.operands().iter().any(|t| t.dtype() == Dtype::Bf16);
    let bound = if bf16 {
        (2 * volume).div_ceil(lanes)
    } else {
        (2 * volume * largest + (lanes - 2) * volume).div_ceil(lanes * largest)
    };
    u64::try_from(bound).unwrap_or(u64::MAX)
}

/// What reaching the memory operands of a Move costs at least.
///
/// Every element of an operand in memory is touched by a kernel or an allocation. Those that
/// pay `m(t)` (`Memcpy`, the scalar moves, the move of an allocation) pay its lines times the
/// level's weight; the vector moves, which reach memory only in L1, pay at least one unit per
/// register of the widest vectors. So an operand in global memory pays at least its lines
/// (the lines of tiles add up to at least the lines of the whole, as in [`compulsory_moves`]),
/// and one in L1 at least its bytes at the cheaper of the two rates, which is linear in the
/// volume and so adds up over tiles.
fn move_traffic(spec: &LogicalSpec, target: &Target) -> u64 {
    let line = u64::from(target.line_bytes);
    let vector = u64::from(target.widest_vector_bytes());
    let held = residency(spec, target);
    spec.operands()
        .iter()
        .map(|t| {
            let weight = target.least_line_cost(t.level(), held);
            let bytes = t.data_bytes();
            match t.level() {
                Level::RF | Level::VRF => 0,
                Level::L1 if vector > 0 => bytes * (weight * vector).min(line) / (line * vector),
                Level::L1 => bytes * weight / line,
                Level::GL => t.cache_lines(target) * weight,
            }
        })
        .sum()
}

/// The most elements per unit of cost that `Memcpy` copies: it costs at least the lines of its
/// source and its destination at the cheapest addressed level's weight.
fn memcpy_rate(spec: &LogicalSpec, target: &Target) -> u64 {
    let bytes = u64::from(spec.operands().iter().map(|t| t.dtype().size_bytes()).min().unwrap_or(1));
    let weight = cheapest_memory_weight(target);
    if weight == 0 {
        return u64::MAX;
    }
    (u64::from(target.line_bytes) / (2 * weight * bytes)).max(1)
}

/// The smallest weight per cache line among the addressed levels (in global memory, a cache
/// fill's of data held in the innermost cache).
fn cheapest_memory_weight(target: &Target) -> u64 {
    [Level::L1, Level::GL].iter().map(|&l| target.least_line_cost(l, target.innermost_residency())).min().unwrap_or(0)
}

/// A lower bound on the main cost of any implementation of `spec` that starts with `node`,
/// given lower bounds for its children.
/// (The search, which bounds a node many times, keeps its [`NodeCharges`] instead.)
pub fn node_lower_bound(spec: &Spec, node: &ImplNode, child_bounds: &[u64], target: &Target) -> u64 {
    debug_assert!(!matches!(node, ImplNode::Spec));
    NodeCharges::new(spec, node, target).main(child_bounds)
}

/// A lower bound on the main cost of any implementation whose peak at `level` (an addressed
/// level) is at least `peak` bytes.
///
/// Such an implementation allocates along one path `k` nested buffers at `level` (moves or
/// pipeline temporaries) whose consumptions `c_i` (whole lines) satisfy `peak <= Σ 2^i·c_i`,
/// since each allocation at most doubles the peak when rounding it up to a permitted limit; so
/// `Σ c_i >= max(k·line, peak / 2^k)`. Each allocation costs at least its lines times the
/// level's weight (a move also pays for its source; a temporary only for itself); in global
/// memory, the fill weight of a line held in the innermost cache, the least.
///
/// This relies on a fact of the cost model, checked in debug builds by
/// [`crate::cost::node_cost`]: kernels allocate nothing at addressed levels. In L1 a streamed
/// fill ([`crate::cost::streamed_fill`]) allocates for free, so there the bound is 0.
pub fn min_cost_for_peak(level: Level, peak: u64, target: &Target) -> u64 {
    if level.is_hardware_managed() {
        return 0;
    }
    let line = u64::from(target.line_bytes);
    let weight = target.least_line_cost(level, target.innermost_residency());
    let min_bytes = (1..64u32).map(|k| (u64::from(k) * line).max(peak >> k)).min().unwrap_or(peak);
    weight * min_bytes / line
}
