//! What a rectangle stores: a decision in a stable encoding and its volume-normalized cost.
//!
//! Decisions are never indices into an enumeration (a code change could silently reorder
//! it). Levels, dtypes and kernels are stored by name; tiles say which dimensions they
//! shrink and to what, leaving the others "whole", so the same decision reads the same at
//! every Spec size (the paper's `tile(k)` around one microkernel). Costs are stored per unit
//! of Spec volume as an exact fraction, so Specs of different sizes with the same intensity
//! share a value. Decoding checks everything against the Spec it is read for.

use crate::cost::Cost;
use crate::decision::Decision;
use crate::dtype::Dtype;
use crate::kernels::KernelKind;
use crate::layout::{Layout, PhysDim, PhysKind};
use crate::level::{LEVEL_COUNT, Level};
use crate::limits::MemoryUsage;
use crate::rewrite::{Action, TempDest};
use crate::shape::Shape;
use crate::spec::{LayoutDecl, LogicalSpec};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One rectangle's value: the optimal decision (or `None`: no implementation exists) and
/// its cost.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoredValue {
    /// The decision.
    pub action: Option<StoredAction>,
    /// Main cost divided by Spec volume, as a reduced fraction `(numerator, denominator)`.
    pub intensity: (u64, u64),
    /// Peak memory per level, in bytes.
    pub peak: [u64; LEVEL_COUNT],
    /// Height of the implementation tree.
    pub depth: u32,
}

impl StoredValue {
    /// The value of `decision` (or of "unsatisfiable") for `spec`.
    pub fn new(decision: Option<&Decision>, spec: &LogicalSpec) -> StoredValue {
        match decision {
            None => StoredValue { action: None, intensity: (0, 1), peak: [0; LEVEL_COUNT], depth: 0 },
            Some(d) => {
                let volume = spec.volume();
                let g = gcd(d.cost.main, volume);
                StoredValue {
                    action: Some(StoredAction::encode(&d.action, spec)),
                    intensity: (d.cost.main / g, volume / g),
                    peak: d.cost.peak.bytes(),
                    depth: d.cost.depth,
                }
            }
        }
    }

    /// The cost this value gives a Spec of `volume`, if the intensity yields a whole cost.
    pub fn cost(&self, volume: u64) -> Option<Cost> {
        let (num, den) = self.intensity;
        let scaled = u128::from(num) * u128::from(volume);
        if den == 0 || !scaled.is_multiple_of(u128::from(den)) {
            return None;
        }
        Some(Cost {
            main: u64::try_from(scaled / u128::from(den)).ok()?,
            peak: MemoryUsage::from_bytes_unchecked(self.peak),
            depth: self.depth,
        })
    }
}

/// A rewrite in a form that stays meaningful across versions and Spec sizes.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum StoredAction {
    /// A tile: per dimension, the tile size, or `None` for the whole dimension.
    Tile {
        /// Sizes of the tiled dimensions.
        tile: Vec<Option<u32>>,
        /// Whether the loop is parallel.
        parallel: bool,
    },
    /// A move of an operand.
    Move {
        /// Operand index.
        operand: u8,
        /// Destination level.
        level: Named<Level>,
        /// Destination layout.
        layout: StoredLayout,
        /// Lanes per register (VRF).
        vector_size: Option<u32>,
        /// Destination dtype.
        dtype: Named<Dtype>,
    },
    /// `to_accum`.
    ToAccum,
    /// A microkernel.
    Select(Named<KernelKind>),
    /// `bufferize`.
    Bufferize {
        /// The stage.
        index: u8,
        /// Where the temporary lives.
        dest: StoredTemp,
    },
    /// `spatial_split`.
    SpatialSplit,
    /// `broadcast_first`.
    BroadcastFirst(StoredTemp),
    /// `to_softmax_parts`.
    ToSoftmaxParts(StoredTemp),
    /// `to_softmax_parts_recompute` (maxima, denominators).
    ToSoftmaxPartsRecompute(StoredTemp, StoredTemp),
    /// `to_max_and_denominator`.
    ToMaxAndDenominator,
    /// `to_max_and_unscaled`.
    ToMaxAndUnscaled(StoredTemp),
    /// `parallel_split`.
    ParallelSplit {
        /// Values per chunk.
        chunk: u32,
        /// Where the partial results live.
        partials: StoredTemp,
    },
    /// `spread` (after the variants above, so that they keep their encoding).
    Spread {
        /// Values per tile, and bands.
        bands: u32,
    },
    /// `peel` (last, so that the variants before it keep their encoding).
    Peel {
        /// Values of the reduction the first stage computes.
        size: u32,
    },
}

