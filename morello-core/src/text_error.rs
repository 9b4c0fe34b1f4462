//! Errors in Spec or schedule text read at run time: a plain value (no tokens), so that the
//! layers that report them (schedules, Specs) need not depend on the parser.

/// An error from parsing Spec or schedule text: where it is and what is wrong.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseTextError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}
