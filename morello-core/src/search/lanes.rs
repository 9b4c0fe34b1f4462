//! How many values the widest vector register holds: what the search's bounds count every
//! vector kernel as handling per unit of cost.

use crate::spec::LogicalSpec;
use crate::target::Target;

/// The lanes of the widest vector register for the narrowest dtype among `spec`'s operands (1
/// without vector registers): the most values any kernel handles per unit of cost, which the
/// bounds on the kernels count with.
pub(super) fn widest_lanes(spec: &LogicalSpec, target: &Target) -> u64 {
    let bytes = spec.operands().iter().map(|t| t.dtype().size_bytes()).min().unwrap_or(1);
    lanes_of_widest_vector(bytes, target)
}

/// The lanes of `target`'s widest vector register for a dtype of `bytes` bytes (1 without
/// vector registers).
pub(super) fn lanes_of_widest_vector(bytes: u32, target: &Target) -> u64 {
    u64::from(target.vector_lanes(bytes).max().unwrap_or(1).max(1))
}