/// A layout's physical dimensions `(logical dimension, kind, strip)` (kind 0 dynamic, 1
/// packed, 2 odd-even) and contiguity.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoredLayout {
    /// Physical dimensions.
    pub dims: Vec<(u8, u8, u32)>,
    /// Contiguous innermost physical dimensions.
    pub contig: u8,
}

/// A temporary's destination.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoredTemp {
    /// Level.
    pub level: Named<Level>,
    /// How the temporary is laid out.
    pub layout: StoredLayoutDecl,
    /// Lanes per register (VRF).
    pub vector_size: Option<u32>,
}

/// A declared layout.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum StoredLayoutDecl {
    /// `row_major`.
    RowMajor,
    /// `col_major`.
    ColMajor,
    /// Explicit physical dimensions.
    Physical(Vec<(u8, u8, u32)>),
}

impl StoredAction {
    /// The stable form of `action`, a rewrite of `spec`. Tile sizes equal to the Spec's
    /// dimension are stored as "whole", so the value reads the same for Specs that differ only
    /// there.
    pub fn encode(action: &Action, spec: &LogicalSpec) -> StoredAction {
        match action {
            Action::Tile { tile, parallel } => StoredAction::Tile {
                tile: tile.iter().zip(spec.shape()).map(|(&t, &size)| (t != size).then_some(t)).collect(),
                parallel: *parallel,
            },
            Action::Move { operand, level, layout, vector_size, dtype } => StoredAction::Move {
                operand: *operand as u8,
                level: Named(*level),
                layout: StoredLayout {
                    dims: layout.dims().iter().map(|&d| phys(d)).collect(),
                    contig: layout.contig(),
                },
                vector_size: *vector_size,
                dtype: Named(*dtype),
            },
            Action::Spread { bands } => StoredAction::Spread { bands: *bands },
            Action::ToAccum => StoredAction::ToAccum,
            Action::Peel { size } => StoredAction::Peel { size: *size },
            Action::Select(k) => StoredAction::Select(Named(*k)),
            Action::Bufferize { index, dest } => StoredAction::Bufferize { index: *index as u8, dest: temp(dest) },
            Action::SpatialSplit => StoredAction::SpatialSplit,
            Action::BroadcastFirst { dest } => StoredAction::BroadcastFirst(temp(dest)),
            Action::ToSoftmaxParts { denom } => StoredAction::ToSoftmaxParts(temp(denom)),
            Action::ToSoftmaxPartsRecompute { max, denom } => {
                StoredAction::ToSoftmaxPartsRecompute(temp(max), temp(denom))
            }
            Action::ToMaxAndDenominator => StoredAction::ToMaxAndDenominator,
            Action::ToMaxAndUnscaled { max } => StoredAction::ToMaxAndUnscaled(temp(max)),
            Action::ParallelSplit { chunk, partials } => {
                StoredAction::ParallelSplit { chunk: *chunk, partials: temp(partials) }
            }
        }
    }

