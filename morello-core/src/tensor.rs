//! Tensor specifications: what a Spec knows about each of its operands.

use crate::dtype::Dtype;
use crate::fxhash::{FxHashMap, FxHashSet, fingerprint};
use crate::layout::{Layout, LayoutError};
use crate::level::{LEVEL_COUNT, Level};
use crate::shape::{Shape, volume};
use crate::target::{Residency, Target};
use crate::view::ViewMap;
use std::cell::RefCell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{LazyLock, Mutex};
use thiserror::Error;

mod paged;
mod spread;

/// The description of one operand: shape, element type, memory level, layout (with
/// contiguity), for vector registers the number of lanes per register, and whether its runs
/// start whole pages apart ([`TensorSpec::paged`]).
///
/// Tensors are *interned*: each distinct one is stored once for the life of the process, and a
/// `TensorSpec` is a pointer to it. The search builds and compares tensors on every rewrite it
/// applies, so cloning one copies a pointer and comparing two compares pointers. There are few
/// distinct tensors (shapes, layouts and levels of a kernel's operands and their tiles), so
/// what is interned stays small.
pub struct TensorSpec(&'static TensorData);

/// What a [`TensorSpec`] points to.
#[derive(Eq, PartialOrd, Ord, Debug)]
struct TensorData {
    shape: Shape,
    dtype: Dtype,
    level: Level,
    layout: Layout,
    vector_size: Option<u32>,
    /// Whether the runs (contiguous blocks) of a tensor that is not contiguous start a whole
    /// number of memory pages apart: see [`TensorSpec::paged`].
    paged: bool,
    /// Hash of the fields above, so that a Spec's own fingerprint
    /// ([`crate::spec::LogicalSpec`]) combines its operands' in one step each.
    fingerprint: u64,
    /// The contiguous runs of the tensor and the bytes of each ([`Layout::runs_and_block`]),
    /// derived from the fields above when interned: the cost model asks for a tensor's cache
    /// lines millions of times in a search, and walking the layout each time was a seventh of
    /// the search's time.
    runs: u64,
    run_bytes: u64,
}

/// The fingerprint first: it tells most unequal tensors apart in one comparison.
impl PartialEq for TensorData {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && self.dtype == other.dtype
            && self.level == other.level
            && self.vector_size == other.vector_size
            && self.shape == other.shape
            && self.layout == other.layout
            && self.paged == other.paged
    }
}

impl Hash for TensorData {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

impl Clone for TensorSpec {
    fn clone(&self) -> Self {
        TensorSpec(self.0)
    }
}

/// Interned tensors are equal exactly when they are the same one.
impl PartialEq for TensorSpec {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for TensorSpec {}

impl Hash for TensorSpec {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.fingerprint);
    }
}

/// Ordered by contents (shape first), not by address, so that sorting is deterministic.
impl PartialOrd for TensorSpec {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TensorSpec {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self == other { std::cmp::Ordering::Equal } else { self.0.cmp(other.0) }
    }
}

impl fmt::Debug for TensorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Every interned tensor, shared by all threads.
static INTERNED: LazyLock<Mutex<FxHashSet<&'static TensorData>>> = LazyLock::new(Mutex::default);

/// Tiles of tensors outside the vector registers, by tensor and tile shape.
type TileTable = FxHashMap<(TensorSpec, Shape), Result<TensorSpec, TensorSpecError>>;

thread_local! {
    /// The interned tensors this thread has met: most lookups end here, without the lock.
    static MET: RefCell<FxHashSet<&'static TensorData>> = RefCell::default();
    /// What [`TensorSpec::tile`] found on this thread.
    static TILES: RefCell<TileTable> = RefCell::default();
}

