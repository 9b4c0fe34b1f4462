//! The search space: which rewrites synthesis tries for a Spec (paper §4).
//!
//! A Spec held in L1 (it has operands in global memory and its data fits in the target's L1)
//! has only the cache fill of its first global-memory operand (see [`crate::residency`]). Every
//! other Spec has:
//!
//! * Every kernel of the Spec's primitive, and `to_accum` where an accumulating variant exists;
//!   for a Matmul in global memory that does not accumulate, also the peel of half its
//!   contraction dimension where that is long (see `peel_size`).
//! * Power-of-two tile sizes along one dimension at a time (multi-dimensional tilings arise from
//!   nesting); for Specs that may use threads and whose operands are all in memory, the same
//!   tiles as parallel loops along each dimension that is not a reduction. One addition to the
//!   paper's space: a Matmul's rows are also tiled to 6 and 14, the row counts of the register
//!   blocks the libraries use, where the tile's output fits in the vector registers.
//! * Moves of each operand to every reachable level: in every dimension order, with at most one
//!   packed strip of a vector width (or of 2, for bf16 pairs; copies into global memory also of
//!   a register tile's width, four of the widest vectors); vector registers in every
//!   dimension order and vector width; inputs also widened to every lossless upcast dtype.
//! * The primitive-specific rewrites: spatial split of ConvAccum, spread loops over the
//!   contraction dimension of a MatmulAccum whose dense rhs has rows that stream,
//!   broadcast-first for DivideVecScalar, both softmax decompositions, max-and-denominator,
//!   max-and-unscaled, the parallel split of long online softmax rows, and bufferize at every
//!   stage of a Compose. Their temporaries go to every level where they fit, row-major, in
//!   every vector width.

use crate::dtype::Dtype;
use crate::fxhash::FxHashMap;
use crate::kernels::KernelKind;
use crate::layout::{Layout, PhysDim};
use crate::level::Level;
use crate::primitive::{Direction, Primitive, is_upcast};
use crate::rewrite::{Action, MoveDest, TempDest};
use crate::shape::{Shape, volume};
use crate::spec::{LayoutDecl, Spec, SpecKind};
use crate::target::Target;
use crate::tensor::TensorSpec;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::rc::Rc;

/// Softmax rows at least this long are considered for the parallel split.
const PARALLEL_SPLIT_MIN_LENGTH: u32 = 4096;
/// The smallest chunk the parallel split considers.
const PARALLEL_SPLIT_MIN_CHUNK: u32 = 64;

/// Every rewrite synthesis considers for `spec`, in a fixed order. Some may not apply; the
/// search skips those.
pub fn actions(spec: &Spec, target: &Target) -> Vec<Action> {
    let mut out = Vec::with_capacity(64);
    let prim = match spec.logical().kind() {
        SpecKind::Compose(components) => {
            for index in 0..components.len() - 1 {
                let producer = &components[index + 1];
                let output = producer.primitive.operand_count() - 1;
                let shape = producer.primitive.operand_shape(output, &producer.shape);
                for dest in temp_destinations(&shape, producer.output_dtype, target) {
                    out.push(Action::Bufferize { index, dest });
                }
            }
            return out;
        }
        SpecKind::Primitive(p) => *p,
    };
    if let Some(i) = crate::residency::forced_fill_operand(spec, target) {
        return vec![Action::cache_fill(i, spec.operand(i))];
    }
    for &kernel in KernelKind::ALL {
        if kernel.implements(prim) {
            out.push(Action::Select { kernel });
        }
    }
    if prim.accumulating_variant().is_some() {
        out.push(Action::ToAccum);
    }
    if let Some(size) = peel_size(spec, prim, target) {
        out.push(Action::Peel { size });
    }
    decompositions(spec, prim, target, &mut out);
    tiles(spec, prim, target, &mut out);
    for (i, operand) in spec.operands().iter().enumerate() {
        let mut dtypes = vec![operand.dtype()];
        if spec.logical().direction(i) == Direction::In {
            dtypes.extend(Dtype::ALL.into_iter().filter(|&d| d != operand.dtype() && is_upcast(operand.dtype(), d)));
        }
        for &level in operand.level().move_destinations() {
            if level.is_register_file() && !KernelKind::any_accepts(prim, i, level) {
                continue;
            }
            for &dtype in &dtypes {
                push_moves(&mut out, i, operand, level, dtype, target);
            }
        }
    }
    out
}