    /// The action for `spec`, or `None` if this encoding cannot describe a rewrite of it.
    pub fn decode(&self, spec: &LogicalSpec) -> Option<Action> {
        Some(match self {
            StoredAction::Tile { tile, parallel } => {
                if tile.len() != spec.shape().len() {
                    return None;
                }
                let tile: Shape = tile.iter().zip(spec.shape()).map(|(t, &size)| t.unwrap_or(size)).collect();
                Action::Tile { tile, parallel: *parallel }
            }
            StoredAction::Move { operand, level, layout, vector_size, dtype } => {
                let operand = usize::from(*operand);
                let shape = spec.operands().get(operand)?.shape();
                let dims = layout.dims.iter().map(|&d| unphys(d)).collect::<Option<Vec<_>>>()?;
                // Register files have no layout (`Layout::empty`), which fits any shape.
                let layout = if dims.is_empty() {
                    Layout::empty()
                } else {
                    Layout::new(&dims, Some(layout.contig), shape).ok()?
                };
                Action::Move { operand, level: level.0, layout, vector_size: *vector_size, dtype: dtype.0 }
            }
            StoredAction::Spread { bands } => Action::Spread { bands: *bands },
            StoredAction::ToAccum => Action::ToAccum,
            StoredAction::Peel { size } => Action::Peel { size: *size },
            StoredAction::Select(k) => Action::Select(k.0),
            StoredAction::Bufferize { index, dest } => {
                Action::Bufferize { index: usize::from(*index), dest: untemp(dest)? }
            }
            StoredAction::SpatialSplit => Action::SpatialSplit,
            StoredAction::BroadcastFirst(d) => Action::BroadcastFirst { dest: untemp(d)? },
            StoredAction::ToSoftmaxParts(d) => Action::ToSoftmaxParts { denom: untemp(d)? },
            StoredAction::ToSoftmaxPartsRecompute(m, d) => {
                Action::ToSoftmaxPartsRecompute { max: untemp(m)?, denom: untemp(d)? }
            }
            StoredAction::ToMaxAndDenominator => Action::ToMaxAndDenominator,
            StoredAction::ToMaxAndUnscaled(m) => Action::ToMaxAndUnscaled { max: untemp(m)? },
            StoredAction::ParallelSplit { chunk, partials } => {
                Action::ParallelSplit { chunk: *chunk, partials: untemp(partials)? }
            }
        })
    }
}

fn phys(d: PhysDim) -> (u8, u8, u32) {
    match d.kind {
        PhysKind::Dynamic => (d.logical, 0, 0),
        PhysKind::Packed(s) => (d.logical, 1, s),
        PhysKind::OddEven(s) => (d.logical, 2, s),
    }
}

fn unphys((logical, kind, strip): (u8, u8, u32)) -> Option<PhysDim> {
    match kind {
        0 => Some(PhysDim::dynamic(logical)),
        1 => Some(PhysDim::packed(logical, strip)),
        2 => Some(PhysDim::odd_even(logical, strip)),
        _ => None,
    }
}

fn temp(t: &TempDest) -> StoredTemp {
    let layout = match &t.layout {
        LayoutDecl::RowMajor => StoredLayoutDecl::RowMajor,
        LayoutDecl::ColMajor => StoredLayoutDecl::ColMajor,
        LayoutDecl::Physical(dims) => StoredLayoutDecl::Physical(dims.iter().map(|&d| phys(d)).collect()),
    };
    StoredTemp { level: Named(t.level), layout, vector_size: t.vector_size }
}

fn untemp(t: &StoredTemp) -> Option<TempDest> {
    let layout = match &t.layout {
        StoredLayoutDecl::RowMajor => LayoutDecl::RowMajor,
        StoredLayoutDecl::ColMajor => LayoutDecl::ColMajor,
        StoredLayoutDecl::Physical(dims) => {
            LayoutDecl::Physical(dims.iter().map(|&d| unphys(d)).collect::<Option<Vec<_>>>()?)
        }
    };
    Some(TempDest { level: t.level.0, layout, vector_size: t.vector_size })
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// Something stored by its stable name: a level, dtype or kernel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Named<T>(pub T);

/// Types with a stable name.
pub trait StableName: Sized + Copy {
    /// The name.
    fn stable_name(self) -> &'static str;
    /// The value with this name, if any.
    fn from_stable_name(name: &str) -> Option<Self>;
}

impl StableName for Level {
    fn stable_name(self) -> &'static str {
        self.name()
    }
    fn from_stable_name(name: &str) -> Option<Self> {
        Level::from_name(name)
    }
}

impl StableName for Dtype {
    fn stable_name(self) -> &'static str {
        self.name()
    }
    fn from_stable_name(name: &str) -> Option<Self> {
        Dtype::from_name(name)
    }
}

impl StableName for KernelKind {
    fn stable_name(self) -> &'static str {
        self.name()
    }
    fn from_stable_name(name: &str) -> Option<Self> {
        KernelKind::from_name(name)
    }
}

impl<T: StableName> Serialize for Named<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.stable_name())
    }
}

impl<'de, T: StableName> Deserialize<'de> for Named<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        T::from_stable_name(&name).map(Named).ok_or_else(|| D::Error::custom(format!("unknown name `{name}`")))
    }
}