/// The one stored copy of `data` (with its fingerprint computed), stored now if it is new.
///
/// Stored tensors are never freed: a process meets few distinct ones (1,818 in the whole search
/// of a 128³ Matmul on AVX-512), each about 150 bytes.
fn intern(mut data: TensorData) -> TensorSpec {
    data.fingerprint = fingerprint(&(&data.shape, data.dtype, data.level, &data.layout, data.vector_size, data.paged));
    let (runs, block) = data.layout.runs_and_block(&data.shape);
    (data.runs, data.run_bytes) = (runs, block * u64::from(data.dtype.size_bytes()));
    if let Some(known) = MET.with(|met| met.borrow().get(&data).copied()) {
        return TensorSpec(known);
    }
    let stored = {
        // A panic while holding the lock cannot leave the set inconsistent: insertion is its
        // only mutation.
        let mut all = INTERNED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match all.get(&data) {
            Some(&known) => known,
            None => {
                let stored: &'static TensorData = Box::leak(Box::new(data));
                all.insert(stored);
                stored
            }
        }
    };
    MET.with(|met| met.borrow_mut().insert(stored));
    TensorSpec(stored)
}

/// Why a tensor specification is invalid.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum TensorSpecError {
    /// The layout does not fit the shape.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A VRF tensor without a vector size.
    #[error("a VRF tensor needs a vector size such as `v8`")]
    MissingVectorSize,
    /// A vector size on a tensor outside the vector register file.
    #[error("only VRF tensors have a vector size; remove `v{lanes}` from this {level} tensor")]
    UnexpectedVectorSize {
        /// The tensor's level.
        level: Level,
        /// The vector size given.
        lanes: u32,
    },
    /// A vector size that is not a register width of the target.
    #[error("`v{lanes}` of {dtype} is not a vector register width of {target} ({allowed})")]
    VectorWidth {
        /// The vector size given.
        lanes: u32,
        /// The element type.
        dtype: Dtype,
        /// The target name.
        target: &'static str,
        /// The allowed sizes, formatted (or that there are none).
        allowed: String,
    },
    /// A VRF tensor whose registers would not be whole: its contiguous runs are not made of
    /// whole vectors.
    #[error(
        "this VRF tensor's contiguous runs hold {block} values, which is not a multiple of its \
         vector size {lanes}"
    )]
    PartialVectors {
        /// Values per contiguous run.
        block: u64,
        /// The vector size.
        lanes: u32,
    },
    /// `paged` on a tensor without runs in memory: a contiguous one, or one in registers.
    #[error(
        "`paged` says that the runs of a non-contiguous tensor in memory start whole pages apart; \
         this {level} tensor has none (remove `paged`, or give a contiguity such as `c1`)"
    )]
    PagedWithoutRuns {
        /// The tensor's level.
        level: Level,
    },
    /// A spread tile along a dimension that is not one plain physical dimension in memory.
    #[error(
        "a spread tile needs dimension {dim} laid out as one plain (unpacked) dimension in memory; \
         this tensor's layout is {layout}"
    )]
    SpreadNeedsPlainDimension {
        /// The dimension.
        dim: usize,
        /// The tensor's layout, formatted.
        layout: String,
    },
}

impl TensorData {
    fn check_vector_size(&self, target: &Target) -> Result<(), TensorSpecError> {
        match (self.level, self.vector_size) {
            (Level::VRF, None) => Err(TensorSpecError::MissingVectorSize),
            (Level::VRF, Some(lanes)) => {
                let size = self.dtype.size_bytes();
                if !target.vector_lanes(size).any(|l| l == lanes) {
                    let allowed: Vec<String> = target.vector_lanes(size).map(|l| format!("v{l}")).collect();
                    return Err(TensorSpecError::VectorWidth {
                        lanes,
                        dtype: self.dtype,
                        target: target.name,
                        allowed: if allowed.is_empty() {
                            "it has no vector registers".to_owned()
                        } else {
                            format!("allowed: {}", allowed.join(", "))
                        },
                    });
                }
                let block = self.layout.contiguous_block(&self.shape);
                if !block.is_multiple_of(u64::from(lanes)) {
                    return Err(TensorSpecError::PartialVectors { block, lanes });
                }
                Ok(())
            }
            (level, Some(lanes)) => Err(TensorSpecError::UnexpectedVectorSize { level, lanes }),
            (_, None) => Ok(()),
        }
    }
}