/// The size of the peel the search tries for a non-accumulating Matmul with every operand in
/// global memory: half its contraction dimension. Its two stages then have the shapes of a
/// split in halves, which the search meets anyway, and peeling the first stage again reaches
/// every power-of-two first tile down to the shortest reduction peeled (`K/2^j`, followed by
/// accumulating stages of `K/2^j`, `K/2^(j-1)`, …, `K/2`).
///
/// Each first stage is a non-accumulating Matmul with a shorter reduction, and the Specs below
/// it (tiles, moves) are new to the search, so peels are tried only where they pay: on Specs
/// still wholly in global memory (a cache fill into L1 emits no code, so peeling before it
/// gives the same kernel as peeling after; tiles in registers are zeroed where they are), and
/// where `k` is long enough that the search splits it outside registers at all: where a panel
/// of `b`, `k` rows of the target's `panel_registers` vector registers
/// ([`crate::target::SearchPolicy`]), no longer fits L1 (more than
/// 192 rows on AVX-512, 256 on AVX2). With every non-accumulating Matmul peeled in halves, the
/// full AVX-512 search of 256³ visited 9.9 M Specs instead of 2.9 M (96 s instead of 25 s);
/// with these limits, 2.6 M (26 s), for the same optimum. Other primitives are left to
/// `to_accum` alone.
fn peel_size(spec: &Spec, prim: Primitive, target: &Target) -> Option<u32> {
    let Primitive::Matmul { accum: false } = prim else { return None };
    if spec.operands().iter().any(|t| t.level() != Level::GL) {
        return None;
    }
    let k = spec.shape()[2];
    let panel_row = u64::from(target.search.panel_registers * target.widest_vector_bytes().max(1));
    let fits_l1 = u64::from(k) * panel_row <= target.level(Level::L1).capacity_bytes;
    (!fits_l1 && k >= 2 && k.is_multiple_of(2)).then_some(k / 2)
}

/// The primitive-specific rewrites.
fn decompositions(spec: &Spec, prim: Primitive, target: &Target, out: &mut Vec<Action>) {
    let reduced = |scan: u8| -> Shape {
        let mut s: Shape = spec.shape().into();
        s[usize::from(scan)] = 1;
        s
    };
    match prim {
        Primitive::Conv { accum: true } => out.push(Action::SpatialSplit),
        Primitive::Matmul { accum: true } => spreads(spec, target, out),
        Primitive::DivideVecScalar { .. } => {
            for dest in temp_destinations(spec.shape(), spec.operand(1).dtype(), target) {
                out.push(Action::BroadcastFirst { dest });
            }
        }
        Primitive::Softmax { scan } => {
            let dests = temp_destinations(&reduced(scan), Dtype::F32, target);
            for denom in &dests {
                out.push(Action::ToSoftmaxParts { denom: denom.clone() });
            }
            for max in &dests {
                for denom in &dests {
                    out.push(Action::ToSoftmaxPartsRecompute { max: max.clone(), denom: denom.clone() });
                }
            }
        }
        Primitive::SoftmaxDenominatorAndMax { scan, accum: false } => {
            out.push(Action::ToMaxAndDenominator);
            let n = spec.shape()[usize::from(scan)];
            if !spec.logical().serial() && n >= PARALLEL_SPLIT_MIN_LENGTH {
                let mut chunk = PARALLEL_SPLIT_MIN_CHUNK;
                while chunk < n {
                    for level in [Level::L1, Level::GL] {
                        out.push(Action::ParallelSplit { chunk, partials: TempDest::at(level) });
                    }
                    chunk *= 2;
                }
            }
        }
        Primitive::SoftmaxDenominatorAndUnscaled { scan } => {
            for max in temp_destinations(&reduced(scan), spec.operand(0).dtype(), target) {
                out.push(Action::ToMaxAndUnscaled { max });
            }
        }
        _ => {}
    }
}

/// Spread loops over the contraction dimension of a MatmulAccum whose rhs is a dense matrix in
/// global memory with rows that stream well (the only Specs where the cost model tells a spread
/// loop from a plain one: `cost::restarted_lines`): power-of-two numbers of bands up to
/// the target's `max_spread_bands` ([`crate::target::SearchPolicy`]).
fn spreads(spec: &Spec, target: &Target, out: &mut Vec<Action>) {
    let rhs = spec.operand(1);
    let &[.., k, n] = spec.shape() else { unreachable!("Matmul is rank 4") };
    let row_bytes = u64::from(n) * u64::from(rhs.dtype().size_bytes());
    if rhs.level() != Level::GL || !rhs.is_contiguous() || row_bytes < u64::from(target.streams.stream_bytes) {
        return;
    }
    let most = target.search.max_spread_bands;
    let mut bands = 2;
    while bands < k && bands <= most {
        if k.is_multiple_of(bands) {
            out.push(Action::Spread { bands });
        }
        bands *= 2;
    }
}

