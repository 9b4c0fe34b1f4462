//! Memory levels of the CPU memory hierarchy.

use std::fmt;

/// A level of the memory hierarchy a tensor can live in.
///
/// Levels are ordered as the paper orders memory limits: scalar registers, vector registers,
/// L1 cache, global memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Level {
    /// Scalar register file: one C scalar variable per element.
    RF,
    /// Vector register file: one C vector variable per register.
    VRF,
    /// L1 cache. Hardware-managed: a move into L1 that keeps layout and dtype is a
    /// "cache miss" move that emits no code. A move that changes either allocates a buffer.
    L1,
    /// Global memory: caller buffers and heap allocations.
    GL,
}

/// The number of memory levels.
pub const LEVEL_COUNT: usize = 4;

impl Level {
    /// All levels, fastest first.
    pub const ALL: [Level; LEVEL_COUNT] = [Level::RF, Level::VRF, Level::L1, Level::GL];

    /// Position of this level in [`Level::ALL`] and in memory-limit vectors.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in Spec syntax.
    pub fn name(self) -> &'static str {
        match self {
            Level::RF => "RF",
            Level::VRF => "VRF",
            Level::L1 => "L1",
            Level::GL => "GL",
        }
    }

    /// Looks a level up by its Spec-syntax name.
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Whether tensors here are held in registers (memory counted in whole registers, accessed
    /// only with indices known at code-generation time).
    pub fn is_register_file(self) -> bool {
        matches!(self, Level::RF | Level::VRF)
    }

    /// Whether tensors at this level have a layout (RF tensors do not).
    pub fn has_layout(self) -> bool {
        self != Level::RF
    }

    /// Whether a same-layout, same-dtype move into this level is a hardware cache fill.
    pub fn is_hardware_managed(self) -> bool {
        self == Level::L1
    }

    /// Levels a `move` may take a tensor at this level to.
    pub fn move_destinations(self) -> &'static [Level] {
        match self {
            Level::GL => &[Level::GL, Level::L1],
            Level::L1 => &[Level::L1, Level::RF, Level::VRF],
            Level::RF | Level::VRF => &[],
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
