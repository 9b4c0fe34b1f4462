//! The Impl IR: partial and complete implementations of Specs (paper §2).
//!
//! Every [`Impl`] node implements a [`Spec`] over that Spec's operands. Children are Impls of
//! smaller Specs, bound to tensors of the parent's scope in a way fixed by the node kind:
//!
//! * [`LoopNode`] binds its bodies to tiles of the parent's operands;
//! * [`AllocNode`] binds its body to the parent's operands with one replaced by a new tensor,
//!   and its prologue/epilogue `Move`s to (old, new) and (new, old);
//! * [`BlockNode`] binds each stage's operands to the parent's operands or to temporary
//!   tensors it allocates (a pipeline's intermediates), possibly through a view.
//!
//! Leaves are microkernels or still-unscheduled Specs ([`ImplNode::Spec`]).

use crate::kernels::KernelKind;
use crate::shape::Shape;
use crate::spec::Spec;
use crate::tensor::TensorSpec;
use crate::view::ViewMap;
use smallvec::SmallVec;
use std::fmt;

/// A node of an implementation together with the Spec it implements.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Impl {
    /// The Spec this node implements.
    pub spec: Spec,
    /// How it implements it.
    pub node: ImplNode,
}

/// The kinds of Impl nodes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ImplNode {
    /// Not yet implemented: the Spec itself is the leaf.
    Spec,
    /// A microkernel applied to the node's operands.
    Kernel(KernelKind),
    /// A loop nest over tiles.
    Loop(LoopNode),
    /// A new tensor for one operand (a move), with optional load and store.
    Alloc(AllocNode),
    /// Stages run one after another.
    Block(BlockNode),
}

/// A loop nest over tiles of the Spec's dimensions (paper §2, "Tiling").
///
/// The main body runs once per full tile. When a tile size does not divide its dimension, each
/// non-empty set of "remainder" dimensions gets one boundary body, run once, covering the
/// remainder along those dimensions and all full tiles along the others.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LoopNode {
    /// Tile size along each Spec dimension.
    pub tile: Shape,
    /// Whether iterations may run in parallel.
    pub parallel: bool,
    /// Whether the tiles *spread* along the contraction dimension of a MatmulAccum (the only
    /// dimension such a loop tiles): with `s` the tile size there and `K = s·R`, iteration `t`
    /// takes the values `t, t + R, …, t + (s − 1)·R`, one from each of `s` bands of `R`
    /// consecutive ones, instead of `s·t, …, s·t + s − 1`. A sum over the contraction
    /// dimension does not depend on the order of its terms, so the result is the Spec's (up to
    /// rounding, as with any tiling of it); a loop over a row-major matrix then continues `s`
    /// streams, one per band, from one iteration to the next, where consecutive rows would
    /// start `s` new ones.
    pub spread: bool,
    /// The body for full tiles.
    pub body: Box<Impl>,
    /// Bodies for the remainder regions.
    pub boundaries: Vec<Boundary>,
}

impl LoopNode {
    /// How many times the main body runs in a loop over a Spec of `shape`: the full tiles.
    pub fn full_tiles(&self, shape: &[u32]) -> u64 {
        shape.iter().zip(&self.tile).map(|(&s, &t)| u64::from(s / t)).product()
    }
}

/// One remainder region of a [`LoopNode`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Boundary {
    /// Spec dimensions along which this region is the remainder.
    pub dims: SmallVec<[usize; 4]>,
    /// The region's implementation.
    pub body: Impl,
}

/// A move of one operand into a new tensor (paper §2, "Memory Movement").
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AllocNode {
    /// Which operand of the Spec is moved.
    pub operand: usize,
    /// The new tensor.
    pub tensor: TensorSpec,
    /// A hardware cache fill: the new tensor aliases the old one and no code is emitted.
    pub cache_miss: bool,
    /// Loads the new tensor from the old one (inputs and accumulators).
    pub prologue: Option<Box<Impl>>,
    /// The Spec with the operand replaced by the new tensor.
    pub body: Box<Impl>,
    /// Stores the new tensor back (outputs).
    pub epilogue: Option<Box<Impl>>,
}

