//! Target machines: memory levels, capacities, vector widths, cost weights and the ISA feature
//! table.
//!
//! The ISA feature table is the single source for both the C compiler flags a kernel is built
//! with and the runtime CPU check its safe wrapper performs, so the two cannot drift apart.

use crate::level::{LEVEL_COUNT, Level};
use crate::limits::MemoryLimits;
use std::fmt;

/// Identifies a target.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum TargetId {
    /// x86-64 with AVX2 and FMA.
    X86Avx2,
}

impl TargetId {
    /// Every target, in a fixed order.
    pub const ALL: [TargetId; 1] = [TargetId::X86Avx2];

    /// The target's description.
    pub fn target(self) -> &'static Target {
        match self {
            TargetId::X86Avx2 => &X86_AVX2,
        }
    }

    /// The target's short name, as used in symbols and on the command line.
    pub fn name(self) -> &'static str {
        self.target().name
    }

    /// Looks a target up by name.
    pub fn from_name(name: &str) -> Option<TargetId> {
        TargetId::ALL.into_iter().find(|t| t.name() == name)
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

/// A target machine.
#[derive(Debug)]
pub struct Target {
    /// Which target this is.
    pub id: TargetId,
    /// Short name.
    pub name: &'static str,
    /// Per-level facts, indexed by [`Level::index`].
    pub levels: [LevelInfo; LEVEL_COUNT],
    /// Vector register widths in bytes, ascending.
    pub vector_bytes: &'static [u32],
    /// Cache line size in bytes.
    pub line_bytes: u32,
    /// The ISA extensions kernels for this target may use.
    pub isa: &'static [IsaFeature],
}

/// x86-64 with AVX2 and FMA: 16 scalar and 16 vector registers, 32 KiB of L1 modelled.
pub static X86_AVX2: Target = Target {
    id: TargetId::X86Avx2,
    name: "x86-avx2",
    levels: [
        // 16 scalar registers of 4 bytes (the widest scalar dtype).
        LevelInfo { capacity_bytes: 64, register_bytes: 4, line_cost: 0 },
        // 16 ymm registers.
        LevelInfo { capacity_bytes: 512, register_bytes: 32, line_cost: 0 },
        LevelInfo { capacity_bytes: 32 * 1024, register_bytes: 0, line_cost: 2 },
        LevelInfo { capacity_bytes: 1 << 30, register_bytes: 0, line_cost: 20 },
    ],
    vector_bytes: &[16, 32],
    line_bytes: 64,
    isa: &[
        IsaFeature { detect_name: "avx2", compiler_flag: "-mavx2" },
        IsaFeature { detect_name: "fma", compiler_flag: "-mfma" },
    ],
};

impl Target {
    /// Facts about `level`.
    pub fn level(&self, level: Level) -> &LevelInfo {
        &self.levels[level.index()]
    }

    /// The largest memory limits this target allows.
    pub fn max_limits(&self) -> MemoryLimits {
        MemoryLimits::from_bytes_unchecked(self.levels.map(|l| l.capacity_bytes))
    }

    /// Vector lane counts available for `dtype_bytes`-sized elements, ascending.
    pub fn vector_lanes(&self, dtype_bytes: u32) -> impl Iterator<Item = u32> + '_ {
        self.vector_bytes.iter().map(move |&b| b / dtype_bytes)
    }

    /// Compiler flags enabling this target's ISA.
    pub fn compiler_flags(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.isa.iter().map(|f| f.compiler_flag)
    }
}
