//! The scheduling API of paper §2.3: apply rewrites by hand, then let synthesis finish.
//!
//! Rewrites apply to the *default* unscheduled Spec of a [`PartialImpl`]: starting at the root,
//! descend into each node's default child (a loop's main body, a move's body, the accumulating
//! stage of `to_accum`) until reaching an unscheduled Spec. [`PartialImpl::subschedule`] picks
//! another one by path: each path element chooses a child at a node with several children;
//! nodes with one child are passed through without consuming an element.
//!
//! ```
//! use morello_core::schedule::PartialImpl;
//! use morello_core::kernels::KernelKind;
//! use morello_core::level::Level;
//! use morello_core::search::Synthesizer;
//! use morello_core::spec::{LayoutDecl, Spec};
//! use morello_core::target::X86_AVX2;
//!
//! // Paper Figure 1.
//! let spec: Spec = "MatmulAccum(1×4×4×16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial)"
//!     .parse()
//!     .unwrap();
//! let mut synth = Synthesizer::new(&X86_AVX2);
//! let imp = PartialImpl::new(spec, &X86_AVX2)
//!     .tile(&[1, 1, 1, 16])?
//!     .move_param(2, Level::VRF, Some(LayoutDecl::RowMajor), Some(8))?
//!     .select(KernelKind::BroadcastVecMultAdd)?
//!     .synthesize_all(&mut synth)?;
//! assert!(imp.is_complete());
//! # Ok::<(), morello_core::schedule::ScheduleError>(())
//! ```

use crate::dtype::Dtype;
use crate::imp::{Impl, ImplNode};
use crate::layout::LayoutError;
use crate::level::Level;
use crate::rewrite::{Action, RewriteError};
use crate::search::{SynthesisError, Synthesizer};
use crate::shape::Shape;
use crate::spec::{LayoutDecl, Spec};
use crate::target::Target;
use thiserror::Error;

mod methods;

pub use methods::{MoveTo, Plain};

/// Why a schedule step failed.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum ScheduleError {
    /// The rewrite does not apply to the Spec it targets.
    #[error("{0}")]
    Rewrite(#[from] RewriteError),
    /// The default position is already implemented.
    #[error(
        "there is no unscheduled Spec at the default position (it is implemented by {node}); \
         use `subschedule` to pick another Spec"
    )]
    NoDefaultSpec {
        /// What occupies the default position.
        node: String,
    },
    /// A `subschedule` path that does not lead to an unscheduled Spec.
    #[error("subschedule path element {position}: {reason}")]
    Path {
        /// Index of the offending path element (or the path length if it is too short).
        position: usize,
        /// What went wrong.
        reason: String,
    },
    /// A layout that does not fit the operand.
    #[error("layout does not fit the operand: {0}")]
    Layout(#[from] LayoutError),
    /// `split` on a Spec without a reduction dimension.
    #[error("{0} has no reduction dimension to split")]
    NothingToSplit(String),
    /// Synthesis failed for a remaining Spec.
    #[error(transparent)]
    Synthesis(#[from] SynthesisError),
    /// Schedule text that does not parse (run-time schedules).
    #[error("the schedule does not parse: {0}")]
    Syntax(crate::text_error::ParseTextError),
}

/// An implementation under construction: some Specs rewritten by hand, others not yet.
#[derive(Clone, Debug)]
pub struct PartialImpl {
    root: Impl,
    target: &'static Target,
}

impl PartialImpl {
    /// An implementation of `spec` with nothing scheduled yet. Limits above the target's
    /// capacity are lowered to it.
    pub fn new(spec: Spec, target: &'static Target) -> Self {
        let spec = spec.with_limits(spec.limits().clamped_to(target));
        PartialImpl { root: Impl::leaf(spec), target }
    }

    /// The implementation tree.
    pub fn root(&self) -> &Impl {
        &self.root
    }

    /// The tree, consuming the schedule.
    pub fn into_impl(self) -> Impl {
        self.root
    }

    /// The target.
    pub fn target(&self) -> &'static Target {
        self.target
    }

    /// Whether no unscheduled Spec remains.
    pub fn is_complete(&self) -> bool {
        self.root.is_complete()
    }

    /// The Spec rewrites currently apply to.
    pub fn default_spec(&self) -> Result<&Spec, ScheduleError> {
        let mut node = &self.root;
        loop {
            match &node.node {
                ImplNode::Spec => return Ok(&node.spec),
                ImplNode::Kernel(k) => return Err(ScheduleError::NoDefaultSpec { node: k.to_string() }),
                _ => node = node.children()[default_child(node)?],
            }
        }
    }

    /// Applies `action` at the default Spec.
    pub fn apply(mut self, action: &Action) -> Result<Self, ScheduleError> {
        let target = self.target;
        let leaf = default_leaf_mut(&mut self.root)?;
        leaf.node = action.apply(&leaf.spec, target)?;
        Ok(self)
    }

    /// Tiles the default Spec: a loop nest over tiles of `tile` (one size per Spec dimension).
    pub fn tile(self, tile: &[u32]) -> Result<Self, ScheduleError> {
        self.tile_loop(tile.into(), false)
    }

    /// Tiles the default Spec with a parallel loop: iterations run on several threads, and the
    /// tiles are serial.
    pub fn parallel_tile(self, tile: &[u32]) -> Result<Self, ScheduleError> {
        self.tile_loop(tile.into(), true)
    }

    /// Tiles the reduction dimension of the default (accumulating) Spec to `k`.
    pub fn split(self, k: u32) -> Result<Self, ScheduleError> {
        let spec = self.default_spec()?;
        let Some(prim) = spec.primitive() else {
            return Err(RewriteError::Compose { rewrite: "split" }.into());
        };
        let reductions = prim.reduction_dims(spec.shape().len());
        if reductions.is_empty() {
            return Err(ScheduleError::NothingToSplit(prim.to_string()));
        }
        let mut tile: Shape = spec.shape().into();
        for &d in &reductions {
            tile[d as usize] = k;
        }
        self.tile_loop(tile, false)
    }

    /// Moves operand `operand` of the default Spec to `level`, with `layout` (default: the
    /// operand's own layout, which makes a move into L1 a cache fill) and, for VRF, `vector_size`
    /// lanes per register.
    pub fn move_param(
        self,
        operand: usize,
        level: Level,
        layout: Option<LayoutDecl>,
        vector_size: Option<u32>,
    ) -> Result<Self, ScheduleError> {
        self.move_to(operand, MoveTo { layout, vector_size, ..MoveTo::level(level) })
    }

    /// Like [`PartialImpl::move_param`], also widening the operand (an input) to `dtype`
    /// (bf16 → f32, or a wider integer type; `None` keeps its dtype) and with only the
    /// `contig` innermost physical dimensions of the destination contiguous (`None`: all of
    /// them, or the operand's own contiguity when `layout` is `None`).
    pub fn cast(
        self,
        operand: usize,
        dtype: Option<Dtype>,
        level: Level,
        layout: Option<LayoutDecl>,
        vector_size: Option<u32>,
        contig: Option<u8>,
    ) -> Result<Self, ScheduleError> {
        self.move_to(operand, MoveTo { level, layout, vector_size, dtype, contig })
    }

    /// Applies `f` to the unscheduled Spec that `path` names.
    pub fn subschedule(
        mut self,
        path: &[usize],
        f: impl FnOnce(PartialImpl) -> Result<PartialImpl, ScheduleError>,
    ) -> Result<Self, ScheduleError> {
        let target = self.target;
        let leaf = leaf_at_path(&mut self.root, path)?;
        let scheduled = f(PartialImpl { root: Impl::leaf(leaf.spec.clone()), target })?;
        *leaf = scheduled.root;
        Ok(self)
    }

    /// The unscheduled Spec that `path` names (see [`PartialImpl::subschedule`]).
    pub fn spec_at(&self, path: &[usize]) -> Result<Spec, ScheduleError> {
        let mut copy = self.root.clone();
        leaf_at_path(&mut copy, path).map(|leaf| leaf.spec.clone())
    }

    /// Synthesizes every remaining unscheduled Spec.
    pub fn synthesize_all(mut self, synth: &mut Synthesizer) -> Result<Impl, ScheduleError> {
        synthesize_leaves(&mut self.root, synth)?;
        Ok(self.root)
    }
}

