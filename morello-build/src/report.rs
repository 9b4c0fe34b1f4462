//! Rendering build failures: file, line, column, the source line and a caret under the
//! offending token.

use std::fmt::Write;
use std::path::Path;

/// Formats every error in `error` (which may combine several) against `source`.
pub fn render(path: &Path, source: &str, error: &syn::Error) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = source.lines().collect();
    for e in error.clone() {
        let start = e.span().start();
        let end = e.span().end();
        let _ = writeln!(out, "error: {}:{}:{}: {}", path.display(), start.line, start.column + 1, e);
        if let Some(text) = start.line.checked_sub(1).and_then(|i| lines.get(i)) {
            let width = if end.line == start.line { end.column.saturating_sub(start.column).max(1) } else { 1 };
            let gutter = start.line.to_string().len();
            let _ = writeln!(out, "{:gutter$} |", "");
            let _ = writeln!(out, "{} | {text}", start.line);
            let _ = writeln!(out, "{:gutter$} | {}{}", "", " ".repeat(start.column), "^".repeat(width));
        }
    }
    out
}