/// Stages run in order, each over some of the node's operands and temporaries (paper §2.1's
/// pipelines when there are temporaries).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockNode {
    /// Tensors allocated for the duration of the block (pipeline intermediates).
    pub temps: Vec<TensorSpec>,
    /// The stages.
    pub stages: Vec<Impl>,
    /// For each stage, what each of its parameters is bound to.
    pub bindings: Vec<SmallVec<[Binding; 4]>>,
    /// The stage that schedule rewrites target by default, if any (pipelines have none: use
    /// `subschedule`).
    pub default_stage: Option<usize>,
}

/// What a block stage's parameter is.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Binding {
    /// The tensor it refers to.
    pub source: Source,
    /// How the parameter's coordinates map to the source's; `None` for the source itself.
    pub view: Option<ViewMap>,
    /// Where the parameter's origin lies in the source's coordinates (before `view`); `None`
    /// for the source's origin. A peeled reduction's later stage starts past the first.
    pub offset: Option<Shape>,
}

/// A tensor in a block's scope.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// Operand `i` of the block's Spec.
    Param(usize),
    /// Temporary `i` of the block.
    Temp(usize),
}

impl Binding {
    /// Parameter `i` of the parent, as is.
    pub fn param(i: usize) -> Binding {
        Binding { source: Source::Param(i), view: None, offset: None }
    }

    /// Temporary `i`, as is.
    pub fn temp(i: usize) -> Binding {
        Binding { source: Source::Temp(i), view: None, offset: None }
    }

    /// This binding seen through `view`.
    pub fn viewed(self, view: ViewMap) -> Binding {
        Binding { view: Some(view), ..self }
    }

    /// This binding starting at `offset` in its source's coordinates.
    pub fn at(self, offset: Shape) -> Binding {
        Binding { offset: Some(offset), ..self }
    }
}

/// The children of one node: few enough to live on the stack, as the search lists them for every
/// rewrite it applies.
pub type Children<'a> = SmallVec<[&'a Impl; 4]>;

impl ImplNode {
    /// The children in order (loop: body then boundaries; alloc: prologue, body, epilogue;
    /// block: stages).
    pub fn children(&self) -> Children<'_> {
        match self {
            ImplNode::Spec | ImplNode::Kernel(_) => SmallVec::new(),
            ImplNode::Loop(l) => std::iter::once(&*l.body).chain(l.boundaries.iter().map(|b| &b.body)).collect(),
            ImplNode::Alloc(a) => a
                .prologue
                .iter()
                .map(|p| &**p)
                .chain(std::iter::once(&*a.body))
                .chain(a.epilogue.iter().map(|e| &**e))
                .collect(),
            ImplNode::Block(b) => b.stages.iter().collect(),
        }
    }
}

impl Impl {
    /// An unscheduled leaf.
    pub fn leaf(spec: Spec) -> Impl {
        Impl { spec, node: ImplNode::Spec }
    }

    /// The children in order (see [`ImplNode::children`]).
    pub fn children(&self) -> Vec<&Impl> {
        self.node.children().into_vec()
    }

    /// Mutable access to the children, in the order of [`Impl::children`].
    pub fn children_mut(&mut self) -> Vec<&mut Impl> {
        match &mut self.node {
            ImplNode::Spec | ImplNode::Kernel(_) => Vec::new(),
            ImplNode::Loop(l) => {
                std::iter::once(&mut *l.body).chain(l.boundaries.iter_mut().map(|b| &mut b.body)).collect()
            }
            ImplNode::Alloc(a) => a
                .prologue
                .iter_mut()
                .map(|p| &mut **p)
                .chain(std::iter::once(&mut *a.body))
                .chain(a.epilogue.iter_mut().map(|e| &mut **e))
                .collect(),
            ImplNode::Block(b) => b.stages.iter_mut().collect(),
        }
    }