fn default_leaf_mut(root: &mut Impl) -> Result<&mut Impl, ScheduleError> {
    match &root.node {
        ImplNode::Spec => Ok(root),
        ImplNode::Kernel(k) => Err(ScheduleError::NoDefaultSpec { node: k.to_string() }),
        _ => {
            let i = default_child(root)?;
            let child = root.children_mut().into_iter().nth(i).expect("default child exists");
            default_leaf_mut(child)
        }
    }
}

/// The default child of an inner node; pipelines have none.
fn default_child(node: &Impl) -> Result<usize, ScheduleError> {
    node.default_child().ok_or_else(|| ScheduleError::NoDefaultSpec {
        node: format!("{} (its stages have no default; pick one with `subschedule`)", node.describe_node()),
    })
}

fn leaf_at_path<'a>(root: &'a mut Impl, path: &[usize]) -> Result<&'a mut Impl, ScheduleError> {
    let mut node = root;
    let mut position = 0;
    loop {
        if matches!(node.node, ImplNode::Spec) {
            if position < path.len() {
                return Err(ScheduleError::Path {
                    position,
                    reason: format!("the path reaches the unscheduled Spec {} before its end", node.spec),
                });
            }
            return Ok(node);
        }
        let children = node.children().len();
        match children {
            0 => {
                return Err(ScheduleError::Path {
                    position: position.min(path.len().saturating_sub(1)),
                    reason: format!("this path ends at {}, which is already implemented", node.describe_node()),
                });
            }
            1 => node = node.children_mut().into_iter().next().expect("one child"),
            n => {
                let Some(&i) = path.get(position) else {
                    return Err(ScheduleError::Path {
                        position,
                        reason: format!(
                            "the path stops at `{}`, which has {n} children; add an index in 0..{n}",
                            node.describe_node()
                        ),
                    });
                };
                if i >= n {
                    return Err(ScheduleError::Path {
                        position,
                        reason: format!("`{}` has {n} children (0..{n}); there is no child {i}", node.describe_node()),
                    });
                }
                node = node.children_mut().into_iter().nth(i).expect("index checked");
                position += 1;
            }
        }
    }
}

fn synthesize_leaves(node: &mut Impl, synth: &mut Synthesizer) -> Result<(), ScheduleError> {
    if matches!(node.node, ImplNode::Spec) {
        *node = synth.synthesize(&node.spec)?;
        return Ok(());
    }
    for child in node.children_mut() {
        synthesize_leaves(child, synth)?;
    }
    Ok(())
}
