//! The affine cost model of paper §3, with peak-memory tracking.
//!
//! [`node_cost`] composes a node's cost from its children's; it is the only definition, used
//! both to cost complete Impls ([`impl_cost`]) and inside the search (which keeps a node's
//! [`NodeCharges`], the terms that do not depend on the children, to bound it many times).
//! Every node costs at least as much as each child, which gives synthesis its optimal
//! substructure.
//!
//! Terms beyond the paper's model (each with its formula in `docs/cost-model.md`): lines a loop
//! makes the hardware prefetchers miss ([`scattered_lines`]) and, unless it is a spread loop,
//! the first page of each long row it starts anew ([`restarted_lines`]); global memory at L2's
//! or L3's weight inside a Spec whose data fits in that cache ([`residency`]), with the first
//! reads of a child held further in paid once per run ([`cache_fill`]) or once per tile an
//! operand moves to in a loop ([`loop_cache_fill`]); a hardware cache fill into L1 paying only
//! the cache's delivery time ([`crate::target::Cache::fill_line_cost`]), not doubled for a tile
//! that is not contiguous, and nothing when it streams a Matmul's rhs along `k`
//! ([`streamed_fill`]), except for pieces of rows that do not follow each other
//! ([`row_pieces`]). And the search gives a Spec whose data fits in L1 only one rewrite, the
//! (no-op) cache fill of that data ([`crate::residency`]), so a program pays global memory's
//! weight once for data the cache keeps, wherever its fills would otherwise sit.
//!
//! Whether data fits in a cache counts the rows of a tile that lie a whole number of pages
//! apart ([`crate::tensor::TensorSpec::paged`]) as a page each once there are more of them than
//! the cache holds pages ([`crate::tensor::TensorSpec::cache_footprint_lines`]): the cache puts
//! them all into the same few sets. A tile of a 2048-wide matrix is no longer assumed to stay
//! in L2, so the search copies it into a contiguous buffer first where its reuse pays for that.

mod caches;
mod charges;
mod streamed;
mod streams;
mod tree;

pub use crate::residency::residency;
pub use caches::{cache_fill, loop_cache_fill};
pub use charges::NodeCharges;
pub use streamed::{RowPieces, may_stream, row_piece_cost, row_pieces, streamed_fill, streamed_line_weight};
pub use streams::{restarted_lines, scattered_lines};
pub use tree::cost_tree;

/// The cost model's version: bumped whenever kernel costs, rewrites or the search space change
/// what is optimal, so that databases of older versions are rebuilt rather than trusted (also
/// when a kernel's applicability changes: an older file may select it where it no longer
/// applies). The plan snapshots (`tests/plans/`) record it, and refuse to be re-blessed with
/// changed plans under the same version.
pub const COST_MODEL_VERSION: u32 = 19;

use crate::imp::{Impl, ImplNode};
use crate::level::Level;
use crate::limits::MemoryUsage;
use crate::spec::Spec;
use crate::target::Target;
use smallvec::SmallVec;
use std::cmp::Ordering;

/// The cost of an implementation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Cost {
    /// The paper's `c(p)`: a proxy for cycles per run.
    pub main: u64,
    /// Peak memory per level.
    pub peak: MemoryUsage,
    /// Height of the Impl tree (a tie-breaker: shallower is simpler).
    pub depth: u32,
}

impl Ord for Cost {
    /// Lower main cost first, then less memory (faster levels compared first), then shallower.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.main, self.peak, self.depth).cmp(&(other.main, other.peak, other.depth))
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The cost of a node of kind `node` implementing `spec`, given its children's costs in
/// [`Impl::children`] order. `node` must not be an unscheduled leaf.
pub fn node_cost(spec: &Spec, node: &ImplNode, children: &[Cost], target: &Target) -> Cost {
    node_cost_charged(spec, node, &NodeCharges::new(spec, node, target), children, target)
}

/// [`node_cost`] with the node's [`NodeCharges`] already worked out (by
/// [`NodeCharges::new`] for the same `spec`, `node` and `target`).
pub fn node_cost_charged(
    spec: &Spec,
    node: &ImplNode,
    charges: &NodeCharges,
    children: &[Cost],
    target: &Target,
) -> Cost {
    let mains: SmallVec<[u64; 4]> = children.iter().map(|c| c.main).collect();
    let main = charges.main(&mains);
    let peak = children.iter().fold(MemoryUsage::zero(), |acc, c| acc.max_per_level(&c.peak));
    let depth = 1 + children.iter().map(|c| c.depth).max().unwrap_or(0);
    let peak = match node {
        ImplNode::Spec => panic!("an unscheduled Spec has no cost"),
        ImplNode::Kernel(k) => {
            let peak = k.memory(spec.logical(), target);
            debug_assert!(
                Level::ALL.iter().all(|&l| l.is_register_file() || peak.get(l) == 0),
                "{k} allocates at an addressed level, which search::bounds::min_cost_for_peak rules out"
            );
            peak
        }
        ImplNode::Loop(_) => peak,
        ImplNode::Alloc(a) => peak.plus_allocation(a.tensor.level(), a.tensor.consumption(target), target),
        ImplNode::Block(b) => temps_peak(&b.temps, peak, target),
    };
    Cost { main, peak, depth }
}

/// The cost of a complete implementation, computed from scratch; `None` if any Spec in it is
/// still unscheduled.
pub fn impl_cost(imp: &Impl, target: &Target) -> Option<Cost> {
    if matches!(imp.node, ImplNode::Spec) {
        return None;
    }
    let children: Option<Vec<Cost>> = imp.children().iter().map(|c| impl_cost(c, target)).collect();
    Some(node_cost(&imp.spec, &imp.node, &children?, target))
}

/// Peak memory of a block holding `temps` for its whole duration while its stages peak at
/// `children`: the temporaries of each level are allocated together.
fn temps_peak(temps: &[crate::tensor::TensorSpec], children: MemoryUsage, target: &Target) -> MemoryUsage {
    let mut peak = children;
    let per_level = crate::tensor::consumption_by_level(temps, target);
    for level in Level::ALL {
        let own = per_level[level.index()];
        if own > 0 {
            peak = peak.plus_allocation(level, own, target);
        }
    }
    peak
}
