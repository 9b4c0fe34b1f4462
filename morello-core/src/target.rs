//! Target machines: memory levels, capacities, vector widths, cost weights and the ISA feature
//! table.
//!
//! The ISA feature table is the single source for both the C compiler flags a kernel is built
//! with and the runtime CPU check its safe wrapper performs, so the two cannot drift apart.
//!
//! Three targets exist: x86-64 with AVX2 and FMA, x86-64 with AVX-512 (F, BW, VL and BF16), and a
//! portable target that emits scalar C only (no vector registers, no ISA flags), for any
//! machine gcc or clang compiles for.

use crate::level::{LEVEL_COUNT, Level};
use std::fmt;

mod caches;

pub use caches::{Cache, Residency};

/// Identifies a target.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum TargetId {
    /// x86-64 with AVX2 and FMA.
    X86Avx2,
    /// x86-64 with AVX-512 F, BW, VL and BF16 (and AVX2, FMA).
    X86Avx512,
    /// Scalar C for any machine.
    Portable,
}

impl TargetId {
    /// Every target, in a fixed order.
    pub const ALL: [TargetId; 3] = [TargetId::X86Avx2, TargetId::X86Avx512, TargetId::Portable];

    /// The target's description.
    pub fn target(self) -> &'static Target {
        match self {
            TargetId::X86Avx2 => &X86_AVX2,
            TargetId::X86Avx512 => &X86_AVX512,
            TargetId::Portable => &PORTABLE,
        }
    }

    /// The target's name, as used in symbols and messages (`x86-avx2`).
    pub fn name(self) -> &'static str {
        self.target().name
    }

    /// Looks a target up by its name or its short name (`x86-avx512` or `avx512`).
    pub fn from_name(name: &str) -> Option<TargetId> {
        TargetId::ALL.into_iter().find(|t| t.name() == name || t.target().short_name == name)
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One instruction-set extension a target's kernels use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IsaFeature {
    /// The name `std::arch::is_x86_feature_detected!` knows it by.
    pub detect_name: &'static str,
    /// The gcc/clang flag that enables it.
    pub compiler_flag: &'static str,
}

/// Static facts about one memory level on a target.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LevelInfo {
    /// Largest memory limit allowed for the level, in bytes.
    pub capacity_bytes: u64,
    /// For register files, the size of one register in bytes (memory there is counted in whole
    /// registers). Zero for addressed levels.
    pub register_bytes: u32,
    /// Cost of touching one cache line at this level (the weight of paper §3's `m(t)`).
    pub line_cost: u64,
}

impl LevelInfo {
    /// The largest limit this level permits at most `bytes`: whole registers in a register
    /// file; at an addressed level, a power of two or the capacity
    /// ([`snap_down_within`]).
    pub fn limit_at_most(&self, bytes: u64) -> u64 {
        match u64::from(self.register_bytes) {
            0 => snap_down_within(bytes, self.capacity_bytes),
            register => bytes - bytes % register,
        }
    }

    /// The smallest peak this level records for `bytes` in use: `bytes` (whole registers) in a
    /// register file; at an addressed level, a power of two or the capacity
    /// ([`snap_up_within`]).
    pub fn peak_at_least(&self, bytes: u64) -> u64 {
        if self.register_bytes > 0 { bytes } else { snap_up_within(bytes, self.capacity_bytes) }
    }
}

/// Largest power of two `<= x`, or 0.
fn snap_down(x: u64) -> u64 {
    if x == 0 { 0 } else { 1 << (63 - x.leading_zeros()) }
}

/// Smallest power of two `>= x`, or 0.
fn snap_up(x: u64) -> u64 {
    if x == 0 { 0 } else { x.next_power_of_two() }
}

/// Largest permitted limit `<= x` at an addressed level of `capacity` bytes: a power of two,
/// 0, or the capacity itself once `x` reaches it.
pub fn snap_down_within(x: u64, capacity: u64) -> u64 {
    if x >= capacity { snap_down(x).max(capacity) } else { snap_down(x) }
}

/// Smallest permitted limit `>= x` at an addressed level of `capacity` bytes (see
/// [`snap_down_within`]).
pub fn snap_up_within(x: u64, capacity: u64) -> u64 {
    if x <= capacity { snap_up(x).min(capacity) } else { snap_up(x) }
}

