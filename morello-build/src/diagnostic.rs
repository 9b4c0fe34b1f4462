//! What a failed build reports: a list of diagnostics, kept as data and rendered once.

use std::fmt;
use std::path::PathBuf;

/// Why the kernels could not be built: every problem found, in order.
#[derive(Clone, Debug)]
pub struct BuildError {
    diagnostics: Vec<Diagnostic>,
}

/// One problem, or advice about the ones before it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Diagnostic {
    /// An error at a token of a source file.
    Source(SourceError),
    /// An error about the build as a whole.
    Build(String),
    /// Advice following the errors before it.
    Help(String),
}

/// An error at a place in a source file, with the line it is on.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SourceError {
    /// The file, as given to `Build::file`.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The text of the line, if the file has it.
    pub line_text: Option<String>,
    /// How many characters of the line the error covers (at least 1).
    pub width: usize,
}

impl SourceError {
    /// Every error in `error` (which may combine several), located in `source`, the text of
    /// `file`.
    pub fn from_syn(file: &std::path::Path, source: &str, error: &syn::Error) -> Vec<SourceError> {
        let lines: Vec<&str> = source.lines().collect();
        error
            .clone()
            .into_iter()
            .map(|e| {
                let (start, end) = (e.span().start(), e.span().end());
                let width = if end.line == start.line { end.column.saturating_sub(start.column).max(1) } else { 1 };
                SourceError {
                    file: file.to_owned(),
                    line: start.line,
                    column: start.column + 1,
                    message: e.to_string(),
                    line_text: start.line.checked_sub(1).and_then(|i| lines.get(i)).map(|t| (*t).to_owned()),
                    width,
                }
            })
            .collect()
    }
}

impl BuildError {
    /// An error of `diagnostics` (not empty).
    pub fn new(diagnostics: Vec<Diagnostic>) -> BuildError {
        debug_assert!(!diagnostics.is_empty(), "an error has something to say");
        BuildError { diagnostics }
    }

    /// An error about the build as a whole.
    pub fn build(message: impl Into<String>) -> BuildError {
        BuildError::new(vec![Diagnostic::Build(message.into())])
    }

    /// Everything the build found wrong, in order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// Collects diagnostics across a phase; the phase fails if any were found.
#[derive(Default)]
pub(crate) struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    /// Records `d`.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Records every error in `error`, located in `source`, the text of `file`.
    pub fn push_syn(&mut self, file: &std::path::Path, source: &str, error: &syn::Error) {
        self.0.extend(SourceError::from_syn(file, source, error).into_iter().map(Diagnostic::Source));
    }

    /// `Ok(value)` if nothing was recorded, the error otherwise.
    pub fn finish<T>(self, value: T) -> Result<T, BuildError> {
        if self.0.is_empty() { Ok(value) } else { Err(BuildError::new(self.0)) }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::Source(e) => {
                write!(f, "error: {}:{}:{}: {}", e.file.display(), e.line, e.column, e.message)?;
                if let Some(text) = &e.line_text {
                    let gutter = e.line.to_string().len();
                    write!(f, "\n{:gutter$} |", "")?;
                    write!(f, "\n{} | {text}", e.line)?;
                    write!(f, "\n{:gutter$} | {}{}", "", " ".repeat(e.column - 1), "^".repeat(e.width))?;
                }
                Ok(())
            }
            Diagnostic::Build(message) => write!(f, "error: {message}"),
            Diagnostic::Help(message) => write!(f, "help: {message}"),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}