impl TensorSpec {
    /// Builds a tensor specification. `layout` must be canonical for `shape` (as every
    /// constructor of [`Layout`] guarantees); RF tensors ignore it.
    pub fn new(
        shape: Shape,
        dtype: Dtype,
        level: Level,
        layout: Layout,
        vector_size: Option<u32>,
        target: &Target,
    ) -> Result<TensorSpec, TensorSpecError> {
        let layout = if level.has_layout() { layout } else { Layout::empty() };
        let data = TensorData {
            shape,
            dtype,
            level,
            layout,
            vector_size,
            paged: false,
            fingerprint: 0,
            runs: 0,
            run_bytes: 0,
        };
        data.check_vector_size(target)?;
        Ok(intern(data))
    }

    /// The logical shape.
    pub fn shape(&self) -> &[u32] {
        &self.0.shape
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        self.0.dtype
    }

    /// The memory level.
    pub fn level(&self) -> Level {
        self.0.level
    }

    /// The layout (empty for RF tensors).
    pub fn layout(&self) -> &Layout {
        &self.0.layout
    }

    /// Lanes per vector register, for VRF tensors.
    pub fn vector_size(&self) -> Option<u32> {
        self.0.vector_size
    }

    /// Number of elements.
    pub fn volume(&self) -> u64 {
        volume(&self.0.shape)
    }

    /// Whether every dimension is 1.
    pub fn is_scalar(&self) -> bool {
        self.0.shape.iter().all(|&d| d == 1)
    }

    /// Whether the tensor occupies one dense block (RF tensors count as contiguous).
    pub fn is_contiguous(&self) -> bool {
        !self.0.level.has_layout() || self.0.layout.is_fully_contiguous()
    }

    /// Bytes of its elements: volume times element size (no padding to lines or registers; see
    /// [`TensorSpec::consumption`] for that).
    pub fn data_bytes(&self) -> u64 {
        self.volume() * u64::from(self.0.dtype.size_bytes())
    }

    /// Vector registers a VRF tensor occupies.
    pub fn vector_count(&self) -> u64 {
        self.0.vector_size.map_or(0, |lanes| self.volume() / u64::from(lanes))
    }

    /// Cache lines touched (paper §3), for addressed levels.
    pub fn cache_lines(&self, target: &Target) -> u64 {
        self.0.runs * self.0.run_bytes.div_ceil(u64::from(target.line_bytes))
    }

    /// Bytes this tensor consumes at its level when allocated there: whole registers for
    /// register files, whole cache lines otherwise (in L1, as many as
    /// [`TensorSpec::cache_footprint_lines`] says it takes).
    pub fn consumption(&self, target: &Target) -> u64 {
        let info = target.level(self.0.level);
        match self.0.level {
            Level::RF => self.volume() * u64::from(info.register_bytes),
            Level::VRF => self.vector_count() * u64::from(info.register_bytes),
            Level::L1 => self.l1_footprint_bytes(target),
            Level::GL => self.cache_lines(target) * u64::from(target.line_bytes),
        }
    }

    /// The move cost `m(t)` of paper §3: cache lines times the level's weight, doubled when the
    /// tensor is not contiguous. In global memory, the weight is that of the cache the Spec the
    /// move belongs to is held in (see [`crate::cost::residency`]).
    pub fn move_cost(&self, target: &Target, residency: Residency) -> u64 {
        let weight = target.line_cost(self.0.level, residency);
        if weight == 0 {
            return 0;
        }
        let contiguity_factor = if self.is_contiguous() { 1 } else { 2 };
        self.cache_lines(target) * weight * contiguity_factor
    }

    /// What a hardware cache fill out of this tensor pays: its cache lines at
    /// [`Target::least_line_cost`] (in global memory, [`Target::fill_line_cost`] instead of its
    /// full weight). Unlike a copy ([`TensorSpec::move_cost`]), a fill is not doubled when the
    /// tensor is not contiguous: the cache fetches the same whole lines either way, with no loop
    /// over short rows. (Doubled, it made the search prefer reading one long piece of a row at a
    /// time over filling several short rows, which runs slower.)
    pub fn fill_cost(&self, target: &Target, residency: Residency) -> u64 {
        self.cache_lines(target) * target.least_line_cost(self.0.level, residency)
    }