/// What a parallel loop costs on top of its bodies (paper §3, parallel loops).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ParallelCost {
    /// Processors the cost model divides parallel iterations among.
    pub processors: u32,
    /// One-time cost of starting a parallel loop (waking workers, joining them).
    pub setup: u64,
    /// Cost per iteration handed out (scheduling overhead).
    pub per_iteration: u64,
}

/// What reading global memory in more interleaved short runs than the hardware prefetchers
/// follow costs, on top of the lines' weight.
///
/// A loop that steps along the contiguous dimension of an operand continues every run of that
/// operand's tile on each iteration, so each run is a stream a prefetcher may follow. The
/// stream prefetcher tracks a few dozen of them, stops at page boundaries and needs a few pages
/// of a stream to run ahead of it; the stride prefetcher stays inside a page. So when rows lie a
/// page or more apart, each row is read in short pieces and there are more rows than the stream
/// prefetcher tracks, most lines arrive unprefetched.
///
/// The figures come from C loops over a 1×2048×16384 f32 vector-matrix product (rows 64 KiB
/// apart) and from plain interleaved reads (`bench/experiments/interleaved_streams.c`):
/// reading all 2048 rows side by side in short pieces took about 1.5 times as long as reading
/// 16 or 32 at a time, so an unprefetched line costs about half a global-memory line more;
/// pieces of 16 KiB streamed as well as whole rows. Fewer streams read faster still, and on
/// some cores the limit is lower: `prefetch_streams` is 8, the figure of a Zen 4 core, where 16
/// or more interleaved streams read at less than half the rate of 8. So below
/// `prefetch_streams`, each piece of several interleaved streams pays for its first line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct StreamCost {
    /// The stride prefetcher does not cross boundaries of this many bytes (a page).
    pub page_bytes: u32,
    /// Pieces of a row at least this long stream as well as whole rows.
    pub stream_bytes: u32,
    /// The most runs the stream prefetcher follows at once.
    pub prefetch_streams: u32,
    /// Extra cost of a cache line that arrives unprefetched, in percent of a line of global
    /// memory's weight (in the Spec the loop implements: see [`Target::unprefetched_line_cost`]).
    pub extra_percent: u64,
}

/// The prefetchers of the development machines' cores (see [`StreamCost`]); every target uses
/// them.
const MEASURED_STREAMS: StreamCost =
    StreamCost { page_bytes: 4096, stream_bytes: 16384, prefetch_streams: 8, extra_percent: 50 };

/// A target machine.
#[derive(Debug)]
pub struct Target {
    /// Which target this is.
    pub id: TargetId,
    /// Name used in symbols and messages.
    pub name: &'static str,
    /// Name used in `#[target(...)]` attributes.
    pub short_name: &'static str,
    /// The Rust `target_arch` this target's C is compiled for, if it is tied to one.
    pub arch: Option<&'static str>,
    /// Per-level facts, indexed by [`Level::index`].
    pub levels: [LevelInfo; LEVEL_COUNT],
    /// Vector register widths in bytes, ascending (empty without vector registers).
    pub vector_bytes: &'static [u32],
    /// Cache line size in bytes.
    pub line_bytes: u32,
    /// The ISA extensions kernels for this target may use.
    pub isa: &'static [IsaFeature],
    /// What parallel loops cost.
    pub parallel: ParallelCost,
    /// What reading memory in too many interleaved short runs costs.
    pub streams: StreamCost,
    /// The second-level cache, if the cost model counts it.
    pub l2: Option<Cache>,
    /// The third-level cache, if the cost model counts it: what one core can count on keeping
    /// of it.
    pub l3: Option<Cache>,
    /// Choices the search offers on this target that the cost model does not tell apart.
    pub search: SearchPolicy,
}

/// What the search offers on a target beyond what the cost model can rank: choices measured on
/// the target's CPUs rather than derived from its costs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SearchPolicy {
    /// The most bands a spread loop reads side by side. The cost model does not tell band
    /// counts apart (each continues its streams), so the search is offered only counts that
    /// were measured not to lose (`bench/experiments/two_vecmat_bf16.c`): with 256-bit
    /// vectors, 8 or more bands read slower than blocks of consecutive rows and 4 faster; with
    /// 512-bit vectors, 8 bands read fastest.
    pub max_spread_bands: u32,
    /// How many of the widest vector registers wide a panel of `b` is taken to be: the register
    /// tiles the search finds are four (AVX-512) or two to four (AVX2) registers wide. Sets
    /// where the search starts peeling reductions, and the widest packed strip of copies.
    pub panel_registers: u32,
}

