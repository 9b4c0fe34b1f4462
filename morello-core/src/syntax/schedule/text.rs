//! Schedule text outside macros: parsing a string, with errors that name a line and column.

use super::{Schedule, parse_schedule};
use std::str::FromStr;

/// An error from parsing schedule text.
pub type ParseScheduleError = crate::syntax::ParseTextError;

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