/// Serial tiles along each tileable dimension, and parallel ones where allowed.
fn tiles(spec: &Spec, prim: Primitive, target: &Target, out: &mut Vec<Action>) {
    let shape = spec.shape();
    let reductions = prim.reduction_dims(shape.len());
    let untileable = prim.untileable_dims();
    let may_parallelize = !spec.logical().serial() && spec.operands().iter().all(|t| !t.level().is_register_file());
    for parallel in [false, true] {
        if parallel && !may_parallelize {
            continue;
        }
        for (d, &size) in shape.iter().enumerate() {
            let reduction = reductions.contains(&(d as u32));
            if untileable.contains(&(d as u32)) || reduction && (parallel || !prim.is_accumulating()) {
                continue;
            }
            let mut t = 1;
            while t < size {
                let mut tile: Shape = shape.into();
                tile[d] = t;
                out.push(Action::Tile { tile, parallel });
                t *= 2;
            }
            if !parallel {
                for rows in register_block_rows(spec, prim, d, target) {
                    let mut tile: Shape = shape.into();
                    tile[d] = rows;
                    out.push(Action::Tile { tile, parallel });
                }
            }
        }
    }
}

/// Row counts of Matmul register blocks that are not powers of two. With AVX-512's 32 vector
/// registers, 14 rows of two vectors or 6 rows of four leave room for a row of the rhs, and run
/// closer to the FMA peak on their own than the largest power-of-two blocks (8×32, 4×64)
/// (`bench/experiments/register_tiles.c`); with AVX2's 16, 6 rows of two vectors.
pub(super) const REGISTER_BLOCK_ROWS: [u32; 2] = [6, 14];

/// The register-block row counts worth tiling dimension `d` of `spec` to: only a Matmul's rows,
/// only while its output is in memory, and only where the tile's output then fits in the vector
/// registers (the columns have been tiled already), so that the tile can become a register block.
fn register_block_rows(spec: &Spec, prim: Primitive, d: usize, target: &Target) -> impl Iterator<Item = u32> {
    const ROWS: usize = 1;
    const COLUMNS: usize = 3;
    let shape = spec.shape();
    let output_row_bytes = match spec.operands().last() {
        Some(out) if matches!(prim, Primitive::Matmul { .. }) && d == ROWS && !out.level().is_register_file() => {
            Some(u64::from(shape[COLUMNS]) * u64::from(out.dtype().size_bytes()))
        }
        _ => None,
    };
    let registers = target.level(Level::VRF).capacity_bytes;
    REGISTER_BLOCK_ROWS.into_iter().filter(move |&rows| {
        output_row_bytes.is_some_and(|bytes| rows < shape[d] && u64::from(rows) * bytes <= registers)
    })
}

/// Where a temporary of `shape` and `dtype` may go: scalar registers if it fits, vector
/// registers in each width that divides it, L1 if it fits, and global memory; row-major.
pub fn temp_destinations(shape: &[u32], dtype: Dtype, target: &Target) -> Vec<TempDest> {
    let mut out = Vec::new();
    let n = volume(shape);
    let rf = target.level(Level::RF);
    if n * u64::from(rf.register_bytes) <= rf.capacity_bytes {
        out.push(TempDest::at(Level::RF));
    }
    let vrf = target.level(Level::VRF);
    for lanes in target.vector_lanes(dtype.size_bytes()) {
        if n.is_multiple_of(u64::from(lanes))
            && n / u64::from(lanes) * u64::from(vrf.register_bytes) <= vrf.capacity_bytes
        {
            out.push(TempDest { level: Level::VRF, layout: LayoutDecl::RowMajor, vector_size: Some(lanes) });
        }
    }
    if n * u64::from(dtype.size_bytes()) <= target.level(Level::L1).capacity_bytes {
        out.push(TempDest::at(Level::L1));
    }
    out.push(TempDest::at(Level::GL));
    out
}

fn push_moves(out: &mut Vec<Action>, operand: usize, src: &TensorSpec, level: Level, dtype: Dtype, target: &Target) {
    let shape = src.shape();
    let moved = |layout: Layout, vector_size: Option<u32>| Action::Move {
        operand,
        dest: MoveDest { level, layout, vector_size, dtype },
    };
    match level {
        Level::RF => out.push(moved(Layout::empty(), None)),
        Level::VRF => {
            // Every dimension order: row-major rows for broadcast kernels, transposes for
            // permuting kernels.
            let orders = cached_layouts(shape, SmallVec::new());
            for lanes in target.vector_lanes(dtype.size_bytes()) {
                if src.volume().is_multiple_of(u64::from(lanes)) {
                    for layout in orders.iter() {
                        out.push(moved(layout.clone(), Some(lanes)));
                    }
                }
            }
        }
        Level::L1 | Level::GL => {
            let same_dtype = dtype == src.dtype();
            if level.is_hardware_managed() && same_dtype {
                debug_assert_eq!(level, Level::L1, "the cache fill goes to L1");
                out.push(Action::cache_fill(operand, src));
            }
            // A contiguous copy in the same layout (packing) of a tile whose rows lie whole pages
            // apart: the only tiles for which the cost model sees such a copy help (the copy's
            // rows take their lines of a cache, not a page each).
            if level == Level::GL && same_dtype && src.paged() {
                out.push(moved(src.layout().clone(), None));
            }
            for layout in relayouts(shape, dtype, level, target).iter() {
                if layout.dims() != src.layout().dims() || !same_dtype {
                    out.push(moved(layout.clone(), None));
                }
            }
        }
    }
}

