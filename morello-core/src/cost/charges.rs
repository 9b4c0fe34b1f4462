//! What a node adds to its children's costs, worked out once per node.
//!
//! A node's main cost is its children's main costs plus terms that depend only on the node: the
//! cache fills of its children, a loop's trip count, the lines its iterations make the
//! prefetchers miss, a move's traffic. The search evaluates a node's cost at many sets of
//! children's costs (their static bounds, what the memo knows, each child's budget, the solved
//! costs), so [`NodeCharges`] computes those terms once and [`NodeCharges::main`] applies
//! them. [`crate::cost::node_cost`] goes through it too: there is one definition of a node's
//! cost.

use super::{cache_fill, loop_cache_fill, residency, row_piece_cost, streamed_fill, streams};
use crate::imp::ImplNode;
use crate::spec::Spec;
use crate::target::{Residency, Target};
use smallvec::SmallVec;

/// The terms of a node's main cost that do not depend on its children's costs.
#[derive(Clone, Debug)]
pub struct NodeCharges {
    /// What each run of each child pays beyond its own cost for reading its data from where
    /// the node's is ([`cache_fill`]); a serial loop's body pays its fills in the loop's own
    /// term instead ([`loop_cache_fill`]).
    fills: SmallVec<[u64; 4]>,
    kind: ChargeKind,
}

#[derive(Clone, Debug)]
enum ChargeKind {
    /// A kernel's whole cost.
    Kernel(u64),
    /// A loop: its body (the first child), plus `unprefetched` per iteration (the lines it
    /// makes the prefetchers miss, and the row pieces whose fills do not stream), runs `times`
    /// times (rounds of the processors for a parallel loop), and the loop adds `extra`.
    Loop { unprefetched: u64, times: u64, extra: u64 },
    /// A node whose cost is its children's plus `extra`: an allocation's move or a block's
    /// temporaries.
    Sum { extra: u64 },
}

impl NodeCharges {
    /// The charges of `node`, implementing `spec`. `node` must not be an unscheduled leaf.
    pub fn new(spec: &Spec, node: &ImplNode, target: &Target) -> NodeCharges {
        Self::held_in(spec, residency(spec.logical(), target), node, target)
    }

    /// [`NodeCharges::new`] for a `spec` whose [`residency`] is `held`, for a caller that
    /// charges many nodes of one Spec.
    pub fn held_in(spec: &Spec, held: Residency, node: &ImplNode, target: &Target) -> NodeCharges {
        debug_assert_eq!(held, residency(spec.logical(), target));
        let fills_apply = held > target.innermost_residency();
        let serial_loop = matches!(node, ImplNode::Loop(l) if !l.parallel);
        let fills = node
            .children()
            .iter()
            .enumerate()
            .map(|(i, child)| match fills_apply && !(serial_loop && i == 0) {
                true => cache_fill(child.spec.logical(), held, target),
                false => 0,
            })
            .collect();
        let kind = match node {
            ImplNode::Spec => panic!("an unscheduled Spec has no cost"),
            ImplNode::Kernel(k) => ChargeKind::Kernel(k.cost(spec.logical(), target)),
            ImplNode::Loop(l) => {
                let trips = l.full_tiles(spec.shape());
                let restarted = if l.spread { 0 } else { streams::restarted_lines(spec, &l.tile, target) };
                let unprefetched = streams::scattered_lines(spec, &l.tile, target)
                    .saturating_add(restarted)
                    .saturating_mul(target.unprefetched_line_cost(held));
                // Pieces of rows whose fills do not stream for free, which the fills do not charge.
                let row_pieces = row_piece_cost(spec.logical(), l.body.spec.logical(), target);
                let unprefetched = unprefetched.saturating_add(row_pieces);
                let (times, extra) = if l.parallel {
                    let p = &target.parallel;
                    let rounds = trips.div_ceil(u64::from(p.processors));
                    (rounds, p.setup.saturating_add(p.per_iteration.saturating_mul(trips)))
                } else {
                    let body = l.body.spec.logical();
                    let fill =
                        if fills_apply { loop_cache_fill(spec.logical(), &l.tile, body, held, target) } else { 0 };
                    (trips, fill)
                };
                ChargeKind::Loop { unprefetched, times, extra }
            }
            ImplNode::Alloc(a) => {
                let source = spec.operand(a.operand);
                // A hardware cache fill reads its source at the fill weight (`Cache`), or
                // streams for free (`streamed`).
                let moved = if a.cache_miss && streamed_fill(spec.logical(), a.operand, held, target) {
                    0
                } else {
                    let read =
                        if a.cache_miss { source.fill_cost(target, held) } else { source.move_cost(target, held) };
                    a.tensor.move_cost(target, held) + read
                };
                ChargeKind::Sum { extra: moved }
            }
            ImplNode::Block(b) => ChargeKind::Sum {
                extra: b.temps.iter().fold(0u64, |acc, t| acc.saturating_add(t.move_cost(target, held))),
            },
        };
        NodeCharges { fills, kind }
    }