const fn feature(detect_name: &'static str, compiler_flag: &'static str) -> IsaFeature {
    IsaFeature { detect_name, compiler_flag }
}

/// 16 general-purpose registers, counted as 4-byte scalars.
const SCALAR_REGISTERS: LevelInfo = LevelInfo { capacity_bytes: 64, register_bytes: 4, line_cost: 0 };
/// Global memory: 1 GiB of buffers, 100 per line read from memory (lines held in L2 weigh
/// [`L2_LINE_COST`]).
const GLOBAL: LevelInfo = LevelInfo { capacity_bytes: 1 << 30, register_bytes: 0, line_cost: 100 };
/// A line of global memory held in L2: the weight every line of global memory had before the
/// model counted L2, against which the kernels' weights were calibrated (on Specs whose data a
/// benchmark's repeated runs keep in the caches).
const L2_LINE_COST: u64 = 20;
/// The L3 every target counts: 16 MiB of it, what one core of a Zen 5 CPU (32 MiB of L3 shared
/// by its cores) keeps at full speed (`bench/experiments/cache_bandwidth.c`; Zen 2 has 16 MiB
/// per 4 cores, Zen 3–5 32 MiB per 8). A line of it weighs 35 (memory's 100 times the ratio of
/// the times a line takes from L3 and from memory there, 0.55/1.56 ns) and a cache fill 9
/// (AVX-512's L2 fill of 4 times the ratio of L3's and L2's times, 0.55/0.24).
const SHARED_L3: Cache = Cache { capacity_bytes: 16 << 20, line_cost: 35, fill_line_cost: 9 };

/// x86-64 with AVX2 and FMA: 16 scalar and 16 vector registers, 32 KiB of L1 modelled.
pub static X86_AVX2: Target = Target {
    id: TargetId::X86Avx2,
    name: "x86-avx2",
    short_name: "avx2",
    arch: Some("x86_64"),
    levels: [
        SCALAR_REGISTERS,
        // 16 ymm registers.
        LevelInfo { capacity_bytes: 16 * 32, register_bytes: 32, line_cost: 0 },
        LevelInfo { capacity_bytes: 32 * 1024, register_bytes: 0, line_cost: 2 },
        GLOBAL,
    ],
    vector_bytes: &[16, 32],
    line_bytes: 64,
    isa: &[feature("avx2", "-mavx2"), feature("fma", "-mfma")],
    parallel: ParallelCost { processors: 8, setup: 230_000, per_iteration: 60 },
    streams: MEASURED_STREAMS,
    search: SearchPolicy { max_spread_bands: 4, panel_registers: 4 },
    // Zen 2 and Zen 3 have 512 KiB per core.
    l2: Some(Cache { capacity_bytes: 512 * 1024, line_cost: L2_LINE_COST, fill_line_cost: 8 }),
    // A fill from L3 takes L2's time 2.3 times here too.
    l3: Some(Cache { fill_line_cost: 18, ..SHARED_L3 }),
};