/// Every nesting order of the dimensions larger than 1, as fully contiguous layouts.
pub(super) fn dimension_orders(shape: &[u32]) -> Vec<Layout> {
    let dims: Vec<u8> = (0..shape.len() as u8).filter(|&d| shape[usize::from(d)] > 1).collect();
    let mut out = Vec::new();
    permutations(&dims, &mut Vec::new(), &mut |order| out.push(Layout::from_order(shape, order.iter().copied())));
    out
}

/// The layouts [`cached_layouts`] lists, by shape and strip sizes.
type LayoutCache = FxHashMap<(Shape, SmallVec<[u32; 5]>), Rc<[Layout]>>;

thread_local! {
    /// [`strip_layouts`] by shape and strip sizes: the search asks for the same few shapes
    /// millions of times.
    static LAYOUTS: RefCell<LayoutCache> = RefCell::default();
}

/// Dimension orders, each also with one packed strip appended for one dimension that is not
/// already innermost: strips of a vector width of `dtype`, and pairs for bf16. Copies into
/// global memory (`level` GL) also get strips of a register tile's width,
/// [`PANEL_REGISTERS`] of the widest vectors (64 f32 on AVX-512): packing `b` into panels
/// the register tile reads row by row keeps each panel's rows in consecutive lines, where rows
/// of a block of a wide row-major copy lie a row's stride apart and share few of L1's sets.
/// Only copies get them: offered for moves into L1 as well, they found the same kernels at
/// 256³ and the narrowed 1024³ but searched 29% and 8% more Specs.
fn relayouts(shape: &[u32], dtype: Dtype, level: Level, target: &Target) -> Rc<[Layout]> {
    let mut strips: SmallVec<[u32; 5]> = target.vector_lanes(dtype.size_bytes()).collect();
    if dtype == Dtype::Bf16 {
        strips.insert(0, 2);
    }
    if level == Level::GL
        && let Some(&widest) = strips.last()
    {
        strips.push(widest * target.search.panel_registers);
    }
    cached_layouts(shape, strips)
}

/// [`strip_layouts`], remembered per thread; with no strips, the dimension orders.
fn cached_layouts(shape: &[u32], strips: SmallVec<[u32; 5]>) -> Rc<[Layout]> {
    let key = (Shape::from(shape), strips);
    if let Some(known) = LAYOUTS.with(|cache| cache.borrow().get(&key).cloned()) {
        return known;
    }
    let layouts: Rc<[Layout]> = strip_layouts(shape, &key.1).into();
    LAYOUTS.with(|cache| cache.borrow_mut().insert(key, layouts.clone()));
    layouts
}

/// Every dimension order, each followed by its variants with one packed strip of the sizes
/// given (see [`relayouts`]).
fn strip_layouts(shape: &[u32], strips: &[u32]) -> Vec<Layout> {
    let mut out = Vec::new();
    for order in dimension_orders(shape) {
        let dims = order.dims().to_vec();
        for pd in dims.iter().take(dims.len().saturating_sub(1)) {
            let size = shape[usize::from(pd.logical)];
            for &strip in strips {
                if strip < size && size.is_multiple_of(strip) {
                    let mut packed = dims.clone();
                    packed.push(PhysDim::packed(pd.logical, strip));
                    if let Ok(l) = Layout::new(&packed, None, shape)
                        && !out.contains(&l)
                    {
                        out.push(l);
                    }
                }
            }
        }
        if !out.contains(&order) {
            out.push(order);
        }
    }
    out
}

fn permutations(items: &[u8], prefix: &mut Vec<u8>, f: &mut impl FnMut(&[u8])) {
    if prefix.len() == items.len() {
        f(prefix);
        return;
    }
    for &x in items {
        if !prefix.contains(&x) {
            prefix.push(x);
            permutations(items, prefix, f);
            prefix.pop();
        }
    }
}
