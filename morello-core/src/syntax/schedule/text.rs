//! Schedule text outside macros: parsing a string, with errors that name a line and column.

use super::{Schedule, parse_schedule};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// An error from parsing schedule text.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub struct ParseScheduleError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl FromStr for Schedule {
    type Err = ParseScheduleError;

    /// Parses schedule-language text, as [`Schedule`]'s `Display` prints it.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::syntax::nesting::parse_text(parse_schedule, text).map_err(|e| {
            let (line, column) = crate::syntax::span_location(e.span());
            ParseScheduleError { line, column, message: e.to_string() }
        })
    }
}