/// x86-64 with AVX-512 F, BW, VL and BF16: 32 vector registers of 64 bytes, and an L1 hit that
/// costs half of AVX2's (twice the load bandwidth per line).
pub static X86_AVX512: Target = Target {
    id: TargetId::X86Avx512,
    name: "x86-avx512",
    short_name: "avx512",
    arch: Some("x86_64"),
    levels: [
        SCALAR_REGISTERS,
        // 32 zmm registers.
        LevelInfo { capacity_bytes: 32 * 64, register_bytes: 64, line_cost: 0 },
        // 48 KiB of L1 data cache, 12 ways of 4 KiB: Zen 5, Ice Lake and later Intel cores
        // (Zen 4 and Skylake-SP have 32 KiB). Costing a 128×64 f32 block of `b` beside a
        // register tile's rows of `a` as L1-resident is what makes the search choose 128-deep
        // register tiles at 2048³ (`CHANGELOG.md` says what it changed).
        LevelInfo { capacity_bytes: 48 * 1024, register_bytes: 0, line_cost: 1 },
        GLOBAL,
    ],
    vector_bytes: &[16, 32, 64],
    line_bytes: 64,
    isa: &[
        feature("avx2", "-mavx2"),
        feature("fma", "-mfma"),
        feature("avx512f", "-mavx512f"),
        feature("avx512bw", "-mavx512bw"),
        feature("avx512vl", "-mavx512vl"),
        feature("avx512bf16", "-mavx512bf16"),
    ],
    parallel: ParallelCost { processors: 16, setup: 850_000, per_iteration: 60 },
    streams: MEASURED_STREAMS,
    search: SearchPolicy { max_spread_bands: 8, panel_registers: 4 },
    // Zen 4, Zen 5 and Skylake-SP have 1 MiB per core.
    l2: Some(Cache { capacity_bytes: 1024 * 1024, line_cost: L2_LINE_COST, fill_line_cost: 4 }),
    l3: Some(SHARED_L3),
};

/// Scalar C for any machine: no vector registers and no ISA extensions.
pub static PORTABLE: Target = Target {
    id: TargetId::Portable,
    name: "portable",
    short_name: "portable",
    arch: None,
    levels: [
        SCALAR_REGISTERS,
        // No vector registers: every VRF limit is clamped to 0.
        LevelInfo { capacity_bytes: 0, register_bytes: 16, line_cost: 0 },
        LevelInfo { capacity_bytes: 32 * 1024, register_bytes: 0, line_cost: 2 },
        GLOBAL,
    ],
    vector_bytes: &[],
    line_bytes: 64,
    isa: &[],
    parallel: ParallelCost { processors: 4, setup: 230_000, per_iteration: 60 },
    streams: MEASURED_STREAMS,
    search: SearchPolicy { max_spread_bands: 4, panel_registers: 4 },
    // The least of the x86 cores above.
    l2: Some(Cache { capacity_bytes: 512 * 1024, line_cost: L2_LINE_COST, fill_line_cost: 4 }),
    l3: Some(SHARED_L3),
};

impl Target {
    /// Facts about `level`.
    pub fn level(&self, level: Level) -> &LevelInfo {
        &self.levels[level.index()]
    }

    /// Vector lane counts available for `dtype_bytes`-sized elements, ascending.
    pub fn vector_lanes(&self, dtype_bytes: u32) -> impl Iterator<Item = u32> + '_ {
        self.vector_bytes.iter().map(move |&b| b / dtype_bytes)
    }

    /// The widest vector register in bytes (0 without vector registers).
    pub fn widest_vector_bytes(&self) -> u32 {
        self.vector_bytes.last().copied().unwrap_or(0)
    }

    /// Whether kernels may use the ISA extension `detect_name` (e.g. `avx512bf16`).
    pub fn has_feature(&self, detect_name: &str) -> bool {
        self.isa.iter().any(|f| f.detect_name == detect_name)
    }

    /// Compiler flags enabling this target's ISA.
    pub fn compiler_flags(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.isa.iter().map(|f| f.compiler_flag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_found_by_either_name() {
        for id in TargetId::ALL {
            assert_eq!(id.target().id, id);
            assert_eq!(TargetId::from_name(id.name()), Some(id));
            assert_eq!(TargetId::from_name(id.target().short_name), Some(id));
        }
        assert_eq!(TargetId::from_name("sse2"), None);
    }

    #[test]
    fn register_capacities_are_whole_registers() {
        for id in TargetId::ALL {
            let t = id.target();
            for level in [Level::RF, Level::VRF] {
                let info = t.level(level);
                assert_eq!(info.capacity_bytes % u64::from(info.register_bytes), 0, "{t:?}");
            }
            for level in [Level::L1, Level::GL] {
                assert_eq!(t.level(level).capacity_bytes % u64::from(t.line_bytes), 0, "whole lines: {t:?}");
            }
        }
        assert_eq!(X86_AVX512.vector_lanes(2).collect::<Vec<_>>(), [8, 16, 32]);
        assert!(X86_AVX512.has_feature("avx512bf16") && !X86_AVX2.has_feature("avx512f"));
        assert_eq!(PORTABLE.vector_lanes(4).count(), 0);
    }
}
