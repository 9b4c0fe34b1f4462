//! What the search answers for one Spec: a decision (the rewrite to apply and the cost it leads
//! to) and the box of memory limits over which it holds. The search's memo table and the
//! synthesis database both store these.

use crate::cost::Cost;
use crate::limits::MemoryLimits;
use crate::rewrite::Action;

/// The best rewrite for a Spec and the cost of the implementation it leads to.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The rewrite to apply.
    pub action: Action,
    /// The cost of the resulting implementation.
    pub cost: Cost,
}

/// A solved Spec: its decision (or `None` if unsatisfiable) and the box of limits it holds for.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Lowest limits the result holds at.
    pub lower: MemoryLimits,
    /// Highest limits the result holds at.
    pub upper: MemoryLimits,
    /// The decision, or `None` when no implementation exists.
    pub decision: Option<Decision>,
}