    /// Index (in [`Impl::children`]) of the child schedule rewrites go to by default: a loop's
    /// main body, a move's body, a block's designated stage.
    pub fn default_child(&self) -> Option<usize> {
        match &self.node {
            ImplNode::Spec | ImplNode::Kernel(_) => None,
            ImplNode::Loop(_) => Some(0),
            ImplNode::Alloc(a) => Some(usize::from(a.prologue.is_some())),
            ImplNode::Block(b) => b.default_stage,
        }
    }

    /// Whether no unscheduled Spec remains.
    pub fn is_complete(&self) -> bool {
        !matches!(self.node, ImplNode::Spec) && self.children().iter().all(|c| c.is_complete())
    }

    /// Every unscheduled Spec, in tree order.
    pub fn unscheduled(&self) -> Vec<&Spec> {
        let mut out = Vec::new();
        self.visit(&mut |i| {
            if matches!(i.node, ImplNode::Spec) {
                out.push(&i.spec);
            }
        });
        out
    }

    /// Calls `f` on every node, parents before children.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Impl)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        1 + self.children().iter().map(|c| c.node_count()).sum::<usize>()
    }

    /// Replaces every child with an unscheduled leaf of the same Spec.
    pub fn with_children_unscheduled(&self) -> Impl {
        let mut out = self.clone();
        for c in out.children_mut() {
            *c = Impl::leaf(c.spec.clone());
        }
        out
    }

    /// A short, one-line description of this node (without children).
    pub fn describe_node(&self) -> String {
        match &self.node {
            ImplNode::Spec => format!("{}", self.spec),
            ImplNode::Kernel(k) => format!("{k}"),
            ImplNode::Loop(l) => {
                let kind = match (l.parallel, l.spread) {
                    (true, _) => "parallel tile",
                    (false, true) => "spread tile",
                    (false, false) => "tile",
                };
                let mut s = format!("{kind} {}", crate::shape::DisplayShape(&l.tile));
                if !l.boundaries.is_empty() {
                    s += &format!(" (+{} boundary)", l.boundaries.len());
                }
                s
            }
            ImplNode::Alloc(a) => {
                let kind = if a.cache_miss { "cache" } else { "alloc" };
                format!("{kind} operand {} -> {}", a.operand, a.tensor)
            }
            ImplNode::Block(b) if b.temps.is_empty() => self.describe_peel(b).unwrap_or_else(|| "block".to_owned()),
            ImplNode::Block(b) => {
                let temps: Vec<String> = b.temps.iter().map(ToString::to_string).collect();
                format!("pipeline with {}", temps.join(", "))
            }
        }
    }

    /// A block that `peel` made, described by its reduction: which dimension, how many of its
    /// values the first stage computes and how many there are (`peel k: 64 of 1024 first`).
    /// `None` for other blocks: only a peel's later stage starts past its operands' origins.
    /// The peeled dimension is the one where the first stage is shorter than the block.
    fn describe_peel(&self, block: &BlockNode) -> Option<String> {
        let later = block.bindings.get(1)?;
        if !later.iter().any(|binding| binding.offset.is_some()) {
            return None;
        }
        let prim = self.spec.primitive()?;
        let (shape, first) = (self.spec.shape(), block.stages.first()?.spec.shape());
        let d = shape.iter().zip(first).position(|(whole, part)| part < whole)?;
        Some(format!("peel {}: {} of {} first", prim.dim_name(d), first[d], shape[d]))
    }

    fn fmt_tree(&self, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
        writeln!(f, "{:indent$}{}", "", self.describe_node(), indent = depth * 2)?;
        if !matches!(self.node, ImplNode::Spec) && !self.children().is_empty() {
            for c in self.children() {
                c.fmt_tree(f, depth + 1)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Impl {
    /// An indented tree, one node per line; unscheduled leaves print their Spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_tree(f, 0)
    }
}
