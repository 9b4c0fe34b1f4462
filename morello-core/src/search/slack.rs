//! Bounded-suboptimal search: an opt-in trade of optimality for search time.
//!
//! With a slack of `s` percent the search multiplies every cost lower bound it *estimates*
//! ([`crate::search::spec_lower_bound`]) by `w = 1 + s/100` and otherwise runs unchanged. The
//! result then costs at most `w` times the optimum (in the model's cost), at every Spec of the
//! implementation, by induction over the search:
//!
//! * every cost the search reports is the cost of a real implementation, so at least the
//!   optimum; every lower bound it uses is at most `w` times the optimum it bounds. Estimated
//!   bounds are `w` times a sound bound; a node's bound is affine in its children's with
//!   nonnegative coefficients and constant, and `a + Σ bᵢ·w·xᵢ <= w·(a + Σ bᵢ·xᵢ)`; a search that
//!   exceeds its budget reports the least of its rewrites' bounds.
//! * A rewrite whose children are solved (each within `w` of its optimum) costs at most `w`
//!   times its optimum, by the same affine argument. A rewrite pruned because its bound exceeds
//!   the best cost found so far has an optimum above `best / w`. So the best found is within
//!   `w` of every rewrite's optimum, and the factor does not compound with depth.
//! * Rebuilding follows the search. Optima agree wherever a memo box says they hold, so exact
//!   results are stretched over boxes of memory limits; results within a slack need not agree,
//!   and a decision rebuilt at other limits than it was found at could meet children other than
//!   the ones its cost was computed from. With a slack, decisions are therefore recorded at the
//!   limits they were found at only, and an implementation rebuilt from the memo table (or the
//!   database) costs exactly what the search claimed.
//!
//! Results found with slack are not optima, so they must not be mixed with exact ones: build
//! scripts keep them in a database file of their own (see `morello-build`).

use std::fmt;
use std::str::FromStr;

/// How far above the optimum (in model cost) a synthesized implementation may be, in percent
/// of the optimum. [`Slack::EXACT`] (the default) finds optima.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub struct Slack {
    percent: u32,
}

impl Slack {
    /// No slack: the search finds optimal implementations.
    pub const EXACT: Slack = Slack { percent: 0 };

    /// The largest slack accepted: 10× the optimum.
    pub const MAX_PERCENT: u32 = 900;

    /// A slack of `percent` percent, or `None` above [`Slack::MAX_PERCENT`].
    pub fn percent(percent: u32) -> Option<Slack> {
        (percent <= Self::MAX_PERCENT).then_some(Slack { percent })
    }

    /// The slack in percent of the optimum.
    pub fn as_percent(self) -> u32 {
        self.percent
    }

    /// Whether this is [`Slack::EXACT`].
    pub fn is_exact(self) -> bool {
        self.percent == 0
    }

    /// `bound` multiplied by `1 + percent / 100`, rounded down, never below `bound`.
    pub(crate) fn inflate(self, bound: u64) -> u64 {
        if self.is_exact() {
            // The exact search calls this for every child bound: no wide arithmetic there.
            return bound;
        }
        let inflated = u128::from(bound) * u128::from(100 + self.percent) / 100;
        u64::try_from(inflated).unwrap_or(u64::MAX).max(bound)
    }
}

impl fmt::Display for Slack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.percent)
    }
}

/// Why a slack could not be parsed.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("`{text}` is not a slack: expected a whole percentage from 0 to {max}, such as `25` or `25%`", max = Slack::MAX_PERCENT)]
pub struct ParseSlackError {
    /// The rejected text.
    pub text: String,
}

impl FromStr for Slack {
    type Err = ParseSlackError;

    /// Parses `25` or `25%`.
    fn from_str(text: &str) -> Result<Slack, ParseSlackError> {
        let error = || ParseSlackError { text: text.to_owned() };
        let digits = text.trim().strip_suffix('%').unwrap_or(text.trim());
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error());
        }
        digits.parse().ok().and_then(Slack::percent).ok_or_else(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_percentages_and_rejects_the_rest() {
        assert_eq!("25".parse(), Ok(Slack { percent: 25 }));
        assert_eq!(" 10% ".parse(), Ok(Slack { percent: 10 }));
        assert_eq!("0".parse(), Ok(Slack::EXACT));
        for bad in ["", "%", "-5", "2.5", "ten", "901", "99999999999"] {
            assert_eq!(bad.parse::<Slack>(), Err(ParseSlackError { text: bad.to_owned() }), "{bad:?}");
        }
    }

    #[test]
    fn inflation_never_lowers_a_bound() {
        let slack = Slack::percent(25).unwrap();
        assert_eq!(slack.inflate(400), 500);
        assert_eq!(slack.inflate(3), 3);
        assert_eq!(slack.inflate(u64::MAX), u64::MAX);
        assert_eq!(slack.inflate(u64::MAX - 1), u64::MAX);
        assert_eq!(Slack::EXACT.inflate(12345), 12345);
    }
}