    /// The node's main cost when its children's main costs are `children` (in
    /// [`crate::imp::Impl::children`] order). Sums saturate.
    pub fn main(&self, children: &[u64]) -> u64 {
        debug_assert_eq!(children.len(), self.fills.len(), "one cost per child");
        let mut charged = children.iter().zip(&self.fills).map(|(&c, &fill)| c.saturating_add(fill));
        let own = match self.kind {
            ChargeKind::Kernel(cost) => cost,
            ChargeKind::Loop { unprefetched, times, extra } => {
                let body = charged.next().expect("a loop has a body");
                body.saturating_add(unprefetched).saturating_mul(times).saturating_add(extra)
            }
            ChargeKind::Sum { extra } => extra,
        };
        charged.fold(own, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::impl_cost;
    use crate::imp::Impl;
    use crate::search::Synthesizer;
    use crate::target::{X86_AVX2, X86_AVX512};

    /// Every node of the implementation the search finds for `text` on `target`.
    fn nodes(text: &str, target: &'static Target) -> Vec<Impl> {
        let spec = Spec::parse_for(text, target).unwrap();
        let imp = Synthesizer::new(target).synthesize(&spec).unwrap();
        let mut all = Vec::new();
        imp.visit(&mut |node| all.push(node.clone()));
        all
    }

    const SPECS: [(&str, &Target); 3] = [
        // Held in L2 at the top, so loops pay their children's fills.
        ("Matmul(1x8x64x128, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX2),
        ("Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL))", &X86_AVX512),
        ("Matmul(1x1x128x256, (bf16, GL), (bf16, GL), (f32, GL), serial)", &X86_AVX512),
    ];

    /// The search lets one child of a node cost at most what keeps the node within its budget,
    /// working that out from two evaluations (`child_budget`): so a node's cost must be affine
    /// in each child's cost, with a positive slope, away from saturation.
    #[test]
    fn node_cost_is_affine_in_each_child() {
        let mut checked = 0;
        for (text, target) in SPECS {
            for imp in nodes(text, target) {
                let charges = NodeCharges::new(&imp.spec, &imp.node, target);
                let costs: Vec<u64> = imp.children().iter().map(|c| impl_cost(c, target).unwrap().main).collect();
                for i in 0..costs.len() {
                    let at = |value: u64| {
                        let mut probe = costs.clone();
                        probe[i] = value;
                        charges.main(&probe)
                    };
                    let slope = at(1) - at(0);
                    assert!(slope >= 1, "{}: child {i} has slope {slope}", imp.spec);
                    for value in [7, 1000, costs[i], 3 * costs[i] + 11] {
                        assert_eq!(at(value), at(0) + slope * value, "{}: child {i} at {value}", imp.spec);
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "only {checked} children checked");
    }
}