    /// The specification of a `tile_shape` tile of this tensor.
    ///
    /// Tiles of tensors outside the vector registers are remembered per thread (the search
    /// tiles the same few tensors to the same few shapes millions of times); whether a
    /// register tile is valid depends on the target, so those are built each time.
    pub fn tile(&self, tile_shape: &[u32], target: &Target) -> Result<TensorSpec, TensorSpecError> {
        if self.0.vector_size.is_some() {
            return self.tile_uncached(tile_shape, target);
        }
        let key = (self.clone(), Shape::from_slice(tile_shape));
        if let Some(known) = TILES.with(|tiles| tiles.borrow().get(&key).cloned()) {
            return known;
        }
        let tile = self.tile_uncached(tile_shape, target);
        TILES.with(|tiles| tiles.borrow_mut().insert(key, tile.clone()));
        tile
    }

    /// [`TensorSpec::tile`], built.
    fn tile_uncached(&self, tile_shape: &[u32], target: &Target) -> Result<TensorSpec, TensorSpecError> {
        let layout =
            if self.0.level.has_layout() { self.0.layout.tile(&self.0.shape, tile_shape)? } else { Layout::empty() };
        // Registers have no pages (and their tiles, built on every use, stay cheap).
        let in_memory = !self.0.level.is_register_file();
        let paged = in_memory && self.tile_is_paged(tile_shape, &layout, target)?;
        let t = TensorData { paged, ..self.with_shape_and_layout(tile_shape, layout) };
        t.check_vector_size(target)?;
        Ok(intern(t))
    }

    /// This tensor's contents with another shape and layout, unchecked and not yet interned.
    fn with_shape_and_layout(&self, shape: &[u32], layout: Layout) -> TensorData {
        TensorData {
            shape: Shape::from_slice(shape),
            dtype: self.0.dtype,
            level: self.0.level,
            layout,
            vector_size: self.0.vector_size,
            paged: false,
            fingerprint: 0,
            runs: 0,
            run_bytes: 0,
        }
    }

    /// This tensor at another level of the cache hierarchy, where a hardware cache fill puts it:
    /// the same layout, runs and dtype.
    pub fn cache_filled(&self, level: Level) -> TensorSpec {
        intern(TensorData {
            level,
            paged: self.0.paged,
            ..self.with_shape_and_layout(&self.0.shape, self.0.layout.clone())
        })
    }

    /// This tensor at another level with another dtype, layout and vector size (a move
    /// destination: a new buffer, whose runs lie as its layout says).
    pub fn moved(
        &self,
        dtype: Dtype,
        level: Level,
        layout: Layout,
        vector_size: Option<u32>,
        target: &Target,
    ) -> Result<TensorSpec, TensorSpecError> {
        TensorSpec::new(self.0.shape.clone(), dtype, level, layout, vector_size, target)
    }

    /// The view `map` of this tensor, with shape `view_shape`: the same memory seen with other
    /// dimensions (see [`crate::view`]).
    pub fn view(&self, view_shape: &[u32], map: &ViewMap, target: &Target) -> Result<TensorSpec, TensorSpecError> {
        let layout = if self.0.level.has_layout() {
            self.0.layout.view(&self.0.shape, view_shape, map)?
        } else {
            Layout::empty()
        };
        // The same memory: runs that were whole pages apart still are, if any remain.
        let paged = self.0.paged && !layout.is_fully_contiguous();
        let t = TensorData { paged, ..self.with_shape_and_layout(view_shape, layout) };
        t.check_vector_size(target)?;
        Ok(intern(t))
    }

    /// Formats the layout the way Spec syntax writes it: `row_major`, `col_major` or
    /// `[0, 2, 1, 2 p16]`.
    pub fn layout_syntax(&self) -> String {
        if self.0.layout.is_row_major(&self.0.shape) {
            "row_major".to_owned()
        } else if self.0.layout.is_col_major(&self.0.shape) {
            "col_major".to_owned()
        } else {
            self.0.layout.to_string()
        }
    }
}

impl fmt::Display for TensorSpec {
    /// Formats as an operand in Spec syntax: `(f32, VRF, row_major, v8)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}", self.0.dtype, self.0.level)?;
        if self.0.level.has_layout() {
            write!(f, ", {}", self.layout_syntax())?;
        }
        if let Some(lanes) = self.0.vector_size {
            write!(f, ", v{lanes}")?;
        }
        if self.0.level.has_layout() && !self.0.layout.is_fully_contiguous() {
            write!(f, ", c{}", self.0.layout.contig())?;
        }
        if self.0.paged {
            f.write_str(", paged")?;
        }
        f.write_str(")")
    }
}

