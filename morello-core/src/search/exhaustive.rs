//! Reference searches, used to check [`crate::search::Synthesizer`].
//!
//! [`optimal_cost`] is the textbook dynamic program: every rewrite, every child solved at its
//! exact limits, memoized by exact Spec, no bounds, no pruning, no limit boxes. [`all_impls`]
//! goes further and enumerates every complete implementation, costing each from scratch, so it
//! also checks that composing optimal children is optimal. Both are exponential; use them on
//! small Specs and small limits. [`optimal_cost_in`] is [`optimal_cost`] over a narrowed
//! [`SearchSpace`].

use super::{SearchSpace, actions};
use crate::cost::{Cost, impl_cost, node_cost};
use crate::fxhash::FxHashMap;
use crate::imp::Impl;
use crate::spec::Spec;
use crate::target::Target;

/// The optimal cost of `spec` by plain memoized recursion over all rewrites.
pub fn optimal_cost(spec: &Spec, target: &Target) -> Option<Cost> {
    optimal_cost_in(spec, target, SearchSpace::Full)
}

/// The optimal cost of `spec` by plain memoized recursion over the rewrites of `space`.
pub fn optimal_cost_in(spec: &Spec, target: &Target, space: SearchSpace) -> Option<Cost> {
    type Known = FxHashMap<Spec, Option<Cost>>;
    fn solve(spec: &Spec, target: &Target, space: SearchSpace, memo: &mut Known) -> Option<Cost> {
        if let Some(&known) = memo.get(spec) {
            return known;
        }
        let mut best: Option<Cost> = None;
        for action in space.actions(spec, target) {
            let Ok(node) = action.apply(spec, target) else { continue };
            let imp = Impl { spec: spec.clone(), node };
            let children: Option<Vec<Cost>> =
                imp.children().iter().map(|c| solve(&c.spec, target, space, memo)).collect();
            if let Some(children) = children {
                let cost = node_cost(spec, &imp.node, &children, target);
                if best.is_none_or(|b| cost < b) {
                    best = Some(cost);
                }
            }
        }
        memo.insert(spec.clone(), best);
        best
    }
    solve(spec, target, space, &mut FxHashMap::default())
}

/// Every complete implementation of `spec`, or `None` if there are more than `cap`.
pub fn all_impls(spec: &Spec, target: &Target, cap: usize) -> Option<Vec<Impl>> {
    let mut memo: FxHashMap<Spec, Vec<Impl>> = FxHashMap::default();
    enumerate(spec, target, cap, &mut memo)
}

fn enumerate(spec: &Spec, target: &Target, cap: usize, memo: &mut FxHashMap<Spec, Vec<Impl>>) -> Option<Vec<Impl>> {
    if let Some(known) = memo.get(spec) {
        return Some(known.clone());
    }
    let mut out = Vec::new();
    for action in actions(spec, target) {
        let Ok(node) = action.apply(spec, target) else { continue };
        let shell = Impl { spec: spec.clone(), node };
        let mut options = Vec::new();
        for child in shell.children() {
            options.push(enumerate(&child.spec, target, cap, memo)?);
        }
        let mut combos: Vec<Impl> = vec![shell];
        for (slot, choices) in options.iter().enumerate() {
            let mut next = Vec::new();
            for partial in &combos {
                for choice in choices {
                    let mut imp = partial.clone();
                    *imp.children_mut().swap_remove(slot) = choice.clone();
                    next.push(imp);
                    if next.len() + out.len() > cap {
                        return None;
                    }
                }
            }
            combos = next;
        }
        out.extend(combos);
    }
    debug_assert!(out.iter().all(|i| impl_cost(i, target).is_some()));
    memo.insert(spec.clone(), out.clone());
    Some(out)
}
