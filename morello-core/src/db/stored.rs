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
use crate::rewrite::form::{Form, Mapper};
use crate::rewrite::{Action, MoveDest, Resolved, Rewrite, TempDest};
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

/// A rewrite in a form that stays meaningful across versions and Spec sizes: operands and
/// stages as bytes, tiles relative to the Spec (see [`StoredAction::encode`]), names for
/// levels, dtypes and kernels. The variant tags are the order of the
/// [rewrite table](crate::rewrite::table).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Stored {}

impl Form for Stored {
    type Count = u32;
    type Operand = u8;
    type Stage = u8;
    type Tile = Vec<Option<u32>>;
    type Parallel = bool;
    type Kernel = Named<KernelKind>;
    type Temp = StoredTemp;
    type GroupedTemp = StoredTemp;
    type MoveDest = StoredMoveDest;
}

/// A decision as the database stores it.
pub type StoredAction = Rewrite<Stored>;

/// Where a stored move puts its operand.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoredMoveDest {
    /// Destination level.
    pub level: Named<Level>,
    /// Destination layout.
    pub layout: StoredLayout,
    /// Lanes per register (VRF).
    pub vector_size: Option<u32>,
    /// Destination dtype.
    pub dtype: Named<Dtype>,
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
        match action.map(&mut Encode { spec }) {
            Ok(stored) => stored,
            Err(never) => match never {},
        }
    }

    /// The action for `spec`, or `None` if this encoding cannot describe a rewrite of it.
    pub fn decode(&self, spec: &LogicalSpec) -> Option<Action> {
        self.map(&mut Decode { spec, operand: None }).ok()
    }
}

/// Resolved arguments to stored ones.
struct Encode<'a> {
    spec: &'a LogicalSpec,
}

impl Mapper for Encode<'_> {
    type From = Resolved;
    type To = Stored;
    type Error = std::convert::Infallible;
    fn count(&mut self, v: &u32) -> Result<u32, Self::Error> {
        Ok(*v)
    }
    fn operand(&mut self, v: &usize) -> Result<u8, Self::Error> {
        Ok(*v as u8)
    }
    fn stage(&mut self, v: &usize) -> Result<u8, Self::Error> {
        Ok(*v as u8)
    }
    fn tile(&mut self, v: &Shape) -> Result<Vec<Option<u32>>, Self::Error> {
        Ok(v.iter().zip(self.spec.shape()).map(|(&t, &size)| (t != size).then_some(t)).collect())
    }
    fn parallel(&mut self, v: &bool) -> Result<bool, Self::Error> {
        Ok(*v)
    }
    fn kernel(&mut self, v: &KernelKind) -> Result<Named<KernelKind>, Self::Error> {
        Ok(Named(*v))
    }
    fn temp(&mut self, v: &TempDest) -> Result<StoredTemp, Self::Error> {
        Ok(temp(v))
    }
    fn grouped_temp(&mut self, v: &TempDest) -> Result<StoredTemp, Self::Error> {
        Ok(temp(v))
    }
    fn move_dest(&mut self, v: &MoveDest) -> Result<StoredMoveDest, Self::Error> {
        Ok(StoredMoveDest {
            level: Named(v.level),
            layout: StoredLayout {
                dims: v.layout.dims().iter().map(|&d| phys(d)).collect(),
                contig: v.layout.contig(),
            },
            vector_size: v.vector_size,
            dtype: Named(v.dtype),
        })
    }
}

/// Stored arguments to resolved ones for one Spec; fails where they cannot describe a rewrite
/// of it.
struct Decode<'a> {
    spec: &'a LogicalSpec,
    /// The operand of the move being decoded (its destination's layout is built for it).
    operand: Option<usize>,
}

impl Mapper for Decode<'_> {
    type From = Stored;
    type To = Resolved;
    type Error = ();
    fn count(&mut self, v: &u32) -> Result<u32, ()> {
        Ok(*v)
    }
    fn operand(&mut self, v: &u8) -> Result<usize, ()> {
        self.operand = Some(usize::from(*v));
        Ok(usize::from(*v))
    }
    fn stage(&mut self, v: &u8) -> Result<usize, ()> {
        Ok(usize::from(*v))
    }
    fn tile(&mut self, v: &Vec<Option<u32>>) -> Result<Shape, ()> {
        if v.len() != self.spec.shape().len() {
            return Err(());
        }
        Ok(v.iter().zip(self.spec.shape()).map(|(t, &size)| t.unwrap_or(size)).collect())
    }
    fn parallel(&mut self, v: &bool) -> Result<bool, ()> {
        Ok(*v)
    }
    fn kernel(&mut self, v: &Named<KernelKind>) -> Result<KernelKind, ()> {
        Ok(v.0)
    }
    fn temp(&mut self, v: &StoredTemp) -> Result<TempDest, ()> {
        untemp(v).ok_or(())
    }
    fn grouped_temp(&mut self, v: &StoredTemp) -> Result<TempDest, ()> {
        untemp(v).ok_or(())
    }
    fn move_dest(&mut self, v: &StoredMoveDest) -> Result<MoveDest, ()> {
        let operand = self.operand.ok_or(())?;
        let shape = self.spec.operands().get(operand).ok_or(())?.shape();
        let dims = v.layout.dims.iter().map(|&d| unphys(d)).collect::<Option<Vec<_>>>().ok_or(())?;
        // Register files have no layout (`Layout::empty`), which fits any shape.
        let layout = if dims.is_empty() {
            Layout::empty()
        } else {
            Layout::new(&dims, Some(v.layout.contig), shape).map_err(drop)?
        };
        Ok(MoveDest { level: v.level.0, layout, vector_size: v.vector_size, dtype: v.dtype.0 })
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