/// The bytes `tensors` consume at each level (indexed by [`Level::index`]) when allocated
/// together, as a pipeline's temporaries are. Memory limits, peaks and memo horizons all count
/// temporaries through this one function, so they agree.
pub fn consumption_by_level(tensors: &[TensorSpec], target: &Target) -> [u64; LEVEL_COUNT] {
    let mut bytes = [0; LEVEL_COUNT];
    for t in tensors {
        bytes[t.level().index()] += t.consumption(target);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::PhysDim;
    use crate::target::X86_AVX2;

    fn t(shape: &[u32], level: Level, vs: Option<u32>) -> Result<TensorSpec, TensorSpecError> {
        TensorSpec::new(shape.into(), Dtype::F32, level, Layout::row_major(shape), vs, &X86_AVX2)
    }

    #[test]
    fn vector_size_rules() {
        assert!(t(&[1, 1, 16], Level::VRF, Some(8)).is_ok());
        assert!(matches!(t(&[1, 1, 16], Level::VRF, None), Err(TensorSpecError::MissingVectorSize)));
        assert!(matches!(t(&[1, 1, 16], Level::VRF, Some(16)), Err(TensorSpecError::VectorWidth { .. })));
        assert!(matches!(t(&[1, 1, 16], Level::L1, Some(8)), Err(TensorSpecError::UnexpectedVectorSize { .. })));
        let rows = t(&[1, 4, 16], Level::VRF, Some(8)).unwrap();
        assert!(matches!(rows.tile(&[1, 4, 4], &X86_AVX2), Err(TensorSpecError::PartialVectors { .. })));
        assert_eq!(rows.tile(&[1, 1, 8], &X86_AVX2).unwrap().vector_count(), 1);
    }

    #[test]
    fn tensors_are_interned_across_threads() {
        let packed = Layout::new(&[PhysDim::dynamic(0), PhysDim::dynamic(1), PhysDim::packed(0, 8)], None, &[32, 64])
            .expect("a packed layout");
        let make =
            || TensorSpec::new(Shape::from_slice(&[32, 64]), Dtype::F32, Level::GL, packed.clone(), None, &X86_AVX2);
        let here = make().unwrap();
        let there = std::thread::scope(|s| s.spawn(|| make().unwrap()).join().unwrap());
        assert!(std::ptr::eq(here.0, there.0), "one stored copy per distinct tensor");
        let row_major = t(&[32, 64], Level::GL, None).unwrap();
        assert_ne!(here, row_major);
        // Ordered by contents, shape first, not by which was stored first.
        let tall = t(&[48, 24], Level::GL, None).unwrap();
        let wide = t(&[24, 48], Level::GL, None).unwrap();
        assert!(wide < tall);
        // A remembered tile is the tile built afresh, on any thread.
        let tile = here.tile(&[16, 8], &X86_AVX2).unwrap();
        assert_eq!(here.tile(&[16, 8], &X86_AVX2).unwrap(), tile);
        assert_eq!(here.tile_uncached(&[16, 8], &X86_AVX2).unwrap(), tile);
        let elsewhere = std::thread::scope(|s| s.spawn(|| there.tile(&[16, 8], &X86_AVX2).unwrap()).join().unwrap());
        assert_eq!(elsewhere, tile);
        assert!(!tile.is_contiguous());
        assert_eq!(tile.layout(), &packed.tile(&[32, 64], &[16, 8]).unwrap());
    }

    #[test]
    fn consumption_and_cost() {
        let v = t(&[1, 6, 16], Level::VRF, Some(8)).unwrap();
        assert_eq!(v.consumption(&X86_AVX2), 12 * 32);
        let l1 = t(&[1, 6, 16], Level::L1, None).unwrap();
        assert_eq!(l1.consumption(&X86_AVX2), 6 * 64);
        assert_eq!(l1.move_cost(&X86_AVX2, Residency::Memory), 12);
        assert_eq!(l1.to_string(), "(f32, L1, row_major)");
        assert_eq!(v.to_string(), "(f32, VRF, row_major, v8)");
    }
}
