//! How a search trades optimality for time: a [`Slack`] and a [`SearchSpace`], both opt-in.

use super::{SearchSpace, Slack};
use std::fmt;

/// How synthesis searches. Results of different modes differ, so they must be kept apart.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub struct SearchMode {
    /// How far above the optimum results may be.
    pub slack: Slack,
    /// Which rewrites the search considers.
    pub space: SearchSpace,
}

impl SearchMode {
    /// The exact search: optima of the full space.
    pub const EXACT: SearchMode = SearchMode { slack: Slack::EXACT, space: SearchSpace::Full };

    /// Whether this is [`SearchMode::EXACT`].
    pub fn is_exact(self) -> bool {
        self == SearchMode::EXACT
    }
}

impl fmt::Display for SearchMode {
    /// "exact results", or what else the results are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.slack.is_exact(), self.space.is_full()) {
            (true, true) => write!(f, "exact results"),
            (false, true) => write!(f, "results found with {} slack", self.slack),
            (true, false) => write!(f, "results of the {} search space", self.space),
            (false, false) => write!(f, "results found with {} slack in the {} search space", self.slack, self.space),
        }
    }
}
